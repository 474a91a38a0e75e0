/**
 * Exactly-once starts of org migrations (issue 8, item 5), on a real Temporal server, real workers and the
 * emulator: slowness before processing combined with a client timeout, a 4xx after an unknown outcome, and
 * two workflows on the same repositories (refused as already running by the CLI; with `--workflow-id`, never
 * adopting the other's migration).
 */
import { describe, expect, it } from 'vitest';
import { migrationStatusQuery, orgMigration } from '../../src/processes/org-migration/workflow';
import { migrationWorkflowId, type OrgMigrationInput } from '../../src/processes/org-migration/model';
import { LonghaulMigrationGuid } from '../../src/common/search-attributes';
import { useStack, type TestStack } from '../helpers/stack';
import { eventually } from '../helpers/wait';
import { runStarter } from '../helpers/starter';
import { FAST_POLL } from '../helpers/presets';
import { timersStarted } from '../helpers/history';

const START_ROUTE = 'POST /orgs/:org/migrations';
/** An export that does not end by itself within any test: the test ends it (`endExports`) once it has seen what it waits for. */
const UNTIL_ENDED_MS = 60 * 60_000;

/**
 * Ends every export of the emulator now, and makes the next ones end at once: a test that needs a migration still
 * running while it looks holds its export with `UNTIL_ENDED_MS` and ends it here, instead of guessing how long
 * the looking takes.
 */
function endExports(s: TestStack): void {
  s.emulator.migrations.options.exportMs = 0;
  for (const m of s.emulator.migrations.all()) m.exportMs = 0;
}

/** Starts a migration on the stack's task queue. */
const start = (s: TestStack, input: OrgMigrationInput, id: string) =>
  s.client.workflow.start(orgMigration, { taskQueue: s.taskQueue, workflowId: `${id}-${Date.now()}`, args: [input] });

describe('org migration: exactly-once start', () => {
  const s = useStack({ emulator: { migrations: { exportMs: 1_000, archiveBytes: 4_096 } } });

  it('adopts the migration of a start call that was slow BEFORE the server processed it and outlived the client timeout', async () => {
    // The server holds the POST for 3 s and only then creates the export; the activity gave up after 1 s. The
    // lookup at once misses it; the one at the end of the grace period (5 s here, not the default 62 s: the
    // grace's length is not what this test is about; given under its former name, which inputs still carry) finds it.
    s.emulator.setFaults([{ kind: 'slow', method: 'POST', path: '/orgs/:org/migrations', delayMs: 3_000, times: 1 }]);
    s.emulator.resetStats();
    const before = s.emulator.migrations.all().length;
    const handle = await start(s, { org: 'octo-org', repositories: ['alpha', 'beta'], lockRepositories: true, poll: FAST_POLL, apiCallTimeoutMs: 1_000, startGraceMs: 5_000 }, 'slow-before');
    const result = await handle.result();

    const created = s.emulator.migrations.all().slice(before);
    expect(created.map((m) => m.id)).toEqual([result.migrationId]);
    expect(s.emulator.stats.byRoute[START_ROUTE]).toBe(1);
    // The lookups went on until the late creation showed up, instead of looking once and re-sending.
    expect(s.emulator.stats.byRoute['GET /orgs/:org/migrations']).toBeGreaterThanOrEqual(2);
    const { events } = await handle.fetchHistory();
    expect((events ?? []).filter((e) => e.activityTaskTimedOutEventAttributes)).toHaveLength(1);
    expect(result.unlockedRepositories).toEqual(['alpha', 'beta']);
    for (const repo of ['alpha', 'beta']) expect(s.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
  });

  it('after an unknown outcome, a 4xx to the re-send leads to the lookup (which finds the export) instead of failing with the locks held', async () => {
    // Try 1: connection reset before processing (unknown outcome, nothing created). After the 2 s grace the
    // workflow re-sends; try 2 creates the export (and its locks) but is answered 422.
    s.emulator.setFaults([
      { kind: 'reset', method: 'POST', path: '/orgs/:org/migrations', times: 1 },
      { kind: 'status', status: 422, method: 'POST', path: '/orgs/:org/migrations', times: 1, afterProcessing: true },
    ]);
    s.emulator.resetStats();
    const before = s.emulator.migrations.all().length;
    const handle = await start(s, { org: 'octo-org', repositories: ['gamma'], lockRepositories: true, poll: FAST_POLL, sendOnceGraceMs: 2_000 }, 'four-xx');
    const result = await handle.result();
    // The grace the input named (not the default 62 s): no timer of the run waited longer.
    expect(Math.max(...(await timersStarted(handle)))).toBeLessThanOrEqual(2_000);

    expect(s.emulator.stats.faultsInjected).toBe(2);
    expect(s.emulator.stats.byRoute[START_ROUTE]).toBe(2);
    const created = s.emulator.migrations.all().slice(before);
    expect(created.map((m) => m.id)).toEqual([result.migrationId]);
    expect(result.unlockedRepositories).toEqual(['gamma']);
    expect(s.emulator.migrations.isLocked('octo-org', 'gamma')).toBe(false);
  });

  it('with --workflow-id override, a second workflow on the same repositories never adopts the first one\'s migration', async () => {
    s.emulator.setFaults([]);
    s.emulator.migrations.options.exportMs = UNTIL_ENDED_MS;
    const input: OrgMigrationInput = { org: 'octo-org', repositories: ['alpha', 'beta', 'gamma'], poll: FAST_POLL, startGraceMs: 2_000 };
    const first = await start(s, input, 'same-repos-first');
    const firstGuid = await eventually(async () => (await first.describe()).typedSearchAttributes.get(LonghaulMigrationGuid), 'the first workflow to record its migration', 30_000);
    const firstId = (await first.query(migrationStatusQuery)).migrationId;

    // The second's start is lost before processing: its lookup sees the first's export (same repositories,
    // same flags, created a moment ago) and must not take it.
    s.emulator.setFaults([{ kind: 'reset', method: 'POST', path: '/orgs/:org/migrations', times: 1 }]);
    s.emulator.resetStats();
    const second = await start(s, input, 'same-repos-second');
    // Both exports are held until the second workflow has one of its own: its lookup saw the first's still running.
    await eventually(async () => (await second.describe()).typedSearchAttributes.get(LonghaulMigrationGuid), 'the second workflow to record its migration', 30_000);
    endExports(s);
    const [a, b] = await Promise.all([first.result(), second.result()]);

    expect(a.migrationId).toBe(firstId);
    expect(b.migrationId).not.toBe(a.migrationId);
    expect(s.emulator.stats.byRoute[START_ROUTE]).toBe(2);
    expect(s.emulator.stats.byRoute['GET /orgs/:org/migrations']).toBeGreaterThanOrEqual(1);
    const secondGuid = (await second.describe()).typedSearchAttributes.get(LonghaulMigrationGuid);
    expect(secondGuid).toBeDefined();
    expect(secondGuid).not.toBe(firstGuid);
  });
});

describe('org migration: the CLI refuses a second migration of the same repositories while one runs', () => {
  // The first migration's export is held until the CLI has been refused and overridden (`endExports`).
  const s = useStack({ emulator: { migrations: { exportMs: UNTIL_ENDED_MS, archiveBytes: 4_096 } } });

  it('prints "already running: <id>" with the id derived from org and sorted repositories, and --workflow-id overrides it', async () => {
    const id = migrationWorkflowId('octo-org', ['beta', 'alpha']);
    expect(id).toBe(migrationWorkflowId('octo-org', ['Alpha', 'beta']));
    expect(id).not.toBe(migrationWorkflowId('octo-org', ['alpha']));

    const first = await runStarter(['migrate', '--org', 'octo-org', '--repo', 'alpha', '--repo', 'beta', '--poll-initial', '1', '--json'], s.taskQueue);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).workflowId).toBe(id);

    const again = await runStarter(['migrate', '--org', 'octo-org', '--repo', 'beta', '--repo', 'alpha', '--poll-initial', '1'], s.taskQueue);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`already running: ${id}`);

    const override = await runStarter(['migrate', '--org', 'octo-org', '--repo', 'alpha', '--repo', 'beta', '--workflow-id', `${id}-again`, '--json'], s.taskQueue);
    expect(override.code).toBe(0);
    expect(JSON.parse(override.stdout).workflowId).toBe(`${id}-again`);

    endExports(s);
    for (const workflowId of [id, `${id}-again`]) {
      await s.client.workflow.getHandle(workflowId).result();
    }
    expect(s.emulator.migrations.all()).toHaveLength(2);
  });
});
