/**
 * Test harness: a real worker on its own task queue against the shared dev server, with activities
 * pointed at an in-process emulator.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, type Worker, type WorkerOptions } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { createLonghaulWorker } from '../../src/worker';
import type { ActivityDeps } from '../../src/activities';

let runtimeInstalled = false;
/** Installs a Runtime that logs warnings only (once per process; the first helper to run wins). */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by another helper in this process.
  }
}

export interface TestWorker {
  worker: Worker;
  client: Client;
  taskQueue: string;
  /** Resolves when the worker has stopped. */
  running: Promise<void>;
  /** Shuts the worker down and waits for it. */
  stop(): Promise<void>;
}

export async function testClient(): Promise<Client> {
  const connection = await Connection.connect({ address: inject('temporalAddress') });
  return new Client({ connection, namespace: inject('temporalNamespace') });
}

/** Starts a real worker on a fresh task queue (or the given one) with the given activity deps. */
export async function startTestWorker(deps: ActivityDeps, opts: { taskQueue?: string; workerOptions?: Partial<WorkerOptions>; dataConverter?: DataConverter } = {}): Promise<TestWorker> {
  quietRuntime();
  const taskQueue = opts.taskQueue ?? `test-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createLonghaulWorker({
    connection,
    namespace: inject('temporalNamespace'),
    taskQueue,
    deps,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    workerOptions: opts.workerOptions,
    dataConverter: opts.dataConverter,
  });
  const running = worker.run().finally(() => connection.close());
  const client = await testClient();
  return {
    worker,
    client,
    taskQueue,
    running,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await client.connection.close();
    },
  };
}
