/**
 * The org-migration workflow when things go wrong, on a real Temporal server with a real worker and the
 * emulator: a failed export, cancellation, a start call whose outcome is unknown, and bad input. Also
 * what it shows while running: the `status` query and its search attributes.
 */
import { describe, expect, it } from 'vitest';
import { migrationStatusQuery, MigrationFailure, orgMigration } from '../../src/processes/org-migration/workflow';
import type { OrgMigrationInput, OrgMigrationStatus } from '../../src/processes/org-migration/model';
import { LonghaulOrg, LonghaulProcess, LonghaulState } from '../../src/common/search-attributes';
import { useStack, type TestStack } from '../helpers/stack';
import { eventually } from '../helpers/wait';
import { expectCancelled, expectFailure } from '../helpers/failures';
import { FAST_POLL } from '../helpers/presets';

const REPOS = ['alpha', 'beta', 'gamma'];

/** Starts a migration on the stack's task queue. */
const start = (s: TestStack, input: OrgMigrationInput, name: string) =>
  s.client.workflow.start(orgMigration, { taskQueue: s.taskQueue, workflowId: `migration-${name}-${Date.now()}`, args: [input] });

describe('org migration: export failed', () => {
  const s = useStack({ emulator: { migrations: { exportMs: 1_000, failRepositories: ['gamma'] } } });

  it('unlocks every locked repository and fails with a typed, non-retryable MigrationExportFailed', async () => {
    const handle = await start(s, { org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: FAST_POLL }, 'export-failed');
    const failure = await expectFailure(handle.result(), MigrationFailure.ExportFailed);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('failed on the server');

    const [migration] = s.emulator.migrations.all();
    expect(s.emulator.migrations.stateOf(migration.id)).toBe('failed');
    for (const repo of REPOS) expect(s.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
    const status = await handle.query(migrationStatusQuery);
    expect(status.phase).toBe('failed');
    expect([...status.unlockedRepositories].sort()).toEqual(REPOS);
    expect((await handle.describe()).status.name).toBe('FAILED');
  });
});

describe('org migration: cancellation', () => {
  const s = useStack({ emulator: { migrations: { exportMs: 60_000 }, faults: [] } });

  it('unlocks every locked repository when cancelled while exporting, and ends cancelled', async () => {
    const handle = await start(s, { org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: FAST_POLL }, 'cancel-exporting');
    const status = await eventually(async () => {
      const st = await handle.query(migrationStatusQuery);
      return st.phase === 'waiting' && st.polls >= 1 ? st : undefined;
    }, 'the workflow to poll the export');
    expect(s.emulator.migrations.stateOf(status.migrationId!)).toMatch(/pending|exporting/);
    for (const repo of REPOS) expect(s.emulator.migrations.isLocked('octo-org', repo)).toBe(true);

    await handle.cancel();
    await expectCancelled(handle.result());
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    for (const repo of REPOS) expect(s.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
    const final = await handle.query(migrationStatusQuery);
    expect(final.phase).toBe('cancelled');
  });

  it('unlocks the repositories when cancelled while the start call is in flight and the server still creates the export', async () => {
    s.emulator.setFaults([{ kind: 'slow', method: 'POST', path: '/orgs/:org/migrations', delayMs: 1_500, times: 1 }]);
    const before = s.emulator.migrations.all().length;
    const handle = await start(s, { org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: FAST_POLL }, 'cancel-starting');
    await eventually(() => (s.emulator.stats.faultsInjected > 0 ? true : undefined), 'the start call to reach the emulator');

    await handle.cancel();
    await expectCancelled(handle.result());
    // The server acted on the call the workflow was cancelled during: its locks must not outlive the workflow.
    await eventually(() => (s.emulator.migrations.all().length === before + 1 ? true : undefined), 'the server to create the export');
    for (const repo of REPOS) expect(s.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
  });
});

describe('org migration: start call outcome unknown', () => {
  const s = useStack({ emulator: { migrations: { exportMs: 800, archiveBytes: 20_000 } } });

  it.each([
    ['the connection is reset after the server created it', { kind: 'reset' as const }],
    ['the server answers 502 after creating it', { kind: 'status' as const, status: 502 }],
  ])('creates exactly one migration when %s', async (_label, fault) => {
    s.emulator.setFaults([{ ...fault, method: 'POST', path: '/orgs/:org/migrations', times: 1, afterProcessing: true }]);
    s.emulator.resetStats();
    const before = s.emulator.migrations.all().length;
    const result = await (await start(s, { org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: FAST_POLL }, `unknown-${fault.kind}`)).result();

    expect(s.emulator.stats.faultsInjected).toBeGreaterThan(0);
    const created = s.emulator.migrations.all().slice(before);
    expect(created.map((m) => m.id)).toEqual([result.migrationId]);
    // One POST reached the server; the workflow found its migration instead of sending another.
    expect(s.emulator.stats.byRoute['POST /orgs/:org/migrations']).toBe(1);
    expect(s.emulator.stats.byRoute['GET /orgs/:org/migrations']).toBeGreaterThanOrEqual(1);
    expect(result.unlockedRepositories).toEqual(REPOS);
    for (const repo of REPOS) expect(s.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
  });

  it('creates exactly one migration when the start call outlives its activity timeout', async () => {
    s.emulator.setFaults([{ kind: 'slow', method: 'POST', path: '/orgs/:org/migrations', delayMs: 4_000, times: 1, afterProcessing: true }]);
    s.emulator.resetStats();
    const before = s.emulator.migrations.all().length;
    const handle = await start(s, { org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: FAST_POLL, apiCallTimeoutMs: 1_000 }, 'unknown-timeout');
    const result = await handle.result();

    // The first start call timed out on the Temporal side (not an HTTP failure)…
    const { events } = await handle.fetchHistory();
    const timedOut = (events ?? []).filter((e) => e.activityTaskTimedOutEventAttributes);
    expect(timedOut).toHaveLength(1);
    expect(timedOut[0].activityTaskTimedOutEventAttributes?.failure?.timeoutFailureInfo).toBeDefined();
    // …and the workflow found the migration it created instead of sending a second POST.
    expect(s.emulator.migrations.all().slice(before).map((m) => m.id)).toEqual([result.migrationId]);
    expect(s.emulator.stats.byRoute['POST /orgs/:org/migrations']).toBe(1);
    expect(s.emulator.stats.byRoute['GET /orgs/:org/migrations']).toBeGreaterThanOrEqual(1);
    for (const repo of REPOS) expect(s.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
  });
});

describe('org migration: bad input', () => {
  const s = useStack();

  it.each<[string, OrgMigrationInput, string]>([
    ['an empty org', { org: '', repositories: ['alpha'] }, 'org must be a non-empty'],
    ['no repositories without orgMetadataOnly', { org: 'octo-org', repositories: [] }, 'at least one repository'],
    ['a malformed repository name', { org: 'octo-org', repositories: ['alpha', '../etc/passwd'] }, 'is not a valid repository name'],
    ['a malformed org name', { org: 'octo org!', repositories: ['alpha'] }, 'is not a valid organization name'],
    ['a duplicated repository', { org: 'octo-org', repositories: ['alpha', 'Alpha'] }, 'listed twice'],
    ['a zero API-call timeout', { org: 'octo-org', repositories: ['alpha'], apiCallTimeoutMs: 0 }, 'apiCallTimeoutMs must be a number of milliseconds between 1000'],
    ['an org name with an underscore (the one GitHub rule everywhere)', { org: 'octo_org', repositories: ['alpha'] }, 'is not a valid organization name'],
    ['a lock flag that is a string', { org: 'octo-org', repositories: ['alpha'], lockRepositories: 'yes' as unknown as boolean }, 'lockRepositories must be true or false'],
    ['a poll interval under the 1 s floor', { org: 'octo-org', repositories: ['alpha'], poll: { initialIntervalMs: 1 } }, 'poll.initialIntervalMs must be between 1000'],
    ['a poll time bound over the 7-day ceiling', { org: 'octo-org', repositories: ['alpha'], poll: { timeoutMs: 1e15 } }, 'poll.timeoutMs must be between'],
    ['an event budget over the per-run cap', { org: 'octo-org', repositories: ['alpha'], eventsPerRun: 20_000 }, 'eventsPerRun must be an integer between 50 and 8000'],
  ])('fails fast with a non-retryable InvalidMigrationInput for %s, before any API call', async (_label, input, problem) => {
    const cause = await expectFailure((await start(s, input, 'bad-input')).result(), MigrationFailure.InvalidInput);
    expect(cause.nonRetryable).toBe(true);
    expect(cause.message).toContain(problem);
    expect(s.emulator.stats.requests).toBe(0);
  });
});

describe('org migration: visibility', () => {
  const s = useStack({ emulator: { migrations: { exportMs: 2_500, archiveBytes: 10_000 } } });

  it('answers the status query and sets the LonghaulOrg and LonghaulState search attributes as it goes', async () => {
    const handle = await start(s, { org: 'octo-org', repositories: ['alpha'], poll: FAST_POLL }, 'visibility');
    const waiting = await eventually(async () => {
      const st: OrgMigrationStatus = await handle.query(migrationStatusQuery);
      return st.phase === 'waiting' && st.state === 'exporting' ? st : undefined;
    }, 'the export to be seen exporting');
    expect(waiting.org).toBe('octo-org');
    expect(waiting.migrationId).toBe(s.emulator.migrations.all()[0].id);

    const running = await eventually(async () => {
      const d = await handle.describe();
      return d.typedSearchAttributes.get(LonghaulState) === 'exporting' ? d : undefined;
    }, 'LonghaulState to be exporting');
    expect(running.typedSearchAttributes.get(LonghaulOrg)).toBe('octo-org');
    expect(running.typedSearchAttributes.get(LonghaulProcess)).toBe('org-migration');

    const result = await handle.result();
    const done = await handle.describe();
    expect(done.status.name).toBe('COMPLETED');
    expect(done.typedSearchAttributes.get(LonghaulState)).toBe('exported');
    const final = await handle.query(migrationStatusQuery);
    expect(final).toMatchObject({ phase: 'done', state: 'exported', migrationId: result.migrationId });
    expect(final.polls).toBeGreaterThanOrEqual(1);
  });
});
