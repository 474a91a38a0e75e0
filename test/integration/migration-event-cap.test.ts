/**
 * The 10,000-event cap for a migration polled every second (issue 8, "must show"): on the time-skipping test
 * server, an export that never finishes is polled at 1 s (initial = max) until the poll timeout; every run of the
 * continue-as-new chain stays at or under 10,000 events, and the workflow ends as documented — MigrationTimedOut
 * after the whole timeout (not restarted by continue-as-new), one export only, every repository unlocked.
 *
 * With quiet polls the whole wait is one activity whose attempts are the polls (1 h: 3,600 polls, one run of
 * 56 events, about 20 s of wall time); before them each poll was a timer, an HTTP activity and two workflow
 * tasks, and the hour took a chain of 10 runs of about 4,100 events each. The cap still matters for the waits
 * whose every answer is a change (an import's progress), and the test keeps it honest for any future change.
 * `npm test` runs one hour of workflow time; `LONGHAUL_CAP_TEST_HOURS=24 npx vitest run
 * test/integration/migration-event-cap.test.ts` runs the day (the JVM's optimising compiler helps: `longRun`).
 */
import { describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { EVENT_CAP_PER_RUN } from '../../src/temporal/history-stats';
import { useTimeSkippingStack } from '../helpers/stack';
import { followContinueAsNew } from '../helpers/history';
import { expectFailure } from '../helpers/failures';
import { FAST_POLL } from '../helpers/presets';

const HOUR_MS = 3_600_000;
const HOURS = Number(process.env.LONGHAUL_CAP_TEST_HOURS ?? 1);
const REPOS = ['alpha', 'beta', 'gamma'];
const UNLIMITED = 1_000_000_000;

describe(`a migration polled every second for ${HOURS} h (time-skipping)`, () => {
  const stack = useTimeSkippingStack({
    longRun: HOURS > 1,
    emulator: {
      // This export (30 days of the environment's time) stays `exporting` for the whole test; the rate limits
      // are lifted, as the test is about events per run, not about the hourly request budget.
      migrations: { exportMs: 30 * 24 * HOUR_MS, pendingFraction: 0 },
      rateLimit: { limit: UNLIMITED, secondary: { pointsPerWindow: UNLIMITED, maxConcurrent: UNLIMITED } },
    },
  });

  it('keeps every run of the chain at or under 10,000 events and ends MigrationTimedOut with the repositories unlocked', async () => {
    const workflowId = `cap-migration-${HOURS}h-${Date.now()}`;
    const wallStart = Date.now();
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: { ...FAST_POLL, timeoutMs: HOURS * HOUR_MS } }],
    });
    await expectFailure(handle.result(), 'MigrationTimedOut');
    const wallMs = Date.now() - wallStart;
    const runs = await followContinueAsNew(stack.client, workflowId);
    // The timeout counts from the first run: continue-as-new does not restart it. Measured on the history's own
    // timestamps (the server's clock may skip on once the result is in, e.g. to another workflow's timer).
    const elapsed = runs.at(-1)!.lastEventAtMs! - runs[0].startedAtMs!;
    expect(elapsed).toBeGreaterThanOrEqual(HOURS * HOUR_MS - 60_000);
    expect(elapsed).toBeLessThan(HOURS * HOUR_MS + 10 * 60_000);
    const polls = stack.emulator.stats.byRoute['GET /orgs/:org/migrations/:id'] ?? 0;
    console.log(
      `[event cap] ${HOURS} h of 1-s polls: ${polls} polls, ${runs.length} runs, events per run ${runs.map((r) => r.events).join(', ')}; ${(wallMs / 1000).toFixed(1)} s wall`,
    );
    for (const run of runs) expect(run.events, `run ${run.runId}`).toBeLessThanOrEqual(EVENT_CAP_PER_RUN);
    // Quiet polls: the unchanged answers add nothing to the history (a plain poll was about 11 events).
    expect(runs.reduce((sum, r) => sum + r.events, 0)).toBeLessThan(polls / 10);
    expect(runs.slice(0, -1).every((r) => r.closedBy === 'workflowExecutionContinuedAsNew')).toBe(true);
    expect(runs.at(-1)!.closedBy).toBe('workflowExecutionFailed');
    // Every second really was polled, across every run.
    expect(polls).toBeGreaterThanOrEqual(HOURS * 3_600 * 0.98);
    expect(polls).toBeLessThanOrEqual(HOURS * 3_600 + 5);

    // One export, never started again by a later run; all its repositories unlocked.
    expect(stack.emulator.migrations.all()).toHaveLength(1);
    for (const repo of REPOS) expect(stack.emulator.migrations.isLocked('octo-org', repo), repo).toBe(false);
    // ~45 ms of wall time per poll here; generous for a loaded machine.
  }, 10 * 60_000 + HOURS * 10 * 60_000);
});
