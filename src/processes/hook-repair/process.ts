/** The webhook delivery repair (and the webhook ping) as the rest of longhaul sees them (see src/processes/descriptor.ts). */
import { HOOK_FAILURES } from './failures';
import { defineProcess } from '../descriptor';
import { Process } from './names';
import { LonghaulOrg, LonghaulProcess, LonghaulState, LonghaulTarget } from '../../common/search-attributes';
import { hookPing, hookRepair } from './workflow';
import { HOOK_SUMMARIES } from './summaries';
import { registerHookRepairCommands } from './cli';
import { HOOK_SCHEDULE_PREFIX } from './cli-schedule';

export const hookRepairProcess = defineProcess({
  name: 'hook-repair',
  processNames: [Process.HookRepair, Process.HookPing],
  workflows: [hookRepair, hookPing],
  activities: () => import('./activities').then((m) => m.createHookActivities),
  summaries: HOOK_SUMMARIES,
  failures: [HOOK_FAILURES],
  kinds: {
    [hookPing.name]: { process: Process.HookPing, describeResult: (r) => [`${(r as { hook: string }).hook} answered the ping with ${(r as { status: number }).status}`] },
  },
  commands: { group: 'start', register: registerHookRepairCommands },
  searchAttributes: [LonghaulProcess, LonghaulOrg, LonghaulTarget, LonghaulState],
  schedules: [{ idPrefix: HOOK_SCHEDULE_PREFIX, workflowType: hookRepair.name }],
});
