/**
 * The Schedule of one webhook's repair (`hook-repair:<hook>`, starting `hookRepair`), used by the
 * `hook-repair-schedule` command and the tests.
 */
import type { Client } from '@temporalio/client';
import { upsertSchedule, type ScheduleUpsert } from '../../temporal/schedules';
import { Process } from './names';
import { hookLabel, hookRepairScheduleId, type HookRepairInput } from './model';
import { hookRepair } from './workflow';

export const HOOK_SCHEDULE_PREFIX = `${Process.HookRepair}:`;

export interface HookRepairScheduleOptions {
  taskQueue: string;
  /** @format milliseconds */
  everyMs: number;
  input: HookRepairInput;
  paused?: boolean;
}

export function upsertHookRepairSchedule(client: Client, o: HookRepairScheduleOptions): Promise<ScheduleUpsert> {
  const hook = hookLabel(o.input.target, o.input.hookId);
  return upsertSchedule(client, {
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
