/**
 * Time-skipping tests: the real Temporal test server (Java, fetched from Maven Central by
 * `src/temporal/test-server.ts`) through the SDK's `TestWorkflowEnvironment.createTimeSkipping`, and a real
 * longhaul worker on it. Timers of hours pass in milliseconds of wall time while a test awaits a result.
 *
 * One environment per test file (time skipping is global to a server): tests in a file run one at a time.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkerOptions } from '@temporalio/worker';
import { ensureTestServer } from '../../src/temporal/test-server';
import { createLonghaulWorker } from '../../src/worker';
import type { ActivityDeps } from '../../src/activities/context';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import { quietRuntime, runTestWorker, type TestWorker } from './temporal';

const START_ATTEMPTS = 3;

/**
 * Starts a time-skipping test server. The SDK gives a spawned server 5 s to answer; a JVM on a loaded 2-core
 * machine can miss that once, so a start-up timeout is retried (the second start finds the jars in the page cache).
 *
 * `longRun`: the JVM may use its optimising compiler (C2). The launcher limits it to C1 for a fast start, which
 * costs a run of tens of thousands of workflow tasks most of its speed: a day of 1-second polls went from ~780
 * to ~470 polls a wall minute with C1 and ran at ~1,000–3,900 with C2 on the same machine.
 */
export async function createTimeSkippingEnv(log: (m: string) => void = () => undefined, opts: { longRun?: boolean } = {}): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  const path = await ensureTestServer(log);
  // The launcher reads this when the SDK spawns it (a later -XX flag wins over the launcher's own).
  if (opts.longRun) process.env.LONGHAUL_TEST_SERVER_JAVA_OPTS = `${process.env.LONGHAUL_TEST_SERVER_JAVA_OPTS ?? ''} -XX:TieredStopAtLevel=4`.trim();
  for (let attempt = 1; ; attempt++) {
    try {
      const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
      countTimeSkippingUnlocks(env);
      await registerSearchAttributes(env);
      return env;
    } catch (err) {
      const startupTimeout = /did not start within/i.test((err as Error).message);
      if (!startupTimeout || attempt >= START_ATTEMPTS) throw err;
      log(`test server start-up timed out (attempt ${attempt} of ${START_ATTEMPTS}); retrying`);
    }
  }
}

/**
 * The SDK's client unlocks time skipping for every `result()` it awaits and locks it again after; the test server
 * keeps one lock count and fails an unlock past zero (with a message of every lock event, larger than gRPC's
 * header limit). So awaiting several results at once (`Promise.all(handles.map((h) => h.result()))`) breaks the
 * server's time. Here the client's unlocks and locks are counted: only the first of concurrent unlocks and the
 * last lock reach the server, one after another.
 */
function countTimeSkippingUnlocks(env: TestWorkflowEnvironment): void {
  const service = env.connection.testService;
  if (!service) throw new Error('a time-skipping environment has a test service');
  const unlock = service.unlockTimeSkipping.bind(service);
  const lock = service.lockTimeSkipping.bind(service);
  let awaiting = 0;
  let last: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(call: () => Promise<T>): Promise<T> => {
    const next = last.then(call, call);
    last = next.catch(() => undefined);
    return next;
  };
  service.unlockTimeSkipping = ((request: Parameters<typeof unlock>[0]) => inTurn(async () => (awaiting++ === 0 ? unlock(request) : {}))) as typeof unlock;
  service.lockTimeSkipping = ((request: Parameters<typeof lock>[0]) => inTurn(async () => (--awaiting === 0 ? lock(request) : {}))) as typeof lock;
}

/** Our workflows upsert longhaul's search attributes, which a server must know first (as the dev server is told at start). */
async function registerSearchAttributes(env: TestWorkflowEnvironment): Promise<void> {
  const indexedValueType: Record<string, number> = { TEXT: 1, KEYWORD: 2, INT: 3, DOUBLE: 4, BOOL: 5, DATETIME: 6, KEYWORD_LIST: 7 };
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(ALL_SEARCH_ATTRIBUTES.map((key) => [key.name, indexedValueType[key.type]])),
  });
}

export type TimeSkippingWorker = TestWorker;

/** A real longhaul worker (the suite's bundle) on the environment's connection and a fresh task queue. */
export async function startTimeSkippingWorker(
  env: TestWorkflowEnvironment,
  deps: ActivityDeps,
  opts: { taskQueue?: string; workerOptions?: Partial<WorkerOptions> } = {},
): Promise<TimeSkippingWorker> {
  const taskQueue = opts.taskQueue ?? `ts-${randomUUID()}`;
  const worker = await createLonghaulWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    deps,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    workerOptions: opts.workerOptions,
  });
  // The connection belongs to the environment: `env.teardown()` closes it.
  return runTestWorker(worker, taskQueue);
}
