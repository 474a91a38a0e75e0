/**
 * The integration-test stack in one call: an in-process emulator, activity deps pointing at it, a real worker on a
 * fresh task queue and a client — on the suite's shared dev server, or on a time-skipping test environment when
 * `env` is given. `stop()` tears down all of it; `useStack()` does the before/after wiring for a file.
 *
 *   const stack = useStack({ emulator: { migrations: { exportMs: 500 } } });
 *   it('…', async () => { await stack.client.workflow.execute(orgMigration, { taskQueue: stack.taskQueue, … }); });
 */
import { afterAll, beforeAll } from 'vitest';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkerOptions } from '@temporalio/worker';
import type { Emulator, EmulatorOptions } from '../../src/emulator/emulator';
import type { ActivityDeps } from '../../src/activities';
import { emulatorDeps, startTestEmulator } from './emulator';
import { startTestWorker } from './temporal';
import { startTimeSkippingWorker } from './time-skipping';

export interface StackOptions {
  emulator?: EmulatorOptions;
  /** Retry policies or token for the activity clients. */
  deps?: Parameters<typeof emulatorDeps>[1];
  taskQueue?: string;
  workerOptions?: Partial<WorkerOptions>;
  /** Run on this time-skipping environment instead of the shared dev server (the caller owns and tears it down). */
  env?: TestWorkflowEnvironment;
}

export interface TestStack {
  emulator: Emulator;
  deps: ActivityDeps;
  client: Client;
  taskQueue: string;
  /** Stops the worker (as a crash or deploy would) and starts a fresh one on the same task queue. */
  restartWorker(workerOptions?: Partial<WorkerOptions>): Promise<void>;
  /** Stops the worker, then the emulator; closes the client's connection when the stack opened it. */
  stop(): Promise<void>;
}

interface RunningWorker {
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions = {}): Promise<TestStack> {
  const emulator = await startTestEmulator(options.emulator);
  try {
    const deps = await emulatorDeps(emulator, options.deps);
    const { env } = options;
    const launch = async (taskQueue: string | undefined, workerOptions: Partial<WorkerOptions> | undefined) => {
      if (env) {
        const tw = await startTimeSkippingWorker(env, deps, { taskQueue, workerOptions });
        return { worker: tw as RunningWorker, taskQueue: tw.taskQueue, client: env.client as Client, closeClient: async () => undefined };
      }
      const tw = await startTestWorker(deps, { taskQueue, workerOptions });
      // tw.stop() would also close tw.client, which the stack keeps across worker restarts.
      const stopWorker = async () => {
        if (tw.worker.getState() === 'RUNNING') tw.worker.shutdown();
        await tw.running;
      };
      return { worker: { stop: stopWorker }, taskQueue: tw.taskQueue, client: tw.client, closeClient: () => tw.client.connection.close() };
    };
    const first = await launch(options.taskQueue, options.workerOptions);
    let worker = first.worker;
    const stack: TestStack = {
      emulator,
      deps,
      client: first.client,
      taskQueue: first.taskQueue,
      restartWorker: async (workerOptions = options.workerOptions) => {
        await worker.stop();
        const next = await launch(stack.taskQueue, workerOptions);
        await next.closeClient();
        worker = next.worker;
      },
      stop: async () => {
        await worker.stop();
        await first.closeClient();
        await emulator.close();
      },
    };
    return stack;
  } catch (err) {
    await emulator.close();
    throw err;
  }
}

/**
 * One stack for the enclosing file or describe block: started in `beforeAll`, stopped in `afterAll`. The returned
 * object is filled in when `beforeAll` has run (read its fields inside tests, not at collection time).
 */
export function useStack(options: StackOptions = {}): TestStack {
  const holder = {} as TestStack;
  let started: TestStack | undefined;
  beforeAll(async () => {
    started = await startStack(options);
    Object.assign(holder, started);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return holder;
}
