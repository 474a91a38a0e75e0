/**
 * A hostile namespace user against a real worker PROCESS (as `npm run worker` starts it) that holds a GitHub token
 * of its own: every path issue 35 named, tried through the Temporal client, is refused with its type, and the
 * worker's token appears in no history, result, failure, log line or metric afterwards. The token is in play:
 * the same worker runs an honest migration with it first (the emulator accepts no other token).
 *
 * The paths: malformed input (null, a string, an array), an import whose credentials name the worker's own
 * variable or `/proc/self/environ`, a sink that names a variable of the worker, a download directory outside the
 * data directory, an export of 5,001 repositories, and an archive 302 to `0.0.0.0:<port>` of a listener of the
 * test's own, which must see no connection. Nothing here leaves loopback. Each boundary has its own file with the
 * finer cases (trusted-inputs, outbound-policy, malformed-processes).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Emulator } from '@longhaul/emulator';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { sourceImport } from '../../src/processes/source-import/workflow';
import { feedPollRun } from '../../src/processes/feed-poll/workflow';
import { startTestEmulator } from '../helpers/emulator';
import { startWorkerProcessWithMetrics, stopWorkerProcesses, type WorkerProcess } from '../helpers/worker-process';
import { testClient } from '../helpers/temporal';
import { expectFailure } from '../helpers/failures';
import { historyText, SVN } from '../helpers/source-import';
import { FAST_POLL } from '../helpers/presets';

/** The worker's own token: what every hostile path below would like to reach. */
const WORKER_TOKEN = `hostile-caller-worker-token-${randomUUID()}`;

describe('a hostile caller against a worker process holding a token', () => {
  let emulator: Emulator;
  let client: Client;
  let worker: WorkerProcess;
  let taskQueue: string;
  let metricsPort: number;
  let dataDir: string;
  let outside: string;
  const listener = { connections: 0, port: 0, close: async () => undefined as unknown };
  const handles: WorkflowHandle[] = [];
  /** Everything a workflow handed back to its caller: results and failures, whole. */
  const answers: unknown[] = [];

  beforeAll(async () => {
    const fixture = defaultGithubFixture();
    for (let i = 0; i < 3; i++) fixture.repositories.push({ id: 9300 + i, name: `hostile-${i}`, owner: 'octo-org', private: false, workflowsEnabled: false });
    emulator = await startTestEmulator({ token: WORKER_TOKEN, fixture, migrations: { exportMs: 300, archiveBytes: 4_096 } });
    client = await testClient();
    const server = createServer((socket) => {
      listener.connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    listener.port = (server.address() as AddressInfo).port;
    listener.close = () => new Promise((resolve) => server.close(resolve));
    dataDir = await mkdtemp(join(tmpdir(), 'longhaul-hostile-data-'));
    outside = await mkdtemp(join(tmpdir(), 'longhaul-hostile-outside-'));
    taskQueue = `hostile-${randomUUID()}`;
    ({ worker, metricsPort } = await startWorkerProcessWithMetrics({
      LONGHAUL_TASK_QUEUE: taskQueue,
      LONGHAUL_GITHUB_CREDENTIAL: `hostile-${randomUUID().slice(0, 8)}`,
      GITHUB_API_URL: emulator.apiUrl,
      GITHUB_TOKEN: WORKER_TOKEN,
      LONGHAUL_DATA_DIR: dataDir,
      LONGHAUL_LOG_FORMAT: 'json',
    }));
  });

  afterAll(async () => {
    await Promise.all(handles.map((h) => h.terminate('test over').catch(() => undefined)));
    await stopWorkerProcesses();
    await client?.connection.close();
    await listener.close();
    await emulator?.close();
  });

  const start = async <H extends WorkflowHandle>(handle: Promise<H>): Promise<H> => {
    const h = await handle;
    handles.push(h);
    return h;
  };
  const refusedWith = async (handle: WorkflowHandle, type: string) => {
    const failure = await expectFailure(handle.result(), type);
    answers.push(failure, failure.message, failure.stack, failure.details);
    expect(failure.nonRetryable).toBe(true);
    const { events } = await handle.fetchHistory();
    // Refused in the first workflow task: no activity ran.
    expect(events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
    return failure;
  };
  const migrationPosts = () => emulator.stats.byRoute['POST /orgs/:org/migrations'] ?? 0;

  it('runs an honest migration with the token first (the token is in play)', async () => {
    const handle = await start(client.workflow.start(orgMigration, { taskQueue, workflowId: `hostile-honest-${randomUUID()}`, args: [{ org: 'octo-org', repositories: ['hostile-0'], lockRepositories: true, poll: FAST_POLL }] }));
    const result = await handle.result();
    answers.push(result);
    expect(result.unlockedRepositories).toEqual(['hostile-0']);
    expect(migrationPosts()).toBe(1);
  });

  it.each([
    ['null', null],
    ['a string', 'octo-org'],
    ['an array', ['octo-org']],
  ])('refuses a migration whose input is %s: InvalidMigrationInput, nothing sent', async (_what, input) => {
    const before = emulator.stats.requests;
    const handle = await start(client.workflow.start('orgMigration', { taskQueue, workflowId: `hostile-input-${randomUUID()}`, args: [input] }));
    await refusedWith(handle, 'InvalidMigrationInput');
    expect(emulator.stats.requests).toBe(before);
  });

  it.each(['env:GITHUB_TOKEN', 'file:/proc/self/environ'])('refuses an import whose credentials are %s: nothing read or sent to the importer', async (credentials) => {
    const before = emulator.requestLog.filter((r) => r.path.includes('/import')).length;
    const handle = await start(
      client.workflow.start(sourceImport, { taskQueue, workflowId: `hostile-import-${randomUUID()}`, args: [{ owner: 'octo-org', repo: 'hostile-1', vcsUrl: `${SVN}/needs-auth`, vcs: 'subversion', credentials }] }),
    );
    await refusedWith(handle, 'CredentialReferenceRefused');
    expect(emulator.requestLog.filter((r) => r.path.includes('/import')).length).toBe(before);
  });

  it("refuses a sink that names the worker's token variable, before any request", async () => {
    const before = emulator.stats.requests;
    const handle = await start(
      client.workflow.start(feedPollRun, {
        taskQueue,
        workflowId: `hostile-sink-${randomUUID()}`,
        args: [{ feed: '/orgs/octo-org/events', sink: { kind: 'http', url: `http://0.0.0.0:${listener.port}/in`, secretEnv: 'GITHUB_TOKEN' } }],
      }),
    );
    await refusedWith(handle, 'CredentialReferenceRefused');
    expect(emulator.stats.requests).toBe(before);
  });

  it.each([
    ['an absolute path', () => join(outside, 'archives')],
    ['a path that climbs out', () => '../../../../../../../../tmp/longhaul-hostile-climb'],
  ])('refuses a download directory that is %s: nothing written, no export started', async (_what, dir) => {
    const before = migrationPosts();
    const handle = await start(client.workflow.start(orgMigration, { taskQueue, workflowId: `hostile-dir-${randomUUID()}`, args: [{ org: 'octo-org', repositories: ['hostile-1'], downloadDir: dir(), poll: FAST_POLL }] }));
    await refusedWith(handle, 'PathOutsideDataDir');
    expect(migrationPosts()).toBe(before);
    expect(await readdir(outside)).toEqual([]);
  });

  it('refuses an export of 5,001 repositories with no request sent', async () => {
    const before = emulator.stats.requests;
    const repositories = Array.from({ length: 5_001 }, (_, i) => `repo-${i}`);
    const handle = await start(client.workflow.start(orgMigration, { taskQueue, workflowId: `hostile-5001-${randomUUID()}`, args: [{ org: 'octo-org', repositories }] }));
    const failure = await refusedWith(handle, 'InvalidMigrationInput');
    expect(failure.message).toContain('5000');
    expect(emulator.stats.requests).toBe(before);
  });

  it('refuses the archive 302 to 0.0.0.0:<port>: OutboundAddressRefused, no connection, the repositories unlocked', async () => {
    emulator.setFaults([{ method: 'GET', path: '/orgs/:org/migrations/:id/archive', kind: 'redirect', location: `http://0.0.0.0:${listener.port}/archive.tar.gz` }]);
    const handle = await start(client.workflow.start(orgMigration, { taskQueue, workflowId: `hostile-302-${randomUUID()}`, args: [{ org: 'octo-org', repositories: ['hostile-2'], lockRepositories: true, poll: FAST_POLL }] }));
    const failure = await expectFailure(handle.result(), 'OutboundAddressRefused');
    answers.push(failure, failure.message, failure.stack, failure.details);
    expect(listener.connections).toBe(0);
    expect(emulator.migrations.isLocked('octo-org', 'hostile-2')).toBe(false);
  });

  it("finds the worker's token in no history, result, failure, log line or metric", async () => {
    expect(handles.length).toBeGreaterThanOrEqual(10);
    // The histories are read decoded (payloads as text): the honest run's input shows, the token nowhere.
    expect(await historyText(handles[0])).toContain('"repositories":["hostile-0"]');
    for (const handle of handles) expect(await historyText(handle), `history of ${handle.workflowId}`).not.toContain(WORKER_TOKEN);
    expect(JSON.stringify(answers, (_k, v: unknown) => (v instanceof Error ? { message: v.message, stack: v.stack, cause: v.cause } : v))).not.toContain(WORKER_TOKEN);
    // The log said something about these runs (so an empty log cannot pass), and never the token.
    const log = worker.output();
    expect(log).toContain('OutboundAddressRefused');
    expect(log).not.toContain(WORKER_TOKEN);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain('longhaul_');
    expect(metrics).not.toContain(WORKER_TOKEN);
    expect(listener.connections).toBe(0);
  });
});
