/**
 * The activity side of quiet polls (`src/common/quiet-poll-schedule.ts`): one poll activity made
 * into an activity whose attempts are the polls of a stretch without change. Each attempt makes the poll its
 * attempt number stands for; an answer the workflow already has fails benignly with `nextRetryDelay` to the
 * schedule's next poll, so the wait between polls is Temporal's retry backoff: no workflow task, no history
 * event. The Temporal UI shows the stretch as the pending activity: its attempt (polls so far), the last
 * "unchanged" message and when the next poll is due.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { asFirstAttempt } from '../http/attempt';
import type { Polled } from '../common/poll-schedule';
import { nextQuietDelayMs, QuietPoll, quietPollAt, type QuietPollAnswer, type QuietPollRequest } from '../common/quiet-poll-schedule';

/** Whether an answer tells the workflow nothing new: a 304, or the same observation under the same validator. */
export function unchangedAnswer<T>(polled: Polled<T>, last: T | undefined, etag: string | undefined): boolean {
  if (last === undefined) return false;
  if (polled.notModified === true) return true;
  const { etag: answered, notModified: _, ...value } = polled as T & { etag?: string; notModified?: undefined };
  return (answered ?? etag) === etag && JSON.stringify(value) === JSON.stringify(last);
}

/**
 * Now on the clock the schedule is written in (the workflow's, i.e. the Temporal server's): the worker's
 * clock, unless it is behind the poll's due time plus the time this attempt has run, as on the time-skipping
 * test server, where an hour passes in seconds (an attempt starts when the server's retry timer for its due
 * time fires, so that is the server's time then).
 */
export function serverNowMs(dueAtMs: number, startedAtMs: number, nowMs = Date.now()): number {
  return Math.max(nowMs, dueAtMs + (nowMs - startedAtMs));
}

/**
 * `poll` (a poll activity of the same worker) made quiet. A failed poll ends the activity with
 * `QuietPoll.Ended` around the poll's own failure (judged as a first attempt by the HTTP core, since the
 * attempts before it were polls, not retries), so the workflow's outage budget decides what comes next.
 */
export function quietly<I extends object, T>(poll: (input: I & { etag?: string }) => Promise<Polled<T>>) {
  return async (input: I & QuietPollRequest<T>): Promise<QuietPollAnswer<Polled<T>>> => {
    const { schedule, last, etag, ...target } = input;
    const { attempt } = Context.current().info;
    const startedAtMs = Date.now();
    const at = quietPollAt(schedule, attempt);
    let polled: Polled<T>;
    try {
      polled = await asFirstAttempt(() => poll({ ...(target as I), ...(etag !== undefined ? { etag } : {}) }));
    } catch (err) {
      const cause = err instanceof Error ? err : new Error(String(err));
      throw ApplicationFailure.create({
        type: QuietPoll.Ended,
        nonRetryable: true,
        message: `poll ${at.n} failed: ${cause.message}`,
        details: [{ polls: attempt - 1, n: at.n, dueAtMs: at.dueAtMs }],
        cause,
      });
    }
    const made = { polls: attempt, ...at };
    if (!unchangedAnswer(polled, last, etag)) return { kind: 'changed', polled, ...made };
    const delayMs = nextQuietDelayMs(schedule, at, serverNowMs(at.dueAtMs, startedAtMs));
    if (delayMs === undefined) return { kind: 'unchanged', ...made };
    throw ApplicationFailure.create({
      type: QuietPoll.Unchanged,
      message: `unchanged at poll ${at.n} (${polled.notModified ? 'not modified' : 'same answer'}); next poll in ${Math.ceil(delayMs / 1000)} s`,
      nextRetryDelay: delayMs,
      category: ApplicationFailureCategory.BENIGN,
    });
  };
}
