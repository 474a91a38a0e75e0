/**
 * longhaul's Temporal Schedules, whatever process they start: each process says what its Schedules start (the
 * feed poll's `feed:<feed>` in `src/processes/feed-poll/cli-schedule.ts`, the hook repair's `hook-repair:<hook>`
 * in `src/processes/hook-repair/cli-schedule.ts`; their descriptors list them). Creating is idempotent: an existing
 * Schedule is updated in place (its spec and action), which keeps its history and, for the hook repair, the last
 * successful run's result that the next run starts from.
 *
 * Used by the starter, the tests and the benchmark, so all three drive Schedules the same way.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleDescription, type ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { fitSearchAttributes, LonghaulProcess, LonghaulTarget } from '../common/search-attributes';
import type { ProcessName } from '../common/processes';

export interface ScheduleUpsert {
  scheduleId: string;
  created: boolean;
}

/** One Schedule: what it starts (the process names its workflow type and input), how often, and its labels. */
export interface ScheduledWorkflow {
  scheduleId: string;
  /** @format milliseconds */
  everyMs: number;
  action: ScheduleOptionsStartWorkflowAction<Workflow>;
  note: string;
  target: string;
  process: ProcessName;
  paused?: boolean;
  /** A cron expression instead of the interval (`everyMs` then only sizes the catch-up window). */
  cron?: string;
  /** @format milliseconds — how far back missed runs are caught up after downtime (default: max(1 min, everyMs)). */
  catchupWindowMs?: number;
}

/** Creates the Schedule, or updates it in place (spec, action, note) when it exists. */
export async function upsertSchedule(client: Client, s: ScheduledWorkflow): Promise<ScheduleUpsert> {
  const spec = s.cron !== undefined ? { cronExpressions: [s.cron] } : { intervals: [{ every: s.everyMs }] };
  // One run at a time; a run that is still going when the next is due makes the schedule skip that tick.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: s.catchupWindowMs ?? Math.max(60_000, s.everyMs) };
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
