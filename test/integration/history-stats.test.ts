/**
 * The history-size report the suite and the benchmarks print: it finds a run by visibility, reads its real event
 * count, and names runs over the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { describeHistorySizes, historySizeReport, EVENT_CAP_PER_RUN, userNamespaces } from '../../src/temporal/history-stats';
import { startStack, type TestStack } from '../helpers/stack';
import { countEvents, largestPayload, fetchHistory } from '../helpers/history';
import { waitFor } from '../helpers/wait';
import { FAST_POLL } from '../helpers/presets';

describe('history size report', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ emulator: { migrations: { exportMs: 4_500, archiveBytes: 2_048 } } });
  });
  afterAll(() => stack?.stop());

  it('reports the event count of each listed run and the largest of them, with none over the bound', async () => {
    const ids = [`history-stats-a-${Date.now()}`, `history-stats-b-${Date.now()}`];
    for (const [i, workflowId] of ids.entries()) {
      await stack.client.workflow.execute(orgMigration, {
        taskQueue: stack.taskQueue,
        workflowId,
        // The second locks and unlocks three repositories (an activity each), so its history is longer. (Not
        // more frequent polls: unchanged polls are attempts of one quiet poll and add no events.)
        args: [{ org: 'octo-org', repositories: i === 0 ? ['alpha'] : ['alpha', 'beta', 'gamma'], lockRepositories: true, poll: FAST_POLL }],
      });
    }
    const counts = await Promise.all(ids.map((id) => countEvents(stack.client, id)));
    // Visibility is eventually consistent: wait until both closed runs are listed.
    const query = `WorkflowId IN (${ids.map((id) => `'${id}'`).join(', ')}) AND ExecutionStatus != 'Running'`;
    const listed = () => historySizeReport(stack.client, { namespaces: [stack.client.options.namespace], query });
    const report = await waitFor('both closed runs to be listed', listed, (r) => r.runs >= 2, 20_000);
    expect(report.runs).toBe(2);
    expect(counts[1]).toBeGreaterThan(counts[0]);
    expect(report.largest).toMatchObject({ workflowId: ids[1], workflowType: 'orgMigration', historyLength: counts[1] });
    expect(report.overLimit).toEqual([]);
    expect(describeHistorySizes(report)).toBe(`largest history: ${counts[1]} events (orgMigration ${ids[1]}; 2 runs looked at)`);
    expect(await userNamespaces(stack.client)).toContain(stack.client.options.namespace);
  });

  it('names every run over the bound, largest first', () => {
    const run = (workflowId: string, historyLength: number) => ({ namespace: 'default', workflowId, runId: `r-${workflowId}`, workflowType: 'orgMigration', status: 'COMPLETED' as const, historyLength });
    const line = describeHistorySizes({ runs: 3, largest: run('big', 12_000), overLimit: [run('big', 12_000), run('over', EVENT_CAP_PER_RUN + 1)] });
    expect(line).toContain('largest history: 12000 events (orgMigration big; 3 runs looked at)');
    expect(line).toContain(`OVER 10000 EVENTS in 2 run(s): orgMigration big run r-big: 12000; orgMigration over run r-over: ${EVENT_CAP_PER_RUN + 1}`);
  });

  it('finds the largest payload of a history', async () => {
    const workflowId = `history-stats-payload-${Date.now()}`;
    // A 1,500-character download directory makes the input (and the results naming the archive path) the big payloads.
    // Polled every second: the export's end is seen at once, not at the default first poll after 30 s.
    const input = { org: 'octo-org', repositories: ['beta'], downloadDir: `archives/${'deep/'.repeat(300)}`, poll: FAST_POLL };
    await stack.client.workflow.execute(orgMigration, { taskQueue: stack.taskQueue, workflowId, args: [input] });
    const largest = largestPayload(await fetchHistory(stack.client, workflowId));
    expect(largest!.bytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(input)));
    expect(largest!.bytes).toBeLessThan(4_096);
    expect(['workflowExecutionStarted', 'activityTaskScheduled', 'activityTaskCompleted', 'workflowExecutionCompleted']).toContain(largest!.eventType);
  });
});
