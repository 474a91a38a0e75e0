/**
 * What every run of recurring work (feed polls, hook repair) shares, in workflow code (outages are waited out
 * by the kit's `OutageWatch`):
 * - `reportingFailureToSchedule`: a run that fails tells its Schedule, which pauses itself with a
 *   note after `pauseAfterFailures` failed runs in a row (see `common/schedule-health`).
 */
import { isCancellation, proxyActivities } from '@temporalio/workflow';
import type { ScheduleHealthActivities } from './activities';
import { OutageFailure } from '../../workflows/kit/outage-watch';
import { SCHEDULE_HEALTH } from '../../workflows/kit/activity-options';
import { summarized } from '../../workflows/kit/activity-summaries';
import { SCHEDULE_HEALTH_SUMMARIES } from './summaries';

/** The failure types of recurring runs: an outage that outlasted the run's budget (the kit's `OutageWatch`). */
export const RecurringFailure = OutageFailure;

const health = summarized(proxyActivities<ScheduleHealthActivities>(SCHEDULE_HEALTH), SCHEDULE_HEALTH_SUMMARIES);

function messageOf(err: unknown): string {
  let e: unknown = err;
  // The innermost cause says what went wrong (an activity's failure inside an ActivityFailure).
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(err);
}

/** Runs `body`; when it fails, reports the failure to the Schedule (which may pause itself) and rethrows. */
export async function reportingFailureToSchedule<T>(opts: { scheduleId: string; pauseAfterFailures: number }, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (!isCancellation(err)) {
      // Best effort: failing to count must not hide the run's own failure.
      await health.recordScheduledRunFailure({ ...opts, reason: messageOf(err) }).catch(() => undefined);
    }
    throw err;
  }
}
