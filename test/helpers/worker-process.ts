/**
 * The longhaul worker as a separate PROCESS, started as a user does (the compiled src/worker.ts, as in the Docker
 * image, with the worker's malloc settings and node flags, `worker-env.ts`) against the shared dev server: for tests of behaviour that spans processes (the fleet's
 * shared rate budget), which in-process workers would fake by sharing memory; or the test stack's worker in a
 * process of its own, for a crash (SIGKILL).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';
import { WORKER_NODE_FLAGS, workerProcessEnv } from '../../src/worker-env';
import { freePort } from '../../src/temporal/dev-server';
import { TEST_TOKEN } from './emulator';
import type { TestStack } from './stack';
import type { WorkerChildInput } from './worker-child';
import { testGithubApiVersion } from './api-version';
import { compiled } from './compiled-entry';

const root = join(__dirname, '..', '..');

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  /** SIGINT (graceful) or SIGKILL, and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const started: WorkerProcess[] = [];

/**
 * @format milliseconds — how long a worker process may take to poll: a guard against a hang, not a budget. At load
 * average 26 (a `fleet-google-governor` run beside the upgrade test and other suites) one took over 90 s.
 */
export const WORKER_START_GUARD_MS = 300_000;

export interface WorkerProcessOptions {
  timeoutMs?: number;
  /** Preload `sent-requests.cjs`: the process writes a line for every HTTP request it sends (`sentRequests`). */
  recordSends?: boolean;
}

/**
 * Starts a worker process with `env` on top of the test's environment; resolves once it polls its task queue. Its
 * GitHub credential asks for the test file's API version (`api-version.ts`) unless `env` names one.
 */
export function startWorkerProcess(env: Record<string, string>, options: WorkerProcessOptions = {}): Promise<WorkerProcess> {
  const serverEnv = { TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace'), LONGHAUL_WORKFLOW_BUNDLE: inject('workflowBundlePath'), GITHUB_API_VERSION: testGithubApiVersion() };
  const preload = options.recordSends ? ['--require', join(__dirname, 'sent-requests.cjs')] : [];
  return spawnWorker([...preload, compiled(join(root, 'src', 'worker.ts'))], { ...serverEnv, ...env }, 'polling task queue', options.timeoutMs ?? WORKER_START_GUARD_MS);
}

/**
 * A worker process serving metrics on a free loopback port of its own. A port found free can be taken before the
 * process binds it (by any socket of the machine, an outgoing connection's included): the worker then serves no
 * metrics and says so, and is started again on another port (a hostile-caller run's scrape was refused that way).
 */
export async function startWorkerProcessWithMetrics(env: Record<string, string>, options: WorkerProcessOptions = {}): Promise<{ worker: WorkerProcess; metricsPort: number }> {
  for (let attempt = 1; ; attempt++) {
    const metricsPort = await freePort();
    const worker = await startWorkerProcess({ ...env, LONGHAUL_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` }, options);
    if (!worker.output().includes('serves no metrics')) return { worker, metricsPort };
    await worker.stop('SIGKILL');
    if (attempt >= 3) throw new Error(`three worker processes in a row could not bind their metrics port:\n${worker.output()}`);
  }
}

/**
 * The stack's worker, but in a process of its own (`worker-child.ts`: the stack's task queue, emulator and data
 * directory), for a test that kills it with SIGKILL, a crash no in-process worker can stage.
 */
export function startWorkerChild(stack: Pick<TestStack, 'emulator' | 'deps' | 'taskQueue'>, timeoutMs = WORKER_START_GUARD_MS): Promise<WorkerProcess> {
  const input: WorkerChildInput = {
    temporalAddress: inject('temporalAddress'),
    namespace: inject('temporalNamespace'),
    taskQueue: stack.taskQueue,
    workflowBundlePath: inject('workflowBundlePath'),
    apiUrl: stack.emulator.apiUrl,
    token: TEST_TOKEN,
    dataDir: stack.deps.dataDir,
    apiVersion: testGithubApiVersion(),
  };
  return spawnWorker([compiled(join(__dirname, 'worker-child.ts')), JSON.stringify(input)], {}, 'ready', timeoutMs);
}

/** Spawns `node <worker flags> <args>` (compiled JavaScript: `compiled-js.ts`) and resolves once its output shows `readyText`. */
async function spawnWorker(args: string[], env: Record<string, string>, readyText: string, timeoutMs: number): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, ...args], { cwd: root, env: workerProcessEnv({ ...process.env, ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const check = () => {
      if (output.includes(readyText)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited early with code ${code}:\n${output}`));
    });
  });
  const proc: WorkerProcess = {
    child,
    pid: child.pid!,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGINT') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
    },
  };
  started.push(proc);
  return proc;
}

/** Stops every worker process a test started (afterEach). */
export async function stopWorkerProcesses(): Promise<void> {
  await Promise.all(started.splice(0).map((p) => p.stop('SIGKILL')));
}
