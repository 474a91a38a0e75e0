/**
 * Time-skipping tests: the real Temporal test server (Java, fetched from Maven Central by
 * `test/servers/test-server.ts`) through the SDK's `TestWorkflowEnvironment.createTimeSkipping`, and a real
 * longhaul worker on it. Timers of hours pass in milliseconds of wall time while a test awaits a result.
 *
 * One environment per test file (time skipping is global to a server): tests in a file run one at a time.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, connect } from 'node:net';
import { inject } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkerOptions } from '@temporalio/worker';
import { ensureTestServer } from '../servers/test-server';
import { createLonghaulWorker } from '../../src/worker';
import type { ActivityDeps } from '../../src/activities/context';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import { quietRuntime, runTestWorker, type TestWorker } from './temporal';

/**
 * Starts a time-skipping test server. The SDK's own start (`createTimeSkipping` with an `existing-path`
 * executable) gives the spawned server 5 s to answer, a deadline no retry makes safe: on a loaded 2-core machine
 * (`npm run test:busy`, load average 15–20) three starts in a row missed it and every case of six files was
 * skipped. So the server is started here and waited for as long as a JVM takes to open its port (the deadline only
 * guards against a hang), and the environment is built on it with the SDK's own factory, as `createTimeSkipping`
 * builds it on the server it spawned (`supportsTimeSkipping`: the test service, the time-skipping client).
 *
 * `longRun`: the JVM may use its optimising compiler (C2). The launcher limits it to C1 for a fast start, which
 * costs a run of tens of thousands of workflow tasks most of its speed: a day of 1-second polls went from ~780
 * to ~470 polls a wall minute with C1 and ran at ~1,000–3,900 with C2 on the same machine.
 */
export async function createTimeSkippingEnv(log: (m: string) => void = () => undefined, opts: { longRun?: boolean } = {}): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  const path = await ensureTestServer(log);
  const server = await startTestServer(path, opts.longRun ? '-XX:TieredStopAtLevel=4' : '');
  try {
    const env = await createOnServer({ server: { type: 'existing' }, address: server.address, namespace: 'default', supportsTimeSkipping: true });
    const teardown = env.teardown.bind(env);
    // The environment does not own a server it did not start: this one is stopped with it.
    env.teardown = async () => {
      await teardown();
      await server.stop();
    };
    countTimeSkippingUnlocks(env);
    await registerSearchAttributes(env);
    return env;
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/**
 * `TestWorkflowEnvironment.create`: the factory `createTimeSkipping` and `createFromExistingServer` both call
 * (private in the SDK's types; 1.24.0 is pinned exactly). Only it can pair an existing server with time skipping.
 */
const createOnServer = (
  TestWorkflowEnvironment as unknown as {
    create(opts: { server: { type: 'existing' }; address: string; namespace: string; supportsTimeSkipping: true }): Promise<TestWorkflowEnvironment>;
  }
).create.bind(TestWorkflowEnvironment);

/** How long a test server may take to open its port: a guard against a hang, not a figure of the machine's speed. */
const TEST_SERVER_START_DEADLINE_MS = 5 * 60_000;

/** The launcher (`temporal-test-server <port>`, skipping locked as the SDK expects) on a free loopback port, once it accepts connections. */
async function startTestServer(launcher: string, javaOpts: string): Promise<{ address: string; stop(): Promise<void> }> {
  const port = await freePort();
  const env = { ...process.env, LONGHAUL_TEST_SERVER_JAVA_OPTS: `${process.env.LONGHAUL_TEST_SERVER_JAVA_OPTS ?? ''} ${javaOpts}`.trim() };
  const child = spawn(launcher, [String(port)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
  // A test process that dies leaves no JVM behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
  };
  const deadline = Date.now() + TEST_SERVER_START_DEADLINE_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the test server exited with code ${child.exitCode} before opening port ${port}:\n${stderr}`);
    if (await accepts(port)) return { address: `127.0.0.1:${port}`, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the test server did not open port ${port} within ${TEST_SERVER_START_DEADLINE_MS / 1000} s:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
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
