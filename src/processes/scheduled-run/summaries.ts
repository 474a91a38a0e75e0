/**
 * The one-line summary of each of this process's activities in the Temporal UI (`summarized` of the workflow kit):
 * made from the activity's input only, so deterministic. A new activity without one fails the typecheck.
 */
import type { Summaries } from '../../workflows/kit/activity-summaries';
import type { ScheduleHealthActivities } from './activities';

export const SCHEDULE_HEALTH_SUMMARIES: Summaries<ScheduleHealthActivities> = {
  recordScheduledRunFailure: (i) => `Record a failed run of schedule ${i.scheduleId}`,
};
