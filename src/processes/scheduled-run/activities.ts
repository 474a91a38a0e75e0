/**
 * A scheduled run that is about to fail counts the failed runs before it and pauses its Schedule, with
 * a note saying why, once `pauseAfterFailures` runs in a row have failed (see `common/schedule-health`).
 * Uses the worker's own Temporal client (`Context.client`).
 */
import { Context } from '@temporalio/activity';
import { ScheduleNotFoundError } from '@temporalio/client';
import { autoPauseNote, consecutiveFailures, type ScheduledRunFailure, type ScheduledRunFailureResult } from './model';

export function createScheduleHealthActivities() {
  return {
    async recordScheduledRunFailure(input: ScheduledRunFailure): Promise<ScheduledRunFailureResult> {
      const ctx = Context.current();
      const self = ctx.info.workflowExecution?.workflowId;
      const handle = ctx.client.schedule.getHandle(input.scheduleId);
      let description;
      try {
        description = await handle.describe();
      } catch (err) {
        if (err instanceof ScheduleNotFoundError) return { scheduled: false, consecutiveFailures: 1, paused: false };
        throw err;
      }
      const actions = description.info.recentActions.flatMap((a) => (a.action.type === 'startWorkflow' ? [a.action.workflow] : []));
      const index = actions.findIndex((w) => w.workflowId === self);
      // Started by hand (`feed-poll`, a test), not by this Schedule: its failures are not the Schedule's.
      if (index < 0) return { scheduled: false, consecutiveFailures: 1, paused: false };
      const statuses: string[] = [];
      for (const w of actions.slice(Math.max(0, index - input.pauseAfterFailures), index).reverse()) {
        const status = await ctx.client.workflow
          .getHandle(w.workflowId, w.firstExecutionRunId)
          .describe()
          .then((d) => d.status.name as string)
          .catch(() => 'UNKNOWN');
        statuses.push(status);
      }
      const failures = consecutiveFailures(statuses);
      if (failures < input.pauseAfterFailures || description.state.paused) return { scheduled: true, consecutiveFailures: failures, paused: false };
      const note = autoPauseNote(failures, input.reason);
      await handle.pause(note);
      return { scheduled: true, consecutiveFailures: failures, paused: true, note };
    },
  };
}

/** The scheduled run's activities, as its workflow code proxies them. */
export type ScheduleHealthActivities = ReturnType<typeof createScheduleHealthActivities>;
