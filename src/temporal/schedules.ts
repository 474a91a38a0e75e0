/**
 * longhaul's Temporal Schedules: one per activity feed (`feed:<feed>`, starting `feedPollRun`) and one
 * per webhook (`hook-repair:<hook>`, starting `hookRepair`). Creating is idempotent: an existing
 * Schedule is updated in place (its spec and action), which keeps its history and, for the hook
 * repair, the last successful run's result that the next run starts from.
 *
 * Used by the starter, the tests and the benchmark, so all three drive Schedules the same way.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleDescription, type ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { feedScheduleId, type FeedPollRunInput } from '../processes/feed-poll/model';
import { hookLabel, hookRepairScheduleId, type HookRepairInput } from '../processes/hook-repair/model';
import { fitSearchAttributes, LonghaulProcess, LonghaulTarget } from '../common/search-attributes';
import { accumulatedOutageBounds } from '../common/outage';
import { feedPollRun } from '../processes/feed-poll/workflow';
import { hookRepair } from '../processes/hook-repair/workflow';
import { Process, type ProcessName } from '../common/processes';

export const FEED_SCHEDULE_PREFIX = 'feed:';
export const HOOK_SCHEDULE_PREFIX = `${Process.HookRepair}:`;

export interface ScheduleUpsert {
  scheduleId: string;
  created: boolean;
}

interface ScheduledWorkflow {
  scheduleId: string;
  /** @format milliseconds */
  everyMs: number;
  action: ScheduleOptionsStartWorkflowAction<Workflow>;
  note: string;
  target: string;
  process: ProcessName;
  paused?: boolean;
}

async function upsert(client: Client, s: ScheduledWorkflow): Promise<ScheduleUpsert> {
  const spec = { intervals: [{ every: s.everyMs }] };
  // One run at a time; a run that is still going when the next is due makes the schedule skip that tick.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: Math.max(60_000, s.everyMs) };
  const searchAttributes = fitSearchAttributes([
    { key: LonghaulProcess, value: s.process },
    { key: LonghaulTarget, value: s.target },
  ]).pairs;
  // The runs carry them from their start, not only from their first workflow task: visibility finds a run
  // no worker has picked up yet (as `feed-schedule --delete --forget-cursor` must).
  const action = { ...s.action, typedSearchAttributes: searchAttributes };
  try {
    await client.schedule.create({
      scheduleId: s.scheduleId,
      spec,
      action,
      policies,
      typedSearchAttributes: searchAttributes,
      state: { note: s.note, paused: s.paused ?? false },
    });
    return { scheduleId: s.scheduleId, created: true };
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(s.scheduleId).update((previous: ScheduleDescription) => ({
    ...previous,
    spec,
    action,
    policies,
    state: { ...previous.state, note: s.note, paused: s.paused ?? previous.state.paused },
  }));
  return { scheduleId: s.scheduleId, created: false };
}

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
  return upsert(client, {
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

export interface HookRepairScheduleOptions {
  taskQueue: string;
  /** @format milliseconds */
  everyMs: number;
  input: HookRepairInput;
  paused?: boolean;
}

export function upsertHookRepairSchedule(client: Client, o: HookRepairScheduleOptions): Promise<ScheduleUpsert> {
  const hook = hookLabel(o.input.target, o.input.hookId);
  return upsert(client, {
    scheduleId: hookRepairScheduleId(o.input.target, o.input.hookId),
    everyMs: o.everyMs,
    note: `redeliver failed deliveries of ${hook} every ${Math.round(o.everyMs / 1000)} s`,
    target: hook,
    process: Process.HookRepair,
    paused: o.paused,
    action: {
      type: 'startWorkflow',
      workflowType: hookRepair,
      taskQueue: o.taskQueue,
      workflowId: `${Process.HookRepair}:${hook}`,
      args: [o.input],
    },
  });
}

export interface ScheduleListing {
  scheduleId: string;
  paused: boolean;
  note?: string;
  /** @format milliseconds */
  everyMs?: number;
  nextActionAt?: string;
  lastActionAt?: string;
  workflowType?: string;
}

/** Schedules whose id starts with `prefix`, sorted by id. */
export async function listSchedules(client: Client, prefix: string): Promise<ScheduleListing[]> {
  const out: ScheduleListing[] = [];
  for await (const s of client.schedule.list()) {
    if (!s.scheduleId.startsWith(prefix)) continue;
    const every = s.spec?.intervals?.[0]?.every;
    const last = s.info.recentActions.at(-1);
    out.push({
      scheduleId: s.scheduleId,
      paused: s.state.paused,
      note: s.state.note,
      everyMs: typeof every === 'number' ? every : undefined,
      nextActionAt: s.info.nextActionTimes[0]?.toISOString(),
      lastActionAt: last?.takenAt.toISOString(),
      workflowType: s.action?.type === 'startWorkflow' ? s.action.workflowType : undefined,
    });
  }
  return out.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
}
