/**
 * What the scheduled processes share (see src/processes/descriptor.ts): no workflow type of its own (its
 * `reportingFailureToSchedule` wraps feed-poll's and hook-repair's runs), one activity that records a failed run
 * on its Schedule and pauses it after too many.
 */
import { defineProcess } from '../descriptor';
import { SCHEDULE_HEALTH_SUMMARIES } from './summaries';

export const scheduledRunProcess = defineProcess({
  name: 'scheduled-run',
  processNames: [],
  workflows: [],
  activities: () => import('./activities').then((m) => m.createScheduleHealthActivities),
  summaries: SCHEDULE_HEALTH_SUMMARIES,
});
