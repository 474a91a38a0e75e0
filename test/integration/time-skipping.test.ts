/**
 * The time-skipping test server works here: a migration that waits out its whole 24-hour poll window on durable
 * timers ends (as documented: MigrationTimedOut, repositories unlocked) after a day of workflow time and a few
 * seconds of wall time.
 */
import { describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { useTimeSkippingStack } from '../helpers/stack';
import { followContinueAsNew } from '../helpers/history';
import { expectFailure } from '../helpers/failures';

const DAY_MS = 24 * 3_600_000;

describe('time-skipping test server', () => {
  // An export of 10 days of the environment's time: it never finishes within the 24-hour poll window.
  const stack = useTimeSkippingStack({ emulator: { migrations: { exportMs: 10 * DAY_MS } } });

  it('runs a migration that waits 24 hours of workflow time to its documented timeout, with every repository unlocked', async () => {
    const startedAt = await stack.env.currentTimeMs();
    const workflowId = `ts-migration-24h-${Date.now()}`;
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ org: 'octo-org', repositories: ['alpha', 'beta'], lockRepositories: true, poll: { initialIntervalMs: 60_000, maxIntervalMs: 600_000, timeoutMs: DAY_MS } }],
    });
    await expectFailure(handle.result(), 'MigrationTimedOut');
    // Its close time, not the environment's time now (which may skip on once no workflow runs).
    expect((await handle.describe()).closeTime!.getTime()).toBeGreaterThanOrEqual(startedAt + DAY_MS - 600_000);
    expect(stack.emulator.migrations.isLocked('octo-org', 'alpha')).toBe(false);
    expect(stack.emulator.migrations.isLocked('octo-org', 'beta')).toBe(false);
    // 1-minute polls growing to 10 minutes: well over a hundred polls, nearly all of them attempts of one quiet
    // poll activity (the export never changes), so the history stays a few dozen events.
    const polls = stack.emulator.stats.byRoute['GET /orgs/:org/migrations/:id'] ?? 0;
    expect(polls).toBeGreaterThan(100);
    const runs = await followContinueAsNew(stack.client, workflowId);
    expect(runs.reduce((sum, run) => sum + run.events, 0)).toBeLessThan(polls);
  });
});
