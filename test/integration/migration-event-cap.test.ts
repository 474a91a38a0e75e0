/**
 * The 10,000-event cap for a migration polled every second (issue 8, "must show"): on the time-skipping test
 * server, an export that never finishes is polled at 1 s (initial = max) until the poll timeout; every run of the
 * continue-as-new chain stays at or under 10,000 events, and the workflow ends as documented — MigrationTimedOut
 * after the whole timeout (not restarted by continue-as-new), one export only, every repository unlocked.
 *
 * The full day is 86,400 polls (each a timer, an HTTP activity and two workflow tasks). Beyond an hour the test
 * server's JVM may use its optimising compiler (`longRun`): with C1 only, one attempt slowed from ~780 to ~470 polls
 * a minute and reached 13 h in 62 min; with C2 the day finished in 104 min on the 2-core machine while other work
 * loaded it (86,394 polls, 233 runs of at most 4,106 events). `npm test` runs
 * one hour of workflow time (3,600 polls, 10 runs of the chain, about a minute);
 * `LONGHAUL_CAP_TEST_HOURS=24 npx vitest run test/integration/migration-event-cap.test.ts` runs the day.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { orgMigration } from '../../src/workflows/org-migration';
import { EVENT_CAP_PER_RUN } from '../../src/temporal/history-stats';
import { startStack, type TestStack } from '../helpers/stack';
import { createTimeSkippingEnv } from '../helpers/time-skipping';
import { followContinueAsNew } from '../helpers/history';
import { expectFailure } from '../helpers/failures';

const HOUR_MS = 3_600_000;
const HOURS = Number(process.env.LONGHAUL_CAP_TEST_HOURS ?? 1);
const REPOS = ['alpha', 'beta', 'gamma'];
const UNLIMITED = 1_000_000_000;

describe(`a migration polled every second for ${HOURS} h (time-skipping)`, () => {
  let env: TestWorkflowEnvironment;
  let stack: TestStack;

  beforeAll(async () => {
    env = await createTimeSkippingEnv((m) => console.log(`[time-skipping] ${m}`), { longRun: HOURS > 1 });
    stack = await startStack({
      env,
      emulator: {
        // The emulator keeps wall-clock time, so this export stays `exporting` for the whole test; thousands of
        // polls in a few wall minutes must not trip its (wall-clock) rate limits either.
        migrations: { exportMs: 30 * 24 * HOUR_MS, pendingFraction: 0 },
        rateLimit: { limit: UNLIMITED, secondary: { pointsPerWindow: UNLIMITED, maxConcurrent: UNLIMITED } },
      },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await env?.teardown();
  });

  it('keeps every run of the chain at or under 10,000 events and ends MigrationTimedOut with the repositories unlocked', async () => {
    const workflowId = `cap-migration-${HOURS}h-${Date.now()}`;
    const wallStart = Date.now();
    const handle = await env.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: { initialIntervalMs: 1_000, maxIntervalMs: 1_000, timeoutMs: HOURS * HOUR_MS } }],
    });
    await expectFailure(handle.result(), 'MigrationTimedOut');
    const wallMs = Date.now() - wallStart;
    const runs = await followContinueAsNew(env.client, workflowId);
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
