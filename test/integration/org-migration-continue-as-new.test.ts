/**
 * Bounded histories (issue 8, item 2): with a tiny event budget per run, a migration continues as new between
 * polls, carrying its migration id, locked repositories, counters and outage budget; the last run downloads,
 * unlocks and ends correctly, and no run's history exceeds the budget by more than the end of the work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { migrationStatusQuery, orgMigration } from '../../src/workflows/org-migration';
import type { Emulator } from '../../src/emulator/emulator';
import { emulatorDeps, startTestEmulator } from '../helpers/emulator';
import { startTestWorker, type TestWorker } from '../helpers/temporal';

const REPOS = ['alpha', 'beta', 'gamma'];
const EVENTS_PER_RUN = 50;

/** The runs of a workflow, first to last, following the continued-as-new links; with their event counts. */
async function runsOf(client: Client, workflowId: string, firstRunId: string): Promise<{ runId: string; events: number }[]> {
  const runs: { runId: string; events: number }[] = [];
  for (let runId: string | undefined = firstRunId; runId; ) {
    const { events = [] } = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.push({ runId, events: events.length });
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}

describe('org migration: continue-as-new', () => {
  let emulator: Emulator;
  let tw: TestWorker;
  beforeAll(async () => {
    emulator = await startTestEmulator({
      migrations: { exportMs: 45_000, archiveBytes: 4_096 },
      // The first poll fails (5 attempts of one activity): a failed poll counted in one run must be carried on.
      faults: [{ kind: 'status', status: 502, method: 'GET', path: '/orgs/:org/migrations/:id', times: 5 }],
    });
    tw = await startTestWorker(await emulatorDeps(emulator));
  });
  afterAll(async () => {
    await tw?.stop();
    await emulator?.close();
  });

  it('continues as new between polls with a tiny event budget, carrying its state, and unlocks at the end', async () => {
    const workflowId = `migration-can-${Date.now()}`;
    const handle = await tw.client.workflow.start(orgMigration, {
      taskQueue: tw.taskQueue,
      workflowId,
      args: [
        {
          org: 'octo-org',
          repositories: REPOS,
          lockRepositories: true,
          poll: { initialIntervalMs: 1_000, maxIntervalMs: 1_000 },
          outage: { initialBackoffMs: 1_000 },
          eventsPerRun: EVENTS_PER_RUN,
        },
      ],
    });
    const result = await handle.result();

    expect(emulator.migrations.all()).toHaveLength(1);
    expect(emulator.stats.byRoute['POST /orgs/:org/migrations']).toBe(1);
    expect(result.migrationId).toBe(emulator.migrations.all()[0].id);
    expect(result.unlockedRepositories).toEqual(REPOS);
    for (const repo of REPOS) expect(emulator.migrations.isLocked('octo-org', repo)).toBe(false);

    const runs = await runsOf(tw.client, workflowId, handle.firstExecutionRunId);
    console.log(`continue-as-new test: ${runs.length} runs, events per run ${runs.map((r) => r.events).join(', ')}`);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    // Each run stops at the budget between polls; the last adds the download and the unlocks.
    for (const run of runs.slice(0, -1)) expect(run.events).toBeLessThanOrEqual(EVENTS_PER_RUN + 15);
    expect(runs.at(-1)!.events).toBeLessThanOrEqual(EVENTS_PER_RUN + 40);

    const final = await tw.client.workflow.getHandle<typeof orgMigration>(workflowId).query(migrationStatusQuery);
    expect(final.phase).toBe('done');
    expect(final.continuedAsNew).toBe(runs.length - 1);
    expect(final.migrationId).toBe(result.migrationId);
    // Counted over all runs: the failed poll of the first run, and every answered poll.
    expect(final.failedPolls).toBe(1);
    expect(final.polls).toBe(emulator.stats.byRoute['GET /orgs/:org/migrations/:id'] - 5);
  });
});
