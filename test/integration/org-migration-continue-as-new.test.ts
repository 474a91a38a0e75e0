/**
 * Bounded histories (issue 8, item 2): with a tiny event budget per run, a migration continues as new between
 * polls, carrying its migration id, locked repositories, counters and outage budget; the last run downloads,
 * unlocks and ends correctly, and no run's history exceeds the budget by more than the end of the work.
 */
import { describe, expect, it } from 'vitest';
import { MigrationFailure, migrationStatusQuery, orgMigration } from '../../src/processes/org-migration/workflow';
import { useTimeSkippingStack } from '../helpers/stack';
import { followContinueAsNew } from '../helpers/history';
import { expectFailure } from '../helpers/failures';
import { call } from '../helpers/emulator-http';
import { newMigrationStatus, type MigrationEnding, type OrgMigrationInput } from '../../src/processes/org-migration/model';
import { FAST_POLL } from '../helpers/presets';

const REPOS = ['alpha', 'beta', 'gamma'];
const EVENTS_PER_RUN = 50;
const FAILING_POLLS = { kind: 'status', status: 502, method: 'GET', path: '/orgs/:org/migrations/:id', every: 3 } as const;
const OUTAGE = { initialBackoffMs: 1_000, maxBackoffMs: 1_000 };

describe('org migration: continue-as-new', () => {
  const stack = useTimeSkippingStack({
    emulator: {
      migrations: { exportMs: 45_000, archiveBytes: 4_096 },
      // Every third status poll fails. Quiet polls make a wait without change cost no history, so the failed
      // polls (each handed to the outage budget in the workflow) are what fills the runs; the counts of failed
      // and answered polls must be carried from run to run.
      faults: [FAILING_POLLS],
    },
  });

  it('continues as new between polls with a tiny event budget, carrying its state, and unlocks at the end', async () => {
    const workflowId = `migration-can-${Date.now()}`;
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [
        {
          org: 'octo-org',
          repositories: REPOS,
          lockRepositories: true,
          poll: FAST_POLL,
          outage: OUTAGE,
          eventsPerRun: EVENTS_PER_RUN,
        },
      ],
    });
    const result = await handle.result();

    expect(stack.emulator.migrations.all()).toHaveLength(1);
    expect(stack.emulator.stats.byRoute['POST /orgs/:org/migrations']).toBe(1);
    expect(result.migrationId).toBe(stack.emulator.migrations.all()[0].id);
    expect(result.unlockedRepositories).toEqual(REPOS);
    for (const repo of REPOS) expect(stack.emulator.migrations.isLocked('octo-org', repo)).toBe(false);

    const runs = await followContinueAsNew(stack.client, workflowId);
    console.log(`continue-as-new test: ${runs.length} runs, events per run ${runs.map((r) => r.events).join(', ')}`);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    // Each run stops at the budget between polls (or, after the download, before the unlocks): one poll or
    // the download past it at most. The last run unlocks.
    for (const run of runs) expect(run.events).toBeLessThanOrEqual(EVENTS_PER_RUN + 25);

    const final = await stack.client.workflow.getHandle<typeof orgMigration>(workflowId).query(migrationStatusQuery);
    expect(final.phase).toBe('done');
    expect(final.continuedAsNew).toBe(runs.length - 1);
    expect(final.migrationId).toBe(result.migrationId);
    // Counted over all runs: every failed poll and every answered one, quiet ones included.
    const statusRequests = stack.emulator.stats.byRoute['GET /orgs/:org/migrations/:id'];
    expect(final.failedPolls).toBe(Math.floor(statusRequests / 3));
    expect(final.polls + final.failedPolls).toBe(statusRequests);
  });

  it('ends a failed export with its typed failure in a later run, after unlocking there', async () => {
    stack.emulator.setFaults([FAILING_POLLS]);
    stack.emulator.migrations.options.exportMs = 20_000;
    stack.emulator.migrations.options.failRepositories.push('gamma');
    const workflowId = `migration-can-failed-${Date.now()}`;
    const repositories = ['beta', 'gamma'];
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ org: 'octo-org', repositories, lockRepositories: true, poll: FAST_POLL, outage: OUTAGE, eventsPerRun: EVENTS_PER_RUN }],
    });
    const failure = await expectFailure(handle.result(), MigrationFailure.ExportFailed);
    expect(failure.message).toContain('failed on the server');
    for (const repo of repositories) expect(stack.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
    const runs = await followContinueAsNew(stack.client, workflowId);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    for (const run of runs) expect(run.events).toBeLessThanOrEqual(EVENTS_PER_RUN + 25);
    const final = await stack.client.workflow.getHandle<typeof orgMigration>(workflowId).query(migrationStatusQuery);
    expect(final.phase).toBe('failed');
    expect([...final.unlockedRepositories].sort()).toEqual(repositories);
  });

  it.each<[string, MigrationEnding]>([
    ['returns the result of an export whose download an earlier run finished', { kind: 'exported', archive: { path: '/tmp/x.tar.gz', bytes: 3, sha256: 'ab' } }],
    ['fails with the failure an earlier run reached', { kind: 'failed', type: MigrationFailure.TimedOut, message: 'migration was still exporting after 24 h' }],
  ])('a run resumed at the unlocks (as a run that ran out of budget there leaves it) unlocks, then %s', async (_label, ending) => {
    stack.emulator.setFaults([]);
    const created = await call(stack.emulator.apiUrl, 'POST', '/orgs/octo-org/migrations', { body: { repositories: ['alpha', 'beta'], lock_repositories: true } });
    expect(created.status).toBe(201);
    const migrationId = (created.json as { id: number }).id;
    const base: OrgMigrationInput = { org: 'octo-org', repositories: ['alpha', 'beta'], lockRepositories: true };
    const input: OrgMigrationInput = { ...base, resume: { migrationId, locked: ['alpha', 'beta'], status: { ...newMigrationStatus(base), migrationId, unlockedRepositories: ['alpha'] }, ending } };
    const handle = await stack.client.workflow.start(orgMigration, { taskQueue: stack.taskQueue, workflowId: `migration-ending-${ending.kind}-${Date.now()}`, args: [input] });
    if (ending.kind === 'exported') {
      const result = await handle.result();
      expect(result).toMatchObject({ migrationId, state: 'exported', archive: ending.archive, unlockedRepositories: ['alpha', 'beta'] });
    } else {
      const failure = await expectFailure(handle.result(), ending.type);
      expect(failure.message).toBe(ending.message);
    }
    // Only the repository still locked was unlocked by this run.
    expect(stack.emulator.migrations.isLocked('octo-org', 'beta')).toBe(false);
    expect((await handle.query(migrationStatusQuery)).continuedAsNew).toBe(1);
    // The start and the export are an earlier run's business: no start, no poll here.
    const events = (await handle.fetchHistory()).events ?? [];
    const activities = events.flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name ? [e.activityTaskScheduledEventAttributes.activityType.name] : []));
    expect(activities).toEqual(['unlockRepository']);
    expect(stack.emulator.migrations.isLocked('octo-org', 'alpha')).toBe(true);
    await call(stack.emulator.apiUrl, 'DELETE', `/orgs/octo-org/migrations/${migrationId}/repos/alpha/lock`);
  });
});
