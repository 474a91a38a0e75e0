/**
 * The worker checks its namespace before it polls, on the real dev server. A namespace set up by the release
 * before 0.2.0 has five of longhaul's search attributes (no LonghaulMigrationGuid): unchecked, the first
 * workflow task after a migration's export starts fails for ever (BadSearchAttributes). Checked, the worker
 * registers what is missing (when allowed) or refuses to start with exit code 6 and never polls; `longhaul doctor`
 * reports both namespaces.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Connection, type Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { ALL_SEARCH_ATTRIBUTES, LonghaulMigrationGuid, LonghaulProgress } from '../../src/common/search-attributes';
import { checkNamespace, NamespaceNotReadyError, prepareNamespace, setupNamespace } from '../../src/temporal/setup-namespace';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { releaseVersion } from '../../src/release';
import { checkNamespaceBeforePolling } from '../../src/worker';
import type { DoctorReport } from '../../src/cli/doctor';
import { testGithubApiVersion } from '../helpers/api-version';
import { emulatorDeps, TEST_TOKEN } from '../helpers/emulator';
import { useFleetTeardown } from '../helpers/fleet';
import { startTestWorker, testClient } from '../helpers/temporal';
import { startWorkerProcess } from '../helpers/worker-process';
import { runLonghaul } from '../helpers/starter';
import { eventually, waitFor } from '../helpers/wait';
import { FAST_POLL } from '../helpers/presets';

const fleet = useFleetTeardown();
const { IndexedValueType, TaskQueueType } = temporal.api.enums.v1;
const address = () => inject('temporalAddress');
const clients: Client[] = [];
afterAll(async () => Promise.all(clients.map((c) => c.connection.close())));
// The wedge test's worker fails its workflow task on purpose: the SDK core's warning for each attempt stays off
// stderr (this file's process installs its runtime first; `startTestWorker` then keeps it).
beforeAll(() => {
  Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
});

/** A client of `namespace` on the shared dev server, closed after the file. */
async function clientOf(namespace: string): Promise<Client> {
  const client = await testClient({ address: address(), namespace });
  clients.push(client);
  return client;
}

/**
 * A fresh namespace as the release before 0.2.0 set it up: every search attribute but LonghaulMigrationGuid
 * (`types` overrides a type, to stage a wrong one).
 */
async function previousReleaseNamespace(types: Record<string, temporal.api.enums.v1.IndexedValueType> = {}): Promise<string> {
  const namespace = `longhaul-prev-${randomUUID().slice(0, 8)}`;
  const connection = await Connection.connect({ address: address() });
  try {
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(86_400_000) });
    const previous = ALL_SEARCH_ATTRIBUTES.filter((key) => key.name !== LonghaulMigrationGuid.name);
    const searchAttributes = Object.fromEntries(
      previous.map((key) => [key.name, types[key.name] ?? (key.type === 'INT' ? IndexedValueType.INDEXED_VALUE_TYPE_INT : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)]),
    );
    // A namespace just registered reaches every server role within about 10 s.
    await eventually(() => connection.operatorService.addSearchAttributes({ namespace, searchAttributes }).then(() => true), 'the new namespace to accept search attributes', 60_000, 500);
    await waitFor('the namespace to be known', () => checkNamespace(connection, namespace), (c) => c.exists, 60_000, 500);
  } finally {
    await connection.close();
  }
  return namespace;
}

const migrationInput = { org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL };

/** The workflow task failures in a workflow's history, with their messages. */
async function workflowTaskFailures(client: Client, workflowId: string): Promise<string[]> {
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  return (events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).map((e) => e.workflowTaskFailedEventAttributes!.failure?.message ?? '');
}

/** The env of a worker process on `namespace`, against the emulator, with no fleet governor. */
function workerEnv(namespace: string, apiUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TEMPORAL_NAMESPACE: namespace,
    LONGHAUL_TASK_QUEUE: `ns-check-${randomUUID()}`,
    GITHUB_API_URL: apiUrl,
    GITHUB_TOKEN: TEST_TOKEN,
    LONGHAUL_RATE_GOVERNOR: 'off',
    LONGHAUL_METRICS_ADDRESS: 'off',
    LONGHAUL_DATA_DIR: `/tmp/longhaul-ns-check-${randomUUID().slice(0, 8)}`,
    ...extra,
  };
}

describe("a namespace set up by the release before 0.2.0 (no LonghaulMigrationGuid)", () => {
  it('wedges a migration when a worker polls it unchecked: its workflow task fails with BadSearchAttributes, again and again', async () => {
    const namespace = await previousReleaseNamespace();
    const client = await clientOf(namespace);
    const emulator = await fleet.emulator({ migrations: { exportMs: 1_000, archiveBytes: 2_048 } });
    // createLonghaulWorker alone, as the worker before 0.2.0 started: no check.
    const worker = await startTestWorker(await emulatorDeps(emulator), { server: { address: address(), namespace } });
    fleet.closeLater(() => worker.stop());
    const handle = await client.workflow.start(orgMigration, { taskQueue: worker.taskQueue, workflowId: `wedge-${randomUUID()}`, args: [migrationInput] });
    fleet.closeLater(() => handle.terminate('test over').catch(() => undefined));
    const failures = await waitFor('a workflow task failure', () => workflowTaskFailures(client, handle.workflowId), (f) => f.length > 0, 60_000, 250);
    expect(failures[0]).toMatch(`BadSearchAttributes: Namespace ${namespace} has no mapping defined for search attribute LonghaulMigrationGuid`);
    // The server keeps retrying the same task: the attempt count climbs and the workflow never moves on.
    const attempt = await waitFor(
      'a third attempt',
      async () => (await client.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId: handle.workflowId } })).pendingWorkflowTask?.attempt ?? 0,
      (n) => n >= 3,
      60_000,
      250,
    );
    expect(attempt).toBeGreaterThanOrEqual(3);
  });

  it('a worker allowed to register adds LonghaulMigrationGuid before it polls, and a migration finishes with no workflow task failed', async () => {
    const namespace = await previousReleaseNamespace();
    const client = await clientOf(namespace);
    const emulator = await fleet.emulator({ migrations: { exportMs: 1_000, archiveBytes: 2_048 } });
    const env = workerEnv(namespace, emulator.apiUrl, { LONGHAUL_REGISTER_SEARCH_ATTRIBUTES: 'on' });
    const worker = await startWorkerProcess(env);
    expect(worker.output()).toContain(`[namespace] registered search attributes LonghaulMigrationGuid on namespace ${namespace}`);
    expect(worker.output()).toContain(`longhaul worker ${releaseVersion()} polling task queue`);
    expect((await checkNamespace(client.connection, namespace)).ready).toBe(true);

    const handle = fleet.track(await client.workflow.start(orgMigration, { taskQueue: env.LONGHAUL_TASK_QUEUE, workflowId: `registered-${randomUUID()}`, args: [migrationInput] }));
    const result = await handle.result();
    expect(result.state).toBe('exported');
    expect(await workflowTaskFailures(client, handle.workflowId)).toEqual([]);
    const { workflowExecutionInfo } = await client.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId: handle.workflowId } });
    expect(Object.keys(workflowExecutionInfo?.searchAttributes?.indexedFields ?? {})).toContain(LonghaulMigrationGuid.name);
  });

  it('`longhaul worker` on a configured server refuses to start: exit code 6, the missing attribute and `longhaul setup-namespace` named, no poll', async () => {
    const namespace = await previousReleaseNamespace();
    const client = await clientOf(namespace);
    const emulator = await fleet.emulator();
    const env = workerEnv(namespace, emulator.apiUrl);
    const run = await runLonghaul(['worker'], env.LONGHAUL_TASK_QUEUE, env);
    expect(run.code, run.stderr).toBe(6);
    expect(run.stderr).toContain(`namespace ${namespace} lacks search attributes longhaul ${releaseVersion()} needs: LonghaulMigrationGuid (Keyword)`);
    expect(run.stderr).toContain('`longhaul setup-namespace`');
    expect(run.stdout).not.toContain('polling task queue');
    // Nothing polled the task queue, and nothing was registered.
    for (const taskQueueType of [TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY]) {
      const { pollers } = await client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: env.LONGHAUL_TASK_QUEUE }, taskQueueType });
      expect(pollers ?? []).toEqual([]);
    }
    expect((await checkNamespace(client.connection, namespace)).missing).toEqual([LonghaulMigrationGuid.name]);
  });

  it('registration defaults to on with the embedded dev server and off on a configured one; the setting overrides both', async () => {
    const connection = await NativeConnection.connect({ address: address() });
    fleet.closeLater(() => connection.close());
    const logged: string[] = [];
    const log = (m: string) => logged.push(m);
    // The embedded server as `resolveTemporal` describes one it found already answering (a server it did not start).
    const embedded = { address: address(), namespace: 'default', owned: false, stop: async () => undefined };

    const configured = await previousReleaseNamespace();
    await expect(checkNamespaceBeforePolling(connection, { namespace: configured }, {}, log)).rejects.toThrow(NamespaceNotReadyError);
    await expect(checkNamespaceBeforePolling(connection, { namespace: configured, embedded }, { registerSearchAttributes: false }, log)).rejects.toThrow('LonghaulMigrationGuid (Keyword)');
    expect(logged).toEqual([]);
    await checkNamespaceBeforePolling(connection, { namespace: configured, embedded }, {}, log);
    expect(logged).toEqual([`[namespace] registered search attributes LonghaulMigrationGuid on namespace ${configured}`]);

    const allowed = await previousReleaseNamespace();
    await checkNamespaceBeforePolling(connection, { namespace: allowed }, { registerSearchAttributes: true }, log);
    expect((await checkNamespace(connection, allowed)).ready).toBe(true);
  });

  it('`longhaul doctor` reports the missing attribute and exits 6; after `setup-namespace` it reports the namespace ready', async () => {
    const namespace = await previousReleaseNamespace();
    const taskQueue = `doctor-${randomUUID()}`;
    const before = await runLonghaul(['doctor', '--json'], taskQueue, { TEMPORAL_NAMESPACE: namespace });
    expect(before.code, before.stderr).toBe(6);
    const report = JSON.parse(before.stdout) as DoctorReport & { exitCode: number };
    expect(report.exitCode).toBe(6);
    expect(report.namespace?.missing).toEqual([LonghaulMigrationGuid.name]);
    expect(report.namespace?.searchAttributes.filter((a) => a.status === 'present')).toHaveLength(ALL_SEARCH_ATTRIBUTES.length - 1);
    expect(report.problems.join('\n')).toContain('LonghaulMigrationGuid (Keyword)');
    const text = await runLonghaul(['doctor'], taskQueue, { TEMPORAL_NAMESPACE: namespace });
    expect(text.code).toBe(6);
    expect(text.stdout).toMatch(/LonghaulMigrationGuid\s+Keyword\s+MISSING/);

    const setup = await runLonghaul(['setup-namespace'], taskQueue, { TEMPORAL_NAMESPACE: namespace });
    expect(setup.code, setup.stderr).toBe(0);
    expect(setup.stdout).toContain('registered search attributes LonghaulMigrationGuid');
    const after = await runLonghaul(['doctor', '--json'], taskQueue, { TEMPORAL_NAMESPACE: namespace });
    expect(after.code, after.stderr).toBe(0);
    expect((JSON.parse(after.stdout) as DoctorReport).namespace?.ready).toBe(true);
  });

  it('an attribute registered with another type is never "fixed": setup and the worker refuse, naming both types', async () => {
    const namespace = await previousReleaseNamespace({ [LonghaulProgress.name]: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD });
    const client = await clientOf(namespace);
    const check = await checkNamespace(client.connection, namespace);
    expect(check.wrongType).toEqual([{ name: LonghaulProgress.name, type: 'Int', status: 'wrong-type', registeredType: 'Keyword' }]);
    await expect(prepareNamespace(client.connection, namespace, { registerMissing: true })).rejects.toThrow(NamespaceNotReadyError);
    await expect(setupNamespace(client.connection, namespace)).rejects.toThrow(`search attribute LonghaulProgress of namespace ${namespace} is a Keyword, longhaul ${releaseVersion()} needs a Int`);
    // Nothing was registered on the way: the missing one is still missing.
    expect((await checkNamespace(client.connection, namespace)).missing).toEqual([LonghaulMigrationGuid.name]);
  });
});

describe('`longhaul doctor` on a healthy namespace', () => {
  it('reports the connection, every attribute present, the polling worker\'s version and the credentials by name, and exits 0', async () => {
    const emulator = await fleet.emulator();
    const env = workerEnv(inject('temporalNamespace'), emulator.apiUrl);
    const worker = await startWorkerProcess(env);
    // The start line names each credential's REST API version (this file's, `api-version.ts`).
    expect(worker.output()).toContain(`(API version ${testGithubApiVersion()})`);
    const secret = `ghp_${randomUUID().replace(/-/g, '')}`;
    const run = await runLonghaul(['doctor', '--json'], env.LONGHAUL_TASK_QUEUE, { GITHUB_TOKEN: secret, GITHUB_API_URL: emulator.apiUrl });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain(secret);
    const report = JSON.parse(run.stdout) as DoctorReport;
    expect(report.version).toBe(releaseVersion());
    expect(report.connection).toMatchObject({ address: address(), tls: false, reachable: true });
    expect(report.namespace?.searchAttributes.map((a) => [a.name, a.status])).toEqual(ALL_SEARCH_ATTRIBUTES.map((key) => [key.name, 'present']));
    const polls = report.taskQueue.pollers.map((p) => [p.polls, p.version]);
    expect(polls).toContainEqual(['workflow', `longhaul.${releaseVersion()}`]);
    expect(polls).toContainEqual(['activity', `longhaul.${releaseVersion()}`]);
    expect(report.credentials).toContainEqual({ kind: 'github', name: 'github', target: emulator.apiUrl, apiVersion: '2022-11-28', source: 'GITHUB_TOKEN (set)', configured: true });
    expect(report.problems).toEqual([]);
  });
});
