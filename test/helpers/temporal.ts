/**
 * Test harness: a real worker on its own task queue against the shared dev server, with activities
 * pointed at an in-process emulator.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, LogTimestamp, type LogEntry, type WorkerOptions } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { createLonghaulWorker, type LonghaulWorker } from '../../src/worker';
import type { ActivityDeps } from '../../src/activities/context';

let runtimeInstalled = false;
/**
 * What the runtime logged in this process at WARN and above (the newest 1,000 entries, also printed as usual):
 * a test asserts what the worker's activities and workflows logged, e.g. by `meta.event` and `meta.workflowId`.
 */
export const runtimeLog: LogEntry[] = [];
/** Installs a Runtime that logs warnings only (once per process; the first helper to run wins). */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const printer = new DefaultLogger('WARN');
  const logger = new DefaultLogger('WARN', (entry) => {
    runtimeLog.push(entry);
    if (runtimeLog.length > 1_000) runtimeLog.shift();
    printer.log(entry.level, entry.message, { ...entry.meta, [LogTimestamp]: entry.timestampNanos });
  });
  try {
    Runtime.install({ logger });
  } catch {
    // Already installed by another helper in this process.
  }
}

/** A Temporal server other than the suite's shared dev server (e.g. one a test stops and starts again). */
export interface TemporalServer {
  address: string;
  namespace: string;
}

const sharedServer = (): TemporalServer => ({ address: inject('temporalAddress'), namespace: inject('temporalNamespace') });

export interface TestWorker {
  worker: LonghaulWorker;
  taskQueue: string;
  /** Resolves when the worker has stopped. */
  running: Promise<void>;
  /** Shuts the worker down and waits for it (again: a no-op). */
  stop(): Promise<void>;
}

/**
 * A client of the suite's dev server (or of `server`); the caller closes its connection. The server is up (the
 * global setup saw it answer): the connection's deadline only guards against a hang, so it is not the SDK's 10 s,
 * which a loaded machine's server missed (`npm run test:busy`, load average 21: "Failed to connect before the deadline").
 */
export async function testClient(server: TemporalServer = sharedServer()): Promise<Client> {
  const connection = await Connection.connect({ address: server.address, connectTimeout: '2 minutes' });
  return new Client({ connection, namespace: server.namespace });
}

export interface TestWorkerOptions {
  taskQueue?: string;
  workerOptions?: Partial<WorkerOptions>;
  dataConverter?: DataConverter;
  server?: TemporalServer;
}

/** Starts a real worker (the suite's bundle) on a fresh task queue, or the given one, with the given activity deps. */
export async function startTestWorker(deps: ActivityDeps, opts: TestWorkerOptions = {}): Promise<TestWorker> {
  quietRuntime();
  const server = opts.server ?? sharedServer();
  const taskQueue = opts.taskQueue ?? `test-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: server.address });
  const worker = await createLonghaulWorker({
    connection,
    namespace: server.namespace,
    taskQueue,
    deps,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    workerOptions: opts.workerOptions,
    dataConverter: opts.dataConverter,
  }).catch(async (err: unknown) => {
    await connection.close();
    throw err;
  });
  return runTestWorker(worker, taskQueue, () => connection.close());
}

/** Runs a created worker until `stop()`; `whenStopped` (e.g. closing the worker's own connection) runs after it. */
export function runTestWorker(worker: LonghaulWorker, taskQueue: string, whenStopped: () => Promise<void> = async () => undefined): TestWorker {
  const running = worker.run().finally(whenStopped);
  return {
    worker,
    taskQueue,
    running,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
