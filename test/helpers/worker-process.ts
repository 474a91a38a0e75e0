/**
 * The longhaul worker as a separate PROCESS, started as a user does (`npm run worker`, i.e. tsx on
 * src/worker.ts) against the shared dev server: for tests of behaviour that spans processes (the fleet's
 * shared rate budget), which in-process workers would fake by sharing memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';

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

/** Starts a worker process with `env` on top of the test's environment; resolves once it polls its task queue. */
export async function startWorkerProcess(env: Record<string, string>, timeoutMs = 90_000): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'worker.ts')], {
    cwd: root,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      LONGHAUL_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const check = () => {
      if (output.includes('polling task queue')) {
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
