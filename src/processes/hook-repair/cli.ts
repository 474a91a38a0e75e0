/**
 * The webhook commands, from the starter:
 *
 *   npm run starter -- hook-repair-schedule --org octo-org --hook-id 1 --every 1h [--lookback 24h]
 *   npm run starter -- hook-repair-schedule --repo octo-org/alpha --hook-id 2 --every 30m
 *   npm run starter -- hook-ping --org octo-org --hook-id 1 --wait
 *
 * Creating a schedule is idempotent: running the same command again updates the existing one in place.
 */
import { type Command, Option } from 'commander';
import { hookLabel, hookRepairProblems, hookRepairScheduleId, hookTargetProblems, parseHookTarget, type HookRepairInput, type HookTarget } from './model';
import { LonghaulProcess, LonghaulTarget } from '../../common/search-attributes';
import { HOOK_SCHEDULE_PREFIX, upsertHookRepairSchedule } from './cli-schedule';
import { listSchedules } from '../../temporal/schedules';
import { CliError, printJson, type CliContext } from '../../cli/kit/context';
import { readableWorkflowId, runWorkflowCommand, type OutputFlags } from '../../cli/kit/run-workflow';
import { duration, wholeNumber } from '../../cli/kit/arguments';
import { listingLine, manage, manageOptions, managementAction, recurringInput, seconds, type ManageFlags, type RecurringFlags } from '../scheduled-run/cli';
import { hookPing } from './workflow';
import { Process } from './names';

interface HookFlags extends ManageFlags, RecurringFlags {
  maxRedeliveries?: number;
  org?: string;
  repo?: string;
  hookId?: number;
  every: number;
  lookback?: number;
  perMinute?: number;
  perHour?: number;
  paused?: boolean;
}

function hookTarget(flags: { org?: string; repo?: string; hookId?: number }): { target: HookTarget; hookId: number } {
  const target = parseHookTarget(flags);
  if ('problem' in target) throw new CliError(target.problem, 2);
  if (flags.hookId === undefined) throw new CliError('--hook-id is required', 2);
  const problems = hookTargetProblems(target, flags.hookId);
  if (problems.length) throw new CliError(`invalid hook: ${problems.join('; ')}`, 2);
  return { target, hookId: flags.hookId };
}

async function hookRepairSchedule(flags: HookFlags, context: CliContext): Promise<void> {
  const action = managementAction(flags);
  const client = await context.client();
  if (action === 'list') {
    const schedules = await listSchedules(client, HOOK_SCHEDULE_PREFIX);
    if (flags.json) return printJson({ schedules });
    if (schedules.length === 0) console.log('no hook repair schedules');
    for (const s of schedules) console.log(listingLine(s));
    return;
  }
  const { target, hookId } = hookTarget(flags);
  const scheduleId = hookRepairScheduleId(target, hookId);
  if (action) {
    await manage(client, scheduleId, action);
    if (flags.json) return printJson({ scheduleId, action });
    console.log(`schedule ${scheduleId} ${action}d`);
    return;
  }
  const input: HookRepairInput = {
    target,
    hookId,
    ...(flags.lookback ? { lookbackMs: flags.lookback } : {}),
    ...(flags.perMinute || flags.perHour ? { pacing: { ...(flags.perMinute ? { perMinute: flags.perMinute } : {}), ...(flags.perHour ? { perHour: flags.perHour } : {}) } } : {}),
    ...(flags.maxRedeliveries !== undefined ? { maxRedeliveriesPerGuid: flags.maxRedeliveries } : {}),
    ...recurringInput(flags),
  };
  const problems = hookRepairProblems(input);
  if (problems.length) throw new CliError(`invalid input: ${problems.join('; ')}`, 2);
  const { created } = await upsertHookRepairSchedule(client, { taskQueue: context.config.taskQueue, everyMs: flags.every, input, paused: flags.paused });
  if (flags.json) return printJson({ scheduleId, created, hook: hookLabel(target, hookId), everyMs: flags.every, input, paused: Boolean(flags.paused) });
  console.log(
    `${created ? 'created' : 'updated'} schedule ${scheduleId}: every ${seconds(flags.every)}, redeliver failed deliveries of ${hookLabel(target, hookId)} ` +
      `since the last successful run (the first run looks back ${seconds(input.lookbackMs ?? 24 * 3_600_000)})${flags.paused ? ' (paused)' : ''}`,
  );
}

export function registerHookRepairCommands(program: Command, ctx: () => CliContext): void {
  manageOptions(
    program
      .command('hook-repair-schedule')
      .description('Create or update the Temporal Schedule that redelivers a webhook\u2019s failed deliveries (or --list, --pause, --unpause, --delete)')
      .option('--org <org>', 'an organization webhook')
      .option('--repo <owner/repo>', 'a repository webhook')
      .option('--hook-id <id>', 'the webhook id', wholeNumber)
      .option('--every <duration>', 'how often the schedule fires', duration, 60 * 60_000)
      .option('--lookback <duration>', 'how far back the first run looks (default 24h)', duration)
      .option('--per-minute <n>', 'redeliveries per minute at most (default 70; the limit is 80)', wholeNumber)
      .option('--per-hour <n>', 'redeliveries per hour at most (default 450; the limit is 500)', wholeNumber)
      .option('--max-redeliveries <n>', 'redeliveries of one delivery (guid) over all runs before giving up on it (default 3)', wholeNumber),
  ).action(async (flags: HookFlags) => hookRepairSchedule(flags, ctx()));

  program
    .command(Process.HookPing)
    .description('Ping a webhook (its health check: POST …/pings, 204)')
    .option('--org <org>', 'an organization webhook')
    .option('--repo <owner/repo>', 'a repository webhook')
    .option('--hook-id <id>', 'the webhook id', wholeNumber)
    .option('--wait', 'wait for the answer')
    .addOption(new Option('--json', 'print one JSON object'))
    .action(async (flags: OutputFlags & { org?: string; repo?: string; hookId?: number }) => {
      const { target, hookId } = hookTarget(flags);
      process.exitCode = await runWorkflowCommand<[{ target: HookTarget; hookId: number }], { hook: string; status: number; pingedAt: string }, never>({
        ctx: ctx(),
        workflow: hookPing,
        summary: `Ping ${hookLabel(target, hookId)}`,
        workflowId: readableWorkflowId(Process.HookPing, [hookLabel(target, hookId)]),
        args: [{ target, hookId }],
        searchAttributes: [
          { key: LonghaulProcess, value: Process.HookPing },
          { key: LonghaulTarget, value: hookLabel(target, hookId) },
        ],
        flags,
        describeResult: (r) => [`${r.hook} answered the ping with ${r.status} at ${r.pingedAt}`],
      });
    });
}
