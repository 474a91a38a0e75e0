/**
 * A 5-minute API outage during an export (issue 8, item 1): every API call fails — half 502 with an HTML
 * page, half connection resets — for 5 minutes while the export runs. The workflow waits it out on its
 * outage budget and completes with exactly one export and nothing left locked; the failed polls were only
 * ever followed by more polls (never by another start, never by cleanup before the end).
 *
 * On a time-skipping environment: the outage is a fault window on the emulator's clock, which is the
 * environment's, so its 5 minutes pass while the workflow waits between failed polls.
 */
import { describe, expect, it } from 'vitest';
import { migrationStatusQuery, orgMigration } from '../../src/processes/org-migration/workflow';
import { useTimeSkippingStack } from '../helpers/stack';
import { waitFor } from '../helpers/wait';
import { QUICK_OUTAGE_BACKOFF, SHORT_OUTAGE_MS } from '../helpers/presets';

const REPOS = ['alpha', 'beta', 'gamma'];

describe('org migration: a 5-minute outage during the export', () => {
  const stack = useTimeSkippingStack({ emulator: { migrations: { exportMs: 60_000, archiveBytes: 8_192 } } });

  it('waits the outage out and completes with one export, the archive downloaded and deleted, and nothing locked', async () => {
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `migration-outage-${Date.now()}`,
      args: [
        {
          org: 'octo-org',
          repositories: REPOS,
          lockRepositories: true,
          deleteArchiveAfterDownload: true,
          poll: { initialIntervalMs: 2_000, maxIntervalMs: 10_000 },
          // The cap of the backoff between failed polls, lowered so the end of the outage is noticed soon.
          outage: QUICK_OUTAGE_BACKOFF,
        },
      ],
    });
    const firstPoll = () => handle.query(migrationStatusQuery).catch(() => undefined);
    await waitFor('the first answered poll', firstPoll, (status) => status?.phase === 'waiting' && status.polls >= 1, 60_000);

    const outageEndsAt = (await stack.clock.sync()) + SHORT_OUTAGE_MS;
    stack.emulator.resetStats();
    // Every API call (any method, any path) fails: every other one 502 with an HTML page, the rest reset.
    stack.emulator.setFaults([
      { kind: 'status', status: 502, html: true, every: 2, activeUntilMs: outageEndsAt },
      { kind: 'reset', activeUntilMs: outageEndsAt },
    ]);

    const result = await handle.result();
    // It could not have finished while every call failed.
    expect((await handle.describe()).closeTime!.getTime()).toBeGreaterThanOrEqual(outageEndsAt);

    const stats = stack.emulator.stats;
    expect(stats.byStatus['502']).toBeGreaterThan(3);
    expect(stats.faultsInjected - (stats.byStatus['502'] ?? 0)).toBeGreaterThan(3); // the resets
    // Exactly one export: no start call after the first one.
    expect(stack.emulator.migrations.all()).toHaveLength(1);
    expect(stats.byRoute['POST /orgs/:org/migrations'] ?? 0).toBe(0);
    expect(result.migrationId).toBe(stack.emulator.migrations.all()[0].id);
    expect(result.unlockedRepositories).toEqual(REPOS);
    for (const repo of REPOS) expect(stack.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
    expect(stats.byRoute['DELETE /orgs/:org/migrations/:id/archive']).toBeGreaterThanOrEqual(1);

    const final = await handle.query(migrationStatusQuery);
    expect(final.phase).toBe('done');
    expect(final.failedPolls).toBeGreaterThanOrEqual(3);
    expect(final.failuresInRow).toBe(0);
    console.log(`outage test: ${stats.faultsInjected} calls failed (${stats.byStatus['502']} × 502 HTML, the rest reset) in 5 min; ${final.polls} polls answered, ${final.failedPolls} polls failed`);
    expect((await handle.describe()).status.name).toBe('COMPLETED');
  });

  it('takes an archive already gone for deleted: the DELETE whose answer was lost finds it gone when sent again', async () => {
    stack.emulator.resetStats();
    // The server deletes the archive, and the connection is reset before its answer (once).
    stack.emulator.setFaults([{ method: 'DELETE', path: '/archive', kind: 'reset', afterProcessing: true, times: 1 }]);
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `migration-delete-lost-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha'], deleteArchiveAfterDownload: true, poll: { initialIntervalMs: 2_000, maxIntervalMs: 10_000 }, outage: QUICK_OUTAGE_BACKOFF }],
    });
    const result = await handle.result();
    expect(result.state).toBe('exported');
    const stats = stack.emulator.stats;
    expect(stats.faultsInjected).toBe(1);
    // Sent twice: the second found nothing to delete (404) and the migration completed.
    expect(stats.byRoute['DELETE /orgs/:org/migrations/:id/archive']).toBe(2);
    expect(stats.byStatus['404']).toBeGreaterThanOrEqual(1);
    expect((await handle.query(migrationStatusQuery)).phase).toBe('done');
  });
});
