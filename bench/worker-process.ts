/**
 * The worker as a separate process for benchmarks, so its CPU and RSS are its own and measured from
 * `/proc` (Linux), not mixed with the emulator's or the bench driver's.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WORKER_NODE_FLAGS, workerProcessEnv } from '../src/worker-env';

/** Resident set size of a process, in KiB (0 when it cannot be read). */
export async function rssKb(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** User and system CPU time a process has used, in seconds (0 when it cannot be read). */
export async function cpuTimes(pid: number): Promise<{ user: number; system: number }> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return { user: 0, system: 0 };
  }
}

/** User + system CPU time a process has used, in seconds (0 when it cannot be read). */
export async function cpuSeconds(pid: number): Promise<number> {
  const { user, system } = await cpuTimes(pid);
  return user + system;
}

const root = join(__dirname, '..');

/**
 * Compiles the sources to `dist/` (as the Docker image does), so the measured worker runs plain
 * JavaScript: under tsx the same worker idles about 80 MB higher (the loader's own memory).
 */
export function buildWorker(): string {
  // The emulator workspace package first (`npm run build` does both): the compiled CLI loads its dist/.
  for (const project of [join(root, 'packages', 'emulator', 'tsconfig.build.json'), join(root, 'tsconfig.build.json')]) {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { stdio: 'inherit' });
  }
  return join(root, 'dist', 'worker.js');
}

/** The worker's node flags, or what BENCH_WORKER_NODE_FLAGS says instead, for a baseline ('' for none). */
export function benchWorkerNodeFlags(): readonly string[] {
  return process.env.BENCH_WORKER_NODE_FLAGS?.split(' ').filter(Boolean) ?? WORKER_NODE_FLAGS;
}

/**
 * Starts the compiled worker with `env` added to this process's environment; resolves once it polls. Its stderr
 * goes to this process's, or to the file `options.logFile` (appended, stdout too) when a driver prints a report.
 */
export async function startWorkerProcess(env: Record<string, string>, options: { logFile?: string } = {}): Promise<{ child: ChildProcess; pid: number; stop(): Promise<void> }> {
  const entry = join(root, 'dist', 'worker.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: call buildWorker() first`);
  const child = spawn(process.execPath, [...benchWorkerNodeFlags(), entry], {
    // As `longhaul worker` and the Docker image run it: with the worker's malloc settings and node flags.
    env: workerProcessEnv({ ...process.env, ...env }),
    stdio: ['ignore', 'pipe', options.logFile ? 'pipe' : 'inherit'],
  });
  if (options.logFile) {
    const log = createWriteStream(options.logFile, { flags: 'a' });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
  }
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('polling task queue')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with code ${code}`)));
  });
  return {
    child,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
    },
  };
}
