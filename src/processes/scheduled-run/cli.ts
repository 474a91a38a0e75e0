/**
 * What the commands of the scheduled processes share (`feed-schedule` of feed-poll, `hook-repair-schedule` of
 * hook-repair): the management flags (--list, --pause, --unpause, --delete, --paused), the outage budget and
 * auto-pause flags, and the lines that list Schedules. Each process registers its own commands (its `cli.ts`).
 *
 * Creating a schedule is idempotent: running the same command again updates the existing one in place.
 */
import { type Command, Option } from 'commander';
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { ScheduleListing } from '../../temporal/schedules';
import { CliError } from '../../cli/kit/context';
import { duration, wholeNumber } from '../../cli/kit/arguments';

export type ScheduleAction = 'pause' | 'unpause' | 'delete' | 'list';

export interface ManageFlags {
  list?: boolean;
  pause?: boolean;
  unpause?: boolean;
  delete?: boolean;
  json?: boolean;
}

/** The one management action asked for, or undefined for create/update. */
export function managementAction(flags: ManageFlags): ScheduleAction | undefined {
  const asked = (['list', 'pause', 'unpause', 'delete'] as const).filter((a) => flags[a]);
  if (asked.length > 1) throw new CliError(`give one of --${asked.join(', --')}`, 2);
  return asked[0];
}

export function seconds(ms: number | undefined): string {
  return ms === undefined ? '?' : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** Pause, unpause or delete one schedule; a missing schedule is a clear error. */
export async function manage(client: Client, scheduleId: string, action: Exclude<ScheduleAction, 'list'>): Promise<void> {
  const handle = client.schedule.getHandle(scheduleId);
  try {
    if (action === 'pause') await handle.pause('paused from the longhaul starter');
    else if (action === 'unpause') await handle.unpause('resumed from the longhaul starter');
    else await handle.delete();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new CliError(`there is no schedule ${scheduleId}`);
    throw err;
  }
}

export function listingLine(s: ScheduleListing, extra = ''): string {
  const parts = [`${s.scheduleId}`, `every ${seconds(s.everyMs)}`, s.paused ? 'PAUSED' : 'active'];
  if (s.lastActionAt) parts.push(`last run ${s.lastActionAt}`);
  if (!s.paused && s.nextActionAt) parts.push(`next ${s.nextActionAt}`);
  // Why it is paused (by hand, or by longhaul after failed runs).
  const note = s.paused && s.note ? `\n    note: ${s.note}` : '';
  return parts.join(' · ') + extra + note;
}

/** The options every schedule command shares: outage budget and auto-pause. */
export interface RecurringFlags {
  outageBudget?: number;
  pauseAfterFailures?: number;
}

/** `--early-wait` (or `--grace`, its former name) as the input's `earlyWaitMs`. */
export function earlyWaitInput(flags: { earlyWait?: number; grace?: number }): { earlyWaitMs?: number } {
  if (flags.earlyWait !== undefined && flags.grace !== undefined) throw new CliError('give --early-wait or --grace (its former name), not both', 2);
  const seconds = flags.earlyWait ?? flags.grace;
  return seconds === undefined ? {} : { earlyWaitMs: seconds * 1000 };
}

export function recurringInput(flags: RecurringFlags): { outage?: { budgetMs: number }; pauseAfterFailures?: number } {
  return {
    ...(flags.outageBudget !== undefined ? { outage: { budgetMs: flags.outageBudget } } : {}),
    ...(flags.pauseAfterFailures !== undefined ? { pauseAfterFailures: flags.pauseAfterFailures } : {}),
  };
}

export const manageOptions = (cmd: Command) =>
  cmd
    .option('--outage-budget <duration>', 'how long a run waits out an API outage before it fails (default 6h)', duration)
    .option('--pause-after-failures <n>', 'pause the schedule after this many failed runs in a row (default 5, at most 10)', wholeNumber)
    .option('--list', 'list the schedules of this kind')
    .option('--pause', 'pause the schedule')
    .option('--unpause', 'resume a paused schedule')
    .option('--delete', 'delete the schedule')
    .option('--paused', 'create (or update) the schedule paused')
    .addOption(new Option('--json', 'print one JSON object'));
