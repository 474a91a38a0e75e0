/** Driving real Temporal Schedules from tests: trigger one action and wait for its workflow's result. */
import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { waitFor } from './wait';

/** Workflow ids of the actions a schedule has taken so far (oldest first). */
export async function scheduleRuns(client: Client, scheduleId: string): Promise<string[]> {
  const d = await client.schedule.getHandle(scheduleId).describe();
  return d.info.recentActions.map((a) => (a.action.type === 'startWorkflow' ? a.action.workflow.workflowId : '')).filter(Boolean);
}

/** Triggers the schedule once and returns the result of the run it started. */
export async function triggerAndWait<R>(client: Client, scheduleId: string, overlap = ScheduleOverlapPolicy.BUFFER_ONE): Promise<R> {
  // A schedule names its runs by the second: a second run within the same second would reuse the id.
  const last = (await client.schedule.getHandle(scheduleId).describe()).info.recentActions.at(-1)?.takenAt.getTime();
  if (last !== undefined && Math.floor(last / 1000) >= Math.floor(Date.now() / 1000)) await new Promise((r) => setTimeout(r, 1050 - (Date.now() % 1000)));
  const before = new Set(await scheduleRuns(client, scheduleId));
  await client.schedule.getHandle(scheduleId).trigger(overlap);
  const runs = await waitFor(`a new run of ${scheduleId}`, () => scheduleRuns(client, scheduleId), (ids) => ids.some((id) => !before.has(id)));
  const id = runs.filter((x) => !before.has(x)).at(-1)!;
  return (await client.workflow.getHandle(id).result()) as R;
}

/** Deletes schedules and terminates workflows a test left behind (ignoring ones already gone). */
export async function cleanUp(client: Client, scheduleIds: string[], workflowIds: string[] = []): Promise<void> {
  for (const id of scheduleIds) await client.schedule.getHandle(id).delete().catch(() => undefined);
  for (const id of workflowIds) await client.workflow.getHandle(id).terminate('test over').catch(() => undefined);
}
