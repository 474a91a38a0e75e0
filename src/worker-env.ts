/**
 * How a worker process is started: glibc malloc settings and a V8 flag that only take effect from the
 * process's start (glibc reads its settings once; node takes this V8 flag only on its command line, not in
 * NODE_OPTIONS), so they are set by whoever starts the worker — `longhaul worker`, the benchmarks' and the
 * tests' worker processes — and by the Docker image (the Dockerfile repeats these values). A variable already
 * set in the environment wins. See docs/operations.md, "Worker memory".
 *
 * Kept apart from worker.ts so the CLI can use it without loading the worker.
 */
export const WORKER_MALLOC_DEFAULTS: Readonly<Record<string, string>> = {
  // The SDK core allocates from many threads; glibc's default of 8 arenas per core leaves each partly
  // empty and resident.
  MALLOC_ARENA_MAX: '2',
  // Fixed at glibc's initial value: blocks of 128 KiB and more get their own mapping, returned to the
  // system when freed. Left dynamic, glibc raises the threshold (up to 32 MiB) each time such a block is
  // freed, and from then on large short-lived blocks come from the arenas, which keep their pages resident
  // after they are freed (with 50 feeds the arenas grew by about 300 MB in two minutes).
  MALLOC_MMAP_THRESHOLD_: '131072',
};

/** `env` with the worker's malloc defaults under it (a variable `env` sets wins). */
export function workerProcessEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...WORKER_MALLOC_DEFAULTS, ...env };
}

/**
 * node's command-line flags for a worker process. `--optimize-for-size` makes V8 keep its heaps small (a
 * smaller young generation, slower heap growth) in both of the worker's isolates, the main thread's and the
 * workflow thread's. Under CPU load V8 otherwise lets the heaps grow far past what they hold: with 50 feeds
 * and one core taken by a busy loop, bench:feeds peaked at 394 MB RSS without it and 204 MB with it, for
 * about a fifth more worker CPU.
 */
export const WORKER_NODE_FLAGS: readonly string[] = ['--optimize-for-size'];

/** The worker flags this process was started without (what the worker's memory line warns about). */
export function missingWorkerNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return WORKER_NODE_FLAGS.filter((flag) => !execArgv.includes(flag));
}
