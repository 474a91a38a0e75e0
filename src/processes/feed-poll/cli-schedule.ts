/**
 * The Schedule of one activity feed (`feed:<feed>`, starting `feedPollRun`), used by the `feed-schedule`
 * command, the tests and the benchmarks.
 */
import type { Client } from '@temporalio/client';
import { upsertSchedule, type ScheduleUpsert } from '../../temporal/schedules';
import { accumulatedOutageBounds } from '../../common/outage';
import { Process } from './names';
import { feedScheduleId, type FeedPollRunInput } from './model';
import { feedPollRun } from './workflow';

export const FEED_SCHEDULE_PREFIX = 'feed:';

export interface FeedScheduleOptions {
  taskQueue: string;
  /** @format milliseconds */
  everyMs: number;
  input: FeedPollRunInput & { feed: string };
  paused?: boolean;
}

/** Creates or updates the Schedule of one feed. `input.feed` must be canonical (see `parseFeed`). */
export function upsertFeedSchedule(client: Client, o: FeedScheduleOptions): Promise<ScheduleUpsert> {
  const feed = o.input.feed;
  return upsertSchedule(client, {
    scheduleId: feedScheduleId(feed),
    everyMs: o.everyMs,
    note: `poll ${feed} every ${Math.round(o.everyMs / 1000)} s into the ${o.input.sink.kind} sink`,
    target: feed,
    process: Process.FeedPoll,
    paused: o.paused,
    action: {
      type: 'startWorkflow',
      workflowType: feedPollRun,
      taskQueue: o.taskQueue,
      workflowId: `${Process.FeedPoll}:${feed}`,
      args: [{ ...o.input, origin: 'schedule' }],
      // A run that hangs must not hold the schedule (overlap SKIP) forever; one that waits out an outage
      // may take its whole outage budget (later ticks are skipped meanwhile, not piled up).
      workflowExecutionTimeout: accumulatedOutageBounds(o.input.outage).accumulatedBudgetMs + 30 * 60_000,
    },
  });
}
