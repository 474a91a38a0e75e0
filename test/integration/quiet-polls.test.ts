/**
 * Quiet polls across a worker crash: the worker process running a migration's quiet stretch (polls answered
 * 304, each a retried attempt of one activity) is killed with SIGKILL. Nothing of the stretch lived in that
 * process: Temporal dispatches the next attempt to the new worker, which goes on polling on the same
 * schedule, and the migration finishes with one activity per change in its history.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { startStack, type TestStack } from '../helpers/stack';
import { startWorkerChild, stopWorkerProcesses } from '../helpers/worker-process';
import { waitFor } from '../helpers/wait';
import { FAST_POLL } from '../helpers/presets';

const MIGRATION_POLL = 'GET /orgs/:org/migrations/:id';

describe('quiet polls: worker killed with SIGKILL in the middle of a stretch without change', () => {
  let stack: TestStack | undefined;
  afterAll(async () => {
    await stopWorkerProcesses();
    await stack?.stop();
  });

  it('goes on polling from the new worker as the same activity, and the migration finishes', { timeout: 5 * 60_000 }, async () => {
    stack = await startStack({ emulator: { migrations: { exportMs: 20_000, pendingFraction: 0.05, archiveBytes: 10_000 } }, worker: false });
    const { emulator } = stack;
    const child = await startWorkerChild(stack);
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `quiet-sigkill-${Date.now()}`,
      // A 5 s call timeout: a poll the kill catches mid-attempt is given up and retried on the new worker after
      // 5 s, not the default 60 s, so the new worker polls while the export is still quiet.
      args: [{ org: 'octo-org', repositories: ['alpha'], poll: FAST_POLL, apiCallTimeoutMs: 5_000 }],
    });

    // Kill once the stretch has answered 304 a few times (the export is 20 s long; polls come every second).
    await waitFor('a few 304s', async () => emulator.stats.notCountedByRoute[MIGRATION_POLL] ?? 0, (n) => n >= 3, 60_000, 50);
    await child.stop('SIGKILL');
    const pollsAtKill = emulator.stats.byRoute[MIGRATION_POLL];
    await stack.startWorker();
    const result = await handle.result();
    expect(result.state).toBe('exported');
    expect(emulator.stats.byRoute[MIGRATION_POLL]).toBeGreaterThan(pollsAtKill);

    const { events } = await handle.fetchHistory();
    const quiet = (events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'quietGetMigration');
    const quietIds = new Set(quiet.map((e) => String(e.eventId)));
    const attempts = (events ?? []).flatMap((e) => {
      const started = e.activityTaskStartedEventAttributes;
      return started && quietIds.has(String(started.scheduledEventId)) ? [started.attempt ?? 0] : [];
    });
    console.log(`quiet polls across SIGKILL: ${emulator.stats.byRoute[MIGRATION_POLL]} polls (${pollsAtKill} before the kill) in ${quiet.length} quiet activities; attempts ${attempts.join(', ')}`);
    // One activity per change (first answer, exporting, exported at most), however many polls and whichever worker.
    expect(quiet.length).toBeLessThanOrEqual(3);
    // Every poll was an attempt of those activities (one more if the kill lost an attempt before it sent).
    const made = attempts.reduce((a, b) => a + b, 0);
    const polls = emulator.stats.byRoute[MIGRATION_POLL];
    expect(made).toBeGreaterThanOrEqual(polls);
    expect(made).toBeLessThanOrEqual(polls + 1);
  });
});
