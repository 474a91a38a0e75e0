/**
 * Deleting a feed's Schedule, and optionally ending its cursor, without the cursor coming back.
 *
 * A poll run asks the cursor for its poll with Update-with-Start. A run still in flight when the cursor
 * ends (waiting out an outage, or not yet at its first request) would therefore start a **fresh** cursor,
 * which delivers the feed's whole window again and then stays open. So the cursor is stopped only once no
 * poll run of the feed is in flight: the Schedule's own running actions (known at once) and any one-off
 * `feed-poll` run (found through visibility). A run that outlasts the wait keeps the cursor alive, and the
 * caller says so; the same call made again later finishes the job.
 *
 * Used by the starter (`feed-schedule --delete [--forget-cursor]`) and the feeds benchmark.
 */
import { ScheduleNotFoundError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { feedCursorWorkflowId, feedScheduleId, type FeedCursorStatus } from './model';
import { LonghaulTarget } from '../../common/search-attributes';
import { feedCursorStatusQuery, stopFeedCursorSignal } from './workflow';
import { processClause } from '../../common/processes';
import { Process } from './names';

export interface FeedScheduleDeleteOptions {
  /** Also end the feed's cursor workflow (a new Schedule then starts from the whole feed). */
  forgetCursor?: boolean;
  /** How long to wait for poll runs in flight before giving up on ending the cursor. @format milliseconds */
  runsTimeoutMs?: number;
  /** Told once, when there are runs to wait for. */
  onWaiting?: (workflowIds: string[]) => void;
}

export interface FeedScheduleDeletion {
  scheduleId: string;
  /** False when there was no Schedule (only possible with `forgetCursor`; otherwise that is an error). */
  scheduleDeleted: boolean;
  /** Poll runs that were in flight and ended before the cursor was stopped. */
  waitedFor: string[];
  /** Poll runs still in flight at the deadline: the cursor was left running because of them. */
  stillRunning: string[];
  /** The cursor was asked to stop (false: not asked, or there was no cursor). */
  cursorEnded: boolean;
  /** The cursor's status just before it was asked to stop. */
  cursorStatus?: FeedCursorStatus;
}

export const DEFAULT_RUNS_TIMEOUT_MS = 2 * 60_000;

/**
 * Deletes the feed's Schedule. With `forgetCursor`, then waits (bounded) for the feed's poll runs in flight
 * and stops its cursor. Throws `ScheduleNotFoundError` when there is no Schedule and the cursor is kept.
 */
export async function deleteFeedSchedule(client: Client, feed: string, o: FeedScheduleDeleteOptions = {}): Promise<FeedScheduleDeletion> {
  const scheduleId = feedScheduleId(feed);
  const scheduledRuns: string[] = [];
  let scheduleDeleted = true;
  try {
    const schedule = client.schedule.getHandle(scheduleId);
    // Paused first, so no action starts between reading the running ones and the delete.
    await schedule.pause('being deleted from longhaul');
    const { info } = await schedule.describe();
    scheduledRuns.push(...info.runningActions.map((a) => a.workflow.workflowId));
    await schedule.delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError) || !o.forgetCursor) throw err;
    scheduleDeleted = false;
  }
  const deletion: FeedScheduleDeletion = { scheduleId, scheduleDeleted, waitedFor: [], stillRunning: [], cursorEnded: false };
  if (!o.forgetCursor) return deletion;

  const deadline = Date.now() + (o.runsTimeoutMs ?? DEFAULT_RUNS_TIMEOUT_MS);
  const waitedFor = new Set<string>();
  for (;;) {
    const running = await runningPollRuns(client, feed, scheduledRuns);
    if (running.length === 0) break;
    if (waitedFor.size === 0) o.onWaiting?.(running);
    running.forEach((id) => waitedFor.add(id));
    const left = deadline - Date.now();
    if (left <= 0) return { ...deletion, waitedFor: [...waitedFor].filter((id) => !running.includes(id)), stillRunning: running };
    // Until they end or the deadline; then look again, since a one-off run may have started meanwhile.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(running.map((id) => client.workflow.getHandle(id).result())),
      new Promise((resolve) => (timer = setTimeout(resolve, left))),
    ]);
    clearTimeout(timer);
  }

  const cursor = client.workflow.getHandle(feedCursorWorkflowId(feed));
  try {
    const cursorStatus = await cursor.query(feedCursorStatusQuery);
    await cursor.signal(stopFeedCursorSignal);
    return { ...deletion, waitedFor: [...waitedFor], cursorEnded: true, cursorStatus };
  } catch (err) {
    // No cursor (never polled), or it has ended already.
    if (err instanceof WorkflowNotFoundError) return { ...deletion, waitedFor: [...waitedFor] };
    throw err;
  }
}

/** The feed's poll runs still running: the given ids (the Schedule's) and any found through visibility. */
async function runningPollRuns(client: Client, feed: string, scheduledRuns: readonly string[]): Promise<string[]> {
  const ids = new Set(scheduledRuns);
  const query = `${processClause(Process.FeedPoll)} AND ${LonghaulTarget.name} = '${feed.replace(/'/g, "\\'")}' AND ExecutionStatus = 'Running'`;
  for await (const wf of client.workflow.list({ query })) ids.add(wf.workflowId);
  const running: string[] = [];
  for (const id of ids) {
    const status = await client.workflow
      .getHandle(id)
      .describe()
      .then((d) => d.status.name)
      .catch((err: unknown) => (err instanceof WorkflowNotFoundError ? 'GONE' : Promise.reject(err)));
    if (status === 'RUNNING') running.push(id);
  }
  return running;
}
