/**
 * Whoever can start a workflow cannot reach the worker's secrets or write outside its data directory (issue 35,
 * items 1 and 3), tried through the Temporal client as a hostile namespace user would: `env:`/`file:` credential
 * references, a sink naming a variable or a secret the workers lack, file paths that are absolute, climb with `..`
 * or pass through a link that points out. Each is refused with its type; nothing is read, sent or written. The
 * configured names and a relative path still work end to end.
 */
import { mkdir, mkdtemp, readdir, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { useStack } from '../helpers/stack';
import { expectFailure } from '../helpers/failures';
import { FAST_POLL } from '../helpers/presets';
import { fixtureWithImportRepos, historyText, startImport, SVN } from '../helpers/source-import';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { feedPollRun } from '../../src/processes/feed-poll/workflow';
import { feedCursorWorkflowId, type FeedPollOutcome, type SinkConfig } from '../../src/processes/feed-poll/model';
import { startSinkReceiver } from '../../packages/emulator/src/sink/receiver';

/** What an attacker would like sent: a variable of the worker's own (this process runs the worker). */
const CANARY = 'canary-5f0c2e9a-worker-secret';
const FEEDS = [1, 2, 3, 4, 5].map((i) => `/repos/octo-org/trust-${i}/events`);

describe('inputs name only what the operator configured, and files stay in the data directory', () => {
  const fixture = fixtureWithImportRepos('trust', 5);
  const stack = useStack({
    emulator: { fixture, imports: { timeScale: 0.02 }, migrations: { exportMs: 500, archiveBytes: 4_096 }, feeds: { eventsPerMinute: 0, initialEvents: 3, pollIntervalSeconds: 1 } },
    cleanUp: { workflows: FEEDS.map(feedCursorWorkflowId) },
  });
  let outside: string;

  beforeAll(async () => {
    Object.assign(process.env, {
      LONGHAUL_TRUST_CANARY: CANARY,
      LONGHAUL_IMPORT_CREDENTIALS: 'trusted-svn, second',
      LONGHAUL_IMPORT_TRUSTED_SVN_USERNAME: 'trusted-user',
      LONGHAUL_IMPORT_TRUSTED_SVN_PASSWORD: 'trusted-pw-41d2',
    });
    outside = await mkdtemp(join(tmpdir(), 'longhaul-outside-'));
    await mkdir(stack.deps.dataDir, { recursive: true });
    await symlink(outside, join(stack.deps.dataDir, 'escape'));
  });

  const importRequests = () => stack.emulator.requestLog.filter((r) => r.path.includes('/import')).length;

  it.each(['env:LONGHAUL_TRUST_CANARY', 'file:/proc/self/environ', 'env:GITHUB_TOKEN'])('refuses an import whose credentials are %s, typed, before any request', async (credentials) => {
    const before = importRequests();
    const handle = await startImport(stack, { repo: 'trust-1', vcsUrl: `${SVN}/needs-auth`, credentials });
    const failure = await expectFailure(handle.result(), 'CredentialReferenceRefused');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe('credentials names a variable or a file of the worker (env:, file:, secretEnv), which is refused: name a secret configured on the workers (LONGHAUL_IMPORT_CREDENTIALS); nothing was read or sent');
    expect(importRequests(), 'requests to the importer').toBe(before);
    // Refused in the first workflow task: no activity was scheduled.
    const { events } = await handle.fetchHistory();
    expect(events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
    expect(await historyText(handle)).not.toContain(CANARY);
  });

  it('imports with a configured name end to end, and fails an unknown name typed, listing the configured names', async () => {
    const result = await (await startImport(stack, { repo: 'trust-2', vcsUrl: `${SVN}/needs-auth`, credentials: 'trusted-svn' })).result();
    expect(result.status).toBe('complete');
    expect(stack.emulator.imports.get('octo-org', 'trust-2')!.credentials?.username).toBe('trusted-user');

    const before = importRequests();
    const unknown = await expectFailure((await startImport(stack, { repo: 'trust-3', vcsUrl: `${SVN}/needs-auth`, credentials: 'not-configured' })).result(), 'UnknownCredential');
    expect(unknown.nonRetryable).toBe(true);
    expect(unknown.message).toBe('no import credential of that name on this worker (configured: trusted-svn, second)');
    expect(importRequests(), 'nothing sent for an unknown name').toBe(before);
  });

  const poll = (feed: string, sink: SinkConfig) => {
    stack.emulator.feeds.ensure(feed);
    return stack.client.workflow.execute(feedPollRun, { taskQueue: stack.taskQueue, workflowId: `trust-feed-${Date.now()}-${Math.random()}`, args: [{ feed, sink, origin: 'manual' }] });
  };
  const feedRequests = () => stack.emulator.requestLog.filter((r) => r.path.includes('/events')).length;

  it.each([
    ['an absolute file sink path', { kind: 'file', path: join(tmpdir(), 'longhaul-trust-absolute.jsonl') }, 'PathOutsideDataDir', 'not an absolute path'],
    ['a file sink path climbing with ..', { kind: 'file', path: '../../longhaul-trust.jsonl' }, 'PathOutsideDataDir', '".." is refused'],
    ['an http sink naming a variable (secretEnv)', { kind: 'http', url: 'http://127.0.0.1:9/in', secretEnv: 'GITHUB_TOKEN' }, 'CredentialReferenceRefused', '--sink-secret NAME'],
  ] as [string, SinkConfig, string, string][])('refuses a feed run with %s, typed, before the feed is polled', async (_what, sink, type, why) => {
    const before = feedRequests();
    const failure = await expectFailure(poll(FEEDS[0], sink), type);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(why);
    expect(failure.message).not.toContain('GITHUB_TOKEN');
    expect(feedRequests()).toBe(before);
  });

  it('writes nothing through a link in the data directory that points out, and still delivers to a relative path', async () => {
    const refused = (await poll(FEEDS[1], { kind: 'file', path: 'escape/feed.jsonl' })) as FeedPollOutcome;
    expect(refused).toMatchObject({ kind: 'sink-failed', pending: 3 });
    expect((refused as { error: string }).error).toContain('file sink path "escape/feed.jsonl" leads outside the worker\'s data directory');
    expect(await readdir(outside)).toEqual([]);

    const delivered = await poll(FEEDS[2], { kind: 'file', path: 'trusted/feed.jsonl' });
    expect(delivered).toMatchObject({ kind: 'delivered', delivered: 3 });
    expect(await readdir(join(stack.deps.dataDir, 'trusted'))).toEqual(['feed.jsonl']);
  });

  it('refuses an http sink naming a signing secret the workers lack, sending nothing', async () => {
    const receiver = await startSinkReceiver({ secret: 'unused' });
    try {
      const outcome = (await poll(FEEDS[3], { kind: 'http', url: `${receiver.url}/in`, secret: 'not-configured' })) as FeedPollOutcome;
      expect(outcome).toMatchObject({ kind: 'sink-failed', pending: 3 });
      expect((outcome as { error: string }).error).toBe('no sink secret of that name on this worker (configured: default; more with LONGHAUL_SINK_SECRETS)');
      expect(receiver.stats.requests).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  const migrate = (repo: string, downloadDir: string) =>
    stack.client.workflow.execute(orgMigration, { taskQueue: stack.taskQueue, workflowId: `trust-migrate-${repo}-${Date.now()}`, args: [{ org: 'octo-org', repositories: [repo], lockRepositories: true, downloadDir, poll: FAST_POLL }] });
  const exports = () => stack.emulator.migrations.all().length;

  it.each([
    ['an absolute downloadDir', () => outside, 'not an absolute path'],
    ['a downloadDir climbing with ..', () => '../..', '".." is refused'],
    ['a downloadDir through a link that points out', () => 'escape/archives', 'leads outside the worker\'s data directory'],
  ])('refuses a migration with %s, typed, before any export is started', async (_what, dir, why) => {
    const before = exports();
    const failure = await expectFailure(migrate('alpha', dir()), 'PathOutsideDataDir');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(why);
    expect(exports(), 'exports started').toBe(before);
    expect(stack.emulator.migrations.isLocked('octo-org', 'alpha')).toBe(false);
    expect(await readdir(outside)).toEqual([]);
  });

  it('downloads into a relative downloadDir inside the data directory', async () => {
    const result = await migrate('beta', 'exports/ok');
    expect(result.archive.path.startsWith(join(stack.deps.dataDir, 'exports', 'ok'))).toBe(true);
  });

  it('fails the whole failure chain as a workflow failure, not a stuck task', async () => {
    // The refusal ends the run (FAILED), it does not fail workflow tasks for ever.
    const err = await migrate('gamma', '/etc').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
  });
});
