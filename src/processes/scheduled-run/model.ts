/**
 * Permanent failures stop (issue 8, item 6): every Schedule longhaul creates pauses itself after N
 * consecutive failed runs, with a note saying why (shown by `--list` and in the UI), instead of failing
 * the same way on every tick (a deleted hook answers 404 for ever).
 *
 * How the count is kept: nowhere new. A run that is about to fail asks the Schedule for its recent
 * actions (`describe()`, the last 10), looks up how each earlier run ended, and counts the failed ones
 * before it up to the last success. Runs that end by timing out cannot report themselves, but the next
 * failing run counts them. A transient blip that a run waited out is not a failure: the run succeeded.
 *
 * Deterministic: shared by workflows, activities, the starter and tests.
 */
import * as v from 'valibot';
import { wholeBetween } from '../../common/schema';

export const DEFAULT_PAUSE_AFTER_FAILURES = 5;
/** The Schedule keeps its 10 most recent actions: a longer streak could not be seen. */
export const MAX_PAUSE_AFTER_FAILURES = 10;

/** Execution statuses (`WorkflowExecutionStatusName`) that count as a failed run. */
export const FAILED_RUN_STATUSES: readonly string[] = ['FAILED', 'TIMED_OUT'];

/** Failed scheduled runs in a row after which a Schedule pauses itself (`pauseAfterFailures`). */
export const PauseAfterFailuresSchema = v.optional(
  wholeBetween(1, MAX_PAUSE_AFTER_FAILURES, `must be a whole number from 1 to ${MAX_PAUSE_AFTER_FAILURES} (a Schedule shows its last ${MAX_PAUSE_AFTER_FAILURES} runs)`),
);

export interface ScheduledRunFailure {
  scheduleId: string;
  /** Consecutive failed runs (this one included) after which the Schedule is paused. */
  pauseAfterFailures: number;
  /** Why this run failed (goes into the note). */
  reason: string;
}

export interface ScheduledRunFailureResult {
  /** Whether this run was started by the Schedule (a one-off run of the same work does not count). */
  scheduled: boolean;
  /** Failed runs in a row, this one included. */
  consecutiveFailures: number;
  /** Whether this call paused the Schedule. */
  paused: boolean;
  note?: string;
}

/** The note a paused Schedule carries. */
export function autoPauseNote(failures: number, reason: string): string {
  const short = reason.length > 300 ? `${reason.slice(0, 300)}…` : reason;
  return `paused by longhaul after ${failures} consecutive failed runs; last failure: ${short}. Fix the cause, then unpause (--unpause).`;
}

/** Counts the failed runs in a row, newest first, given the statuses of the runs before this one. */
export function consecutiveFailures(earlierStatusesNewestFirst: readonly string[]): number {
  let n = 1;
  for (const status of earlierStatusesNewestFirst) {
    if (!FAILED_RUN_STATUSES.includes(status)) break;
    n++;
  }
  return n;
}
