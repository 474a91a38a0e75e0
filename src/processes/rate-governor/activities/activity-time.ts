/**
 * The running activity's time, as the governor link sees it: its cancellation, and how long its attempt may
 * still send a mutation, and the waits it shows.
 *
 * A mutation waits in the link for its slot (and for the window's budget) inside the activity's attempt. If the
 * attempt outlives its start-to-close timeout there, the server schedules the next attempt while this one keeps
 * waiting and still sends when its slot comes: the same request reaches the API twice (200 migrations sent 644
 * unlocks for 600 locked repositories). So past its send deadline an attempt sends nothing and fails "not sent"
 * (a refusal: the next attempt, or `sendOnce`, sends it once).
 */
import type { Context } from '@temporalio/activity';
import { currentActivity } from '../../../temporal/current-activity';
import type { SharedLimitWait } from '../../../common/shared-wait';
import type { Clock } from '../../../common/clock';

/**
 * Waits for `work` unless the running activity is cancelled first (a worker shutting down cancels its
 * activities and waits for them). An ask whose Update the governor never answers — every worker that runs the
 * governor's tasks is stopping — must not hold the last worker's shutdown for ever. Outside an activity: `work`.
 */
export function untilCancelled<T>(work: Promise<T>): Promise<T> {
  const ctx = currentActivity();
  return ctx ? Promise.race([work, ctx.cancelled]) : work;
}

/**
 * @format milliseconds — the most of an attempt's time kept back from sending: the request itself (the HTTP
 * core's steps and the API's answer) must fit before the server's start-to-close timeout ends the attempt.
 * A quarter of a short timeout (tests' `apiCallTimeoutMs`).
 */
export const ATTEMPT_SEND_MARGIN_MS = 10_000;

function sendMarginMs(timeoutMs: number): number {
  return Math.min(ATTEMPT_SEND_MARGIN_MS, Math.round(timeoutMs / 4));
}

/**
 * When each activity execution (one attempt) first asked the link: its start, as near as the worker knows it.
 * Not `info.currentAttemptScheduledTimestampMs`: that is when the attempt was scheduled, and a task that
 * waited in a busy queue would find its deadline already near or past when it starts.
 */
const firstAsked = new WeakMap<Context, number>();

/**
 * The last moment (epoch ms, `clock`) the running attempt may send a request, or undefined outside an activity
 * or without a timeout. The server starts the attempt's clock when it hands the task out, a moment before the
 * activity's first request here; the margin covers that too.
 */
export function attemptSendDeadline(clock: Clock): number | undefined {
  const ctx = currentActivity();
  if (!ctx) return undefined;
  let started = firstAsked.get(ctx);
  if (started === undefined) firstAsked.set(ctx, (started = clock()));
  const { startToCloseTimeoutMs: attempt, scheduleToCloseTimeoutMs: total, scheduledTimestampMs: scheduled } = ctx.info;
  const ends: number[] = [];
  if (attempt > 0) ends.push(started + attempt - sendMarginMs(attempt));
  if (total > 0) ends.push(scheduled + total - sendMarginMs(total));
  return ends.length > 0 ? Math.min(...ends) : undefined;
}

/** A wait held in the link shows in the activity's heartbeat details (see `common/shared-wait.ts`). */
export function showSharedWait(sharedLimitWait: SharedLimitWait): void {
  const ctx = currentActivity();
  // An activity that heartbeats for itself (a download's resume point) keeps its own details.
  if (ctx && !ctx.info.heartbeatTimeoutMs) ctx.heartbeat({ sharedLimitWait });
}
