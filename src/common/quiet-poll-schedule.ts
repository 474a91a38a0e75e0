/**
 * Quiet polls: a stretch of polls that see no change costs the workflow nothing. The workflow hands one
 * activity the schedule's place and its last observation; each attempt of that activity is one poll, and a poll
 * that sees nothing new fails with `QuietPoll.Unchanged` and `nextRetryDelay` set to the schedule's next poll,
 * so Temporal itself waits and calls again: no timer, no activity events and no workflow task per unchanged
 * poll. The activity returns (or fails with `QuietPoll.Ended`, wrapping the poll's own failure) only when the
 * workflow has something to act on: a change, a failed poll for the outage budget, or the time bound.
 *
 * Pure and shared by both sides: the workflow builds the request, the activity (`src/activities/quiet-poll.ts`)
 * works out from its attempt number which poll of the schedule it is making.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { pollDelayMs, type ResolvedPollBounds } from './poll-schedule';
import { FAILURES, failureTypes } from './failures';

/** Failure types of a quiet poll activity. */
export const QuietPoll = failureTypes(FAILURES.quietPoll);

/** Where the poller's schedule stands when it hands the waiting to a quiet poll. */
export interface QuietSchedule {
  /** Index of the poll the first attempt makes (1-based, as `PollState.n`). */
  n: number;
  /** When that poll is due. @format epoch milliseconds */
  dueAtMs: number;
  /** Start of the schedule the growth counts from. @format epoch milliseconds */
  sinceMs: number;
  /** Start of the wait, the total time bound counts from. @format epoch milliseconds */
  startedAtMs: number;
  bounds: ResolvedPollBounds;
}

/** What a quiet poll activity is given besides its own target. */
export interface QuietPollRequest<T> {
  schedule: QuietSchedule;
  /** The last observation: an answer equal to it (and with the same ETag) is "unchanged". */
  last?: T;
  /** Sent as `If-None-Match` (conditional polls only). */
  etag?: string;
}

/** The polls a quiet poll made, and the schedule's place at its last one. */
export interface QuietProgress {
  /** Polls made, the last one included. */
  polls: number;
  /** Index of the last poll made. */
  n: number;
  /** When the last poll made was due. @format epoch milliseconds */
  dueAtMs: number;
}

/**
 * A quiet poll's answer: `changed` with what its last poll read (the poller's `Polled` shape), or
 * `unchanged` when the schedule's next poll would fall past the time bound (the workflow ends the wait).
 */
export type QuietPollAnswer<P> = QuietProgress & ({ kind: 'changed'; polled: P } | { kind: 'unchanged' });

/**
 * Which poll attempt `attempt` (1-based) of a quiet poll makes, and when it was due: the schedule's polls in
 * order from `schedule.n`, anchored to the schedule (poll latency does not accumulate). Pure.
 */
export function quietPollAt(schedule: QuietSchedule, attempt: number): { n: number; dueAtMs: number } {
  let dueAtMs = schedule.dueAtMs;
  let n = schedule.n;
  for (let i = 1; i < attempt; i++) {
    n++;
    dueAtMs += pollDelayMs(n, schedule.bounds, dueAtMs - schedule.sinceMs);
  }
  return { n, dueAtMs };
}

/**
 * After an unchanged poll `n` (due at `dueAtMs`, made at `nowMs`): how long until the next one, or
 * `undefined` when the next would fall past the time bound. A quiet poll that fell behind its schedule (a
 * slow worker, a dead one) waits a whole interval from now rather than polling back to back to catch up.
 */
export function nextQuietDelayMs(schedule: QuietSchedule, at: { n: number; dueAtMs: number }, nowMs: number): number | undefined {
  const next = quietPollAt({ ...schedule, n: at.n, dueAtMs: at.dueAtMs }, 2);
  const delayMs = next.dueAtMs > nowMs ? next.dueAtMs - nowMs : pollDelayMs(next.n, schedule.bounds, nowMs - schedule.sinceMs);
  return nowMs + delayMs - schedule.startedAtMs > schedule.bounds.timeoutMs ? undefined : delayMs;
}

/** The poll failure inside a `QuietPoll.Ended` failure, with the polls made before it; `undefined` for any other error. */
export function quietPollEnded(err: unknown): (QuietProgress & { cause: unknown }) | undefined {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  if (!(failure instanceof ApplicationFailure) || failure.type !== QuietPoll.Ended) return undefined;
  const made = (failure.details?.[0] ?? {}) as Partial<QuietProgress>;
  return { polls: made.polls ?? 0, n: made.n ?? 0, dueAtMs: made.dueAtMs ?? 0, cause: failure.cause ?? failure };
}
