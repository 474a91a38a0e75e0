/**
 * The integration-test stack in one call: an in-process emulator, activity deps pointing at it, a real worker on a
 * fresh task queue and a client — on the suite's shared dev server, on another server (`server`), or on a
 * time-skipping test environment when `env` is given. `stop()` tears down all of it; `useStack()` does the
 * before/after wiring for a file or describe block, `useStackPerTest()` for stacks each test starts for itself.
 *
 *   const stack = useStack({ emulator: { migrations: { exportMs: 500 } } });
 *   it('…', async () => { await stack.client.workflow.execute(orgMigration, { taskQueue: stack.taskQueue, … }); });
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkerOptions } from '@temporalio/worker';
import type { Emulator, EmulatorOptions } from '@longhaul/emulator';
import type { ActivityDeps } from '../../src/activities/context';
import { emulatorDeps, startTestEmulator } from './emulator';
import { startTestWorker, testClient, type TemporalServer } from './temporal';
import { createTimeSkippingEnv, startTimeSkippingWorker } from './time-skipping';
import { cleanUp } from './schedules';
import { clockSyncInterceptor, skippingClock, wallClock, type TestClock } from './test-clock';

type DepsOverrides = Parameters<typeof emulatorDeps>[1];

export interface StackOptions {
  emulator?: EmulatorOptions;
  /** Retry policies or token for the activity clients. */
  deps?: DepsOverrides;
  taskQueue?: string;
  workerOptions?: Partial<WorkerOptions>;
  /** The worker's data converter (e.g. payload codecs); the stack's client stays a plain one. */
  dataConverter?: DataConverter;
  /** Another Temporal server than the suite's shared dev server. */
  server?: TemporalServer;
  /**
   * Run on this time-skipping environment instead of the shared dev server (the caller owns and tears it down).
   * The emulator, the HTTP clients and the activities then share the environment's time (`stack.clock`).
   */
  env?: TestWorkflowEnvironment;
  /** Schedules and workflows the file leaves behind, known up front: see `cleanUpOnStop`. */
  cleanUp?: { schedules?: string[]; workflows?: string[] };
  /** `false`: no worker until `startWorker()` (while the test runs one of its own on the task queue). Default true. */
  worker?: boolean;
}

/** One more in-process worker on the stack's emulator, stopped with the stack if the test did not stop it. */
export interface ExtraWorker {
  taskQueue: string;
  stop(): Promise<void>;
}

export interface TestStack {
  emulator: Emulator;
  /** The emulator's time: the wall clock, or the time-skipping environment's (`sync()` after a skip). */
  clock: TestClock;
  /** The time-skipping environment the stack runs on, if any. */
  env?: TestWorkflowEnvironment;
  deps: ActivityDeps;
  client: Client;
  taskQueue: string;
  /** Starts the stack's worker on its task queue (when it was started with `worker: false`, or stopped). */
  startWorker(workerOptions?: Partial<WorkerOptions>): Promise<void>;
  /** Stops the stack's worker (as a crash or deploy would); the client and the emulator stay. */
  stopWorker(): Promise<void>;
  /** Stops the worker and starts a fresh one on the same task queue. */
  restartWorker(workerOptions?: Partial<WorkerOptions>): Promise<void>;
  /**
   * Another worker on this emulator: its own deps (e.g. a different retry policy; a fresh data directory), on a
   * fresh task queue unless one is given.
   */
  addWorker(options?: { deps?: DepsOverrides; taskQueue?: string }): Promise<ExtraWorker>;
  /**
   * Left-overs for `stop()`: the schedules are deleted before the worker stops (no new run starts), the workflows
   * (e.g. feed cursors) terminated after it (no run is left waiting for one).
   */
  cleanUpOnStop(ids: { schedules?: string[]; workflows?: string[] }): void;
  /** Deletes the left-overs, stops every worker, then the emulator; closes the client's connection when the stack opened it. */
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions = {}): Promise<TestStack> {
  const { env } = options;
  const clock = env ? skippingClock(env) : wallClock;
  const emulator = await startTestEmulator(env ? { clock: clock.now, clockSync: clock.sync, ...options.emulator } : options.emulator);
  let client: Client | undefined;
  try {
    const depsFor = (overrides: DepsOverrides | undefined) => emulatorDeps(emulator, env ? { clock: clock.now, ...overrides } : overrides);
    const deps = await depsFor(options.deps);
    client = env ? (env.client as Client) : await testClient(options.server);
    const ownsClient = !env;
    const taskQueue = options.taskQueue ?? `${env ? 'ts' : 'test'}-${randomUUID()}`;
    const launch = (workerDeps: ActivityDeps, queue: string, workerOptions: Partial<WorkerOptions> | undefined): Promise<ExtraWorker> =>
      env
        ? startTimeSkippingWorker(env, workerDeps, { taskQueue: queue, workerOptions: withClockSync(workerOptions, clock) })
        : startTestWorker(workerDeps, { taskQueue: queue, workerOptions, dataConverter: options.dataConverter, server: options.server });

    let worker: ExtraWorker | undefined;
    const extras: ExtraWorker[] = [];
    const schedules: string[] = [];
    const workflows: string[] = [];
    const stack: TestStack = {
      emulator,
      clock,
      env,
      deps,
      client,
      taskQueue,
      startWorker: async (workerOptions = options.workerOptions) => {
        if (worker) throw new Error('the stack’s worker is running: stopWorker() first');
        worker = await launch(deps, taskQueue, workerOptions);
      },
      stopWorker: async () => {
        const running = worker;
        worker = undefined;
        await running?.stop();
      },
      restartWorker: async (workerOptions) => {
        await stack.stopWorker();
        await stack.startWorker(workerOptions);
      },
      addWorker: async ({ deps: overrides, taskQueue: queue } = {}) => {
        const extra = await launch(await depsFor(overrides ?? options.deps), queue ?? `${taskQueue}-${extras.length + 1}`, options.workerOptions);
        extras.push(extra);
        return extra;
      },
      cleanUpOnStop: (ids) => {
        schedules.push(...(ids.schedules ?? []));
        workflows.push(...(ids.workflows ?? []));
      },
      stop: async () => {
        await cleanUp(stack.client, schedules);
        await stack.stopWorker();
        // An extra worker's stop() is a no-op when the test stopped it already.
        for (const extra of extras) await extra.stop();
        await cleanUp(stack.client, [], workflows);
        if (ownsClient) await stack.client.connection.close();
        await emulator.close();
      },
    };
    if (options.cleanUp) stack.cleanUpOnStop(options.cleanUp);
    if (options.worker !== false) await stack.startWorker();
    return stack;
  } catch (err) {
    if (client && !options.env) await client.connection.close();
    await emulator.close();
    throw err;
  }
}

/** The worker options with an activity interceptor that reads the clock afresh before each activity. */
function withClockSync(workerOptions: Partial<WorkerOptions> | undefined, clock: TestClock): Partial<WorkerOptions> {
  const interceptors = workerOptions?.interceptors;
  return { ...workerOptions, interceptors: { ...interceptors, activity: [clockSyncInterceptor(clock), ...(interceptors?.activity ?? [])] } };
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

/**
 * `useStack` on a time-skipping test environment of the file's own (`stack.env`, torn down after the stack): the
 * emulator and the activities run on its time, so the file's waits cost what its workflows do, not what their
 * timers say. Time skipping is global to the environment: tests in the file run one at a time. `longRun`: see
 * `createTimeSkippingEnv`.
 */
export function useTimeSkippingStack(options: Omit<StackOptions, 'env' | 'server'> & { longRun?: boolean } = {}): TestStack & { env: TestWorkflowEnvironment } {
  const { longRun, ...stackOptions } = options;
  const env = useTimeSkippingEnv({ longRun });
  const holder = {} as TestStack & { env: TestWorkflowEnvironment };
  let started: TestStack | undefined;
  beforeAll(async () => {
    started = await startStack({ ...stackOptions, env: env() });
    Object.assign(holder, started);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return holder;
}

/** A time-skipping environment for the file: created in `beforeAll`, torn down in `afterAll` (after the stacks' own hooks). */
function useTimeSkippingEnv(opts: { longRun?: boolean } = {}): () => TestWorkflowEnvironment {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await createTimeSkippingEnv((m) => console.log(`[time-skipping] ${m}`), opts);
  });
  afterAll(async () => {
    await env?.teardown();
  });
  return () => {
    if (!env) throw new Error('the time-skipping environment starts in beforeAll');
    return env;
  };
}

/**
 * Stacks that tests start for themselves (each with its own emulator options), every one stopped after its test.
 * `timeSkipping`: all of them on one time-skipping environment of the file's own (see `useTimeSkippingStack`).
 */
export function useStackPerTest(opts: { timeSkipping?: boolean } = {}): (options?: StackOptions) => Promise<TestStack> {
  const env = opts.timeSkipping ? useTimeSkippingEnv() : undefined;
  let started: TestStack[] = [];
  afterEach(async () => {
    const stopping = started;
    started = [];
    for (const stack of stopping) await stack.stop();
  });
  return async (options) => {
    const stack = await startStack(env ? { ...options, env: env() } : options);
    started.push(stack);
    return stack;
  };
}
