/**
 * Recurring work on Temporal Schedules, from the starter:
 *
 *   npm run starter -- feed-schedule --feed /repos/octo-org/alpha/events --every 1m [--sink file|file:PATH|https://…|logging:projects/P]
 *   npm run starter -- feed-schedule --list
 *   npm run starter -- feed-schedule --feed /repos/octo-org/alpha/events --pause | --unpause | --delete [--forget-cursor [--runs-timeout 2m]]
 *   npm run starter -- feed-poll --feed /repos/octo-org/alpha/events --wait
 *   npm run starter -- hook-repair-schedule --org octo-org --hook-id 1 --every 1h [--lookback 24h]
 *   npm run starter -- hook-repair-schedule --repo octo-org/alpha --hook-id 2 --every 30m
 *   npm run starter -- hook-ping --org octo-org --hook-id 1 --wait
 *
 * Creating a schedule is idempotent: running the same command again updates the existing one in place.
 */
import { type Command, Option } from 'commander';
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import {
  feedCursorWorkflowId,
  feedRunProblems,
  feedScheduleId,
  isFeedProblem,
  parseFeed,
  parseSinkSpec,
  describeFeedOutcome,
  DEFAULT_LOG_ID,
  sinkSecretName,
  sinkTrustRefusal,
  type FeedPollOutcome,
  type FeedPollRunInput,
  type SinkConfig,
} from '../feed-poll/model';
import { hookLabel, hookRepairProblems, hookRepairScheduleId, hookTargetProblems, parseHookTarget, type HookRepairInput, type HookTarget } from '../hook-repair/model';
import { LonghaulProcess, LonghaulTarget } from '../../common/search-attributes';
import { DEFAULT_RUNS_TIMEOUT_MS, deleteFeedSchedule, type FeedScheduleDeletion } from '../../temporal/feed-schedule-delete';
import { FEED_SCHEDULE_PREFIX, HOOK_SCHEDULE_PREFIX, listSchedules, upsertFeedSchedule, upsertHookRepairSchedule, type ScheduleListing } from '../../temporal/schedules';
import { CliError, printJson, type CliContext } from '../../cli/kit/context';
import { readableWorkflowId, runWorkflowCommand, type OutputFlags } from '../../cli/kit/run-workflow';
import { duration, positiveSeconds, wholeNumber } from '../../cli/kit/arguments';
import { feedCursorStatusQuery, feedPollRun } from '../feed-poll/workflow';
import { hookPing } from '../hook-repair/workflow';
import { Process } from '../../common/processes';

type ScheduleAction = 'pause' | 'unpause' | 'delete' | 'list';

interface ManageFlags {
  list?: boolean;
  pause?: boolean;
  unpause?: boolean;
  delete?: boolean;
  json?: boolean;
}

/** The one management action asked for, or undefined for create/update. */
function managementAction(flags: ManageFlags): ScheduleAction | undefined {
  const asked = (['list', 'pause', 'unpause', 'delete'] as const).filter((a) => flags[a]);
  if (asked.length > 1) throw new CliError(`give one of --${asked.join(', --')}`, 2);
  return asked[0];
}

function seconds(ms: number | undefined): string {
  return ms === undefined ? '?' : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function canonicalFeed(feed: string | undefined): string {
  if (!feed) throw new CliError('--feed is required (e.g. --feed /repos/OWNER/REPO/events)', 2);
  const ref = parseFeed(feed);
  if (isFeedProblem(ref)) throw new CliError(ref.problem, 2);
  return ref.path;
}

function sinkFrom(spec: string | undefined, flags: { sinkSecret?: string; sinkSecretEnv?: string }): SinkConfig | undefined {
  if (flags.sinkSecretEnv !== undefined) {
    throw new CliError('--sink-secret-env is refused: name a signing secret configured on the workers with --sink-secret NAME (LONGHAUL_SINK_SECRETS=NAME, LONGHAUL_SINK_<NAME>_SECRET or _FILE)', 2);
  }
  if (flags.sinkSecret !== undefined && !/^https?:\/\//.test(spec ?? '')) throw new CliError('--sink-secret goes with an http(s):// --sink', 2);
  if (spec === undefined) return undefined;
  const sink = parseSinkSpec(spec, flags.sinkSecret);
  if ('problem' in sink) throw new CliError(sink.problem, 2);
  return sink;
}

/** Refuses, before anything starts, what a sink may no longer carry (a path outside the data directory, a secretEnv). */
function checkSinkTrust(sink: SinkConfig, feed: string): void {
  const refused = sinkTrustRefusal(sink, feed);
  if (refused) throw new CliError(`${refused.message} (nothing was started)`, 2);
}

function describeSink(sink: SinkConfig): string {
  switch (sink.kind) {
    case 'file':
      return `the JSON-lines file ${sink.path ?? '(default: feeds/<feed>.jsonl)'} in the worker's data directory`;
    case 'http':
      return `${sink.url}, signed with the sink secret ${JSON.stringify(sinkSecretName(sink))} configured on the workers`;
    case 'logging':
      return `Cloud Logging ${sink.parent}/logs/${sink.logId ?? DEFAULT_LOG_ID}`;
  }
}

/** Pause, unpause or delete one schedule; a missing schedule is a clear error. */
async function manage(client: Client, scheduleId: string, action: Exclude<ScheduleAction, 'list'>): Promise<void> {
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

function listingLine(s: ScheduleListing, extra = ''): string {
  const parts = [`${s.scheduleId}`, `every ${seconds(s.everyMs)}`, s.paused ? 'PAUSED' : 'active'];
  if (s.lastActionAt) parts.push(`last run ${s.lastActionAt}`);
  if (!s.paused && s.nextActionAt) parts.push(`next ${s.nextActionAt}`);
  // Why it is paused (by hand, or by longhaul after failed runs).
  const note = s.paused && s.note ? `\n    note: ${s.note}` : '';
  return parts.join(' · ') + extra + note;
}

/** The options every schedule command shares: outage budget and auto-pause. */
interface RecurringFlags {
  outageBudget?: number;
  pauseAfterFailures?: number;
}

/** `--early-wait` (or `--grace`, its former name) as the input's `earlyWaitMs`. */
function earlyWaitInput(flags: { earlyWait?: number; grace?: number }): { earlyWaitMs?: number } {
  if (flags.earlyWait !== undefined && flags.grace !== undefined) throw new CliError('give --early-wait or --grace (its former name), not both', 2);
  const seconds = flags.earlyWait ?? flags.grace;
  return seconds === undefined ? {} : { earlyWaitMs: seconds * 1000 };
}

function recurringInput(flags: RecurringFlags): { outage?: { budgetMs: number }; pauseAfterFailures?: number } {
  return {
    ...(flags.outageBudget !== undefined ? { outage: { budgetMs: flags.outageBudget } } : {}),
    ...(flags.pauseAfterFailures !== undefined ? { pauseAfterFailures: flags.pauseAfterFailures } : {}),
  };
}

interface FeedScheduleFlags extends ManageFlags, RecurringFlags {
  feed?: string;
  every: number;
  sink?: string;
  sinkSecret?: string;
  sinkSecretEnv?: string;
  earlyWait?: number;
  grace?: number;
  paused?: boolean;
  forgetCursor?: boolean;
  runsTimeout?: number;
}

interface FeedPollFlags extends OutputFlags {
  feed?: string;
  sink?: string;
  sinkSecret?: string;
  sinkSecretEnv?: string;
  earlyWait?: number;
  grace?: number;
  workflowId?: string;
}

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

async function feedSchedule(flags: FeedScheduleFlags, context: CliContext): Promise<void> {
  const action = managementAction(flags);
  if (flags.forgetCursor && action !== 'delete') throw new CliError('--forget-cursor goes with --delete', 2);
  if (flags.runsTimeout !== undefined && !flags.forgetCursor) throw new CliError('--runs-timeout goes with --delete --forget-cursor', 2);
  const client = await context.client();
  if (action === 'list') {
    const schedules = await listSchedules(client, FEED_SCHEDULE_PREFIX);
    const withCursors = await Promise.all(
      schedules.map(async (s) => {
        const feed = s.scheduleId.slice(FEED_SCHEDULE_PREFIX.length);
        const cursor = await client.workflow
          .getHandle(feedCursorWorkflowId(feed))
          .query(feedCursorStatusQuery)
          .catch(() => undefined);
        return { ...s, feed, cursor };
      }),
    );
    if (flags.json) return printJson({ schedules: withCursors });
    if (withCursors.length === 0) console.log('no feed schedules');
    for (const s of withCursors) {
      const c = s.cursor?.counters;
      console.log(listingLine(s, c ? ` · cursor: ${c.polls} polls, ${c.notModified} × 304, ${c.skippedEarly} skipped early, ${c.delivered} delivered, ${c.gaps} gap(s)` : ''));
    }
    return;
  }
  const feed = canonicalFeed(flags.feed);
  const scheduleId = feedScheduleId(feed);
  if (action === 'delete') return deleteFeed(client, feed, flags, context);
  if (action) {
    await manage(client, scheduleId, action);
    if (flags.json) return printJson({ scheduleId, feed, action });
    console.log(`schedule ${scheduleId} ${action}d`);
    return;
  }
  const input: FeedPollRunInput = {
    feed,
    sink: sinkFrom(flags.sink, flags) ?? { kind: 'file' },
    ...earlyWaitInput(flags),
    ...recurringInput(flags),
  };
  checkSinkTrust(input.sink, feed);
  const problems = feedRunProblems(input);
  if (problems.length) throw new CliError(`invalid input: ${problems.join('; ')}`, 2);
  const { created } = await upsertFeedSchedule(client, { taskQueue: context.config.taskQueue, everyMs: flags.every, input, paused: flags.paused });
  if (flags.json) return printJson({ scheduleId, created, feed, everyMs: flags.every, sink: input.sink, paused: Boolean(flags.paused) });
  console.log(`${created ? 'created' : 'updated'} schedule ${scheduleId}: polls ${feed} every ${seconds(flags.every)} into ${describeSink(input.sink)}${flags.paused ? ' (paused)' : ''}`);
  console.log(`the feed's cursor lives in workflow ${feedCursorWorkflowId(feed)}${context.uiLink(feedCursorWorkflowId(feed)) ? `: ${context.uiLink(feedCursorWorkflowId(feed))}` : ''}`);
}

/**
 * `--delete [--forget-cursor]`. The cursor ends only once no poll run of the feed is in flight (one would
 * start a fresh cursor): a run that outlasts `--runs-timeout` leaves it running, and the command says so
 * and exits 1; run again (the Schedule may be gone by then), it finishes the job.
 */
async function deleteFeed(client: Client, feed: string, flags: FeedScheduleFlags, context: CliContext): Promise<void> {
  const scheduleId = feedScheduleId(feed);
  let deletion: FeedScheduleDeletion;
  try {
    deletion = await deleteFeedSchedule(client, feed, {
      forgetCursor: flags.forgetCursor,
      runsTimeoutMs: flags.runsTimeout,
      onWaiting: (ids) => {
        if (!flags.json) console.error(`waiting for ${ids.length} poll run(s) in flight before ending the cursor: ${ids.join(', ')}`);
      },
    });
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new CliError(`there is no schedule ${scheduleId}`);
    throw err;
  }
  const { scheduleDeleted, waitedFor, stillRunning, cursorEnded } = deletion;
  if (stillRunning.length > 0) {
    throw new CliError(
      `${scheduleDeleted ? `schedule ${scheduleId} deleted, but its` : 'the'} cursor ${feedCursorWorkflowId(feed)} is kept: ` +
        `${stillRunning.length} poll run(s) still in flight after ${seconds(flags.runsTimeout ?? DEFAULT_RUNS_TIMEOUT_MS)} (${stillRunning.join(', ')}), ` +
        `and ending the cursor now would let them start a fresh one. Run the same command again once they have ended` +
        `${context.uiLink(stillRunning[0]!) ? ` (${context.uiLink(stillRunning[0]!)})` : ''}, or cancel them.`,
    );
  }
  if (flags.json) return printJson({ scheduleId, feed, action: 'delete', scheduleDeleted, cursorForgotten: cursorEnded, waitedFor });
  const schedulePart = scheduleDeleted ? `schedule ${scheduleId} deleted` : `there was no schedule ${scheduleId}`;
  if (!flags.forgetCursor) console.log(`${schedulePart} (its cursor is kept: re-creating the schedule resumes where it stopped)`);
  else console.log(`${schedulePart}; ${cursorEnded ? `its cursor ${feedCursorWorkflowId(feed)} ended` : 'it had no running cursor'}`);
}

/** The sink of the feed's schedule, so a one-off poll delivers where the scheduled ones do. */
async function scheduledSink(client: Client, feed: string): Promise<SinkConfig | undefined> {
  try {
    const d = await client.schedule.getHandle(feedScheduleId(feed)).describe();
    const args = d.action.type === 'startWorkflow' ? (d.action.args as FeedPollRunInput[] | undefined) : undefined;
    return args?.[0]?.sink;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return undefined;
    throw err;
  }
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

const manageOptions = (cmd: Command) =>
  cmd
    .option('--outage-budget <duration>', 'how long a run waits out an API outage before it fails (default 6h)', duration)
    .option('--pause-after-failures <n>', 'pause the schedule after this many failed runs in a row (default 5, at most 10)', wholeNumber)
    .option('--list', 'list the schedules of this kind')
    .option('--pause', 'pause the schedule')
    .option('--unpause', 'resume a paused schedule')
    .option('--delete', 'delete the schedule')
    .option('--paused', 'create (or update) the schedule paused')
    .addOption(new Option('--json', 'print one JSON object'));

export function registerScheduleCommands(program: Command, ctx: () => CliContext): void {
  manageOptions(
    program
      .command('feed-schedule')
      .description('Create or update the Temporal Schedule that polls an activity feed (or --list, --pause, --unpause, --delete)')
      .option('--feed <path>', 'the feed, e.g. /repos/OWNER/REPO/events, /orgs/ORG/events, /users/USER/received_events')
      .option('--every <duration>', 'how often the schedule fires (runs before the server\u2019s X-Poll-Interval are skipped)', duration, 60_000)
      .option('--sink <sink>', 'file (default), file:PATH, an http(s):// URL, or logging:projects/P[/logs/LOG_ID]')
      .option('--sink-secret <name>', 'the HTTP sink\u2019s signing secret, by name, as configured on the workers (default: "default", LONGHAUL_SINK_SECRET; more with LONGHAUL_SINK_SECRETS)')
      .addOption(new Option('--sink-secret-env <NAME>', 'refused: use --sink-secret NAME').hideHelp())
      .option('--early-wait <seconds>', 'how early a run may fire and still wait for its poll to be due instead of skipping', positiveSeconds)
      .addOption(new Option('--grace <seconds>', 'the former name of --early-wait').argParser(positiveSeconds).hideHelp()),
  )
    .option('--forget-cursor', 'with --delete: also end the feed\u2019s cursor workflow (a new schedule then starts from the whole feed)')
    .option('--runs-timeout <duration>', 'with --forget-cursor: how long to wait for poll runs in flight before the cursor ends (default 2m)', duration)
    .action(async (flags: FeedScheduleFlags) => feedSchedule(flags, ctx()));

  program
    .command(Process.FeedPoll)
    .description('Poll an activity feed once, now, through its cursor (shared with the feed\u2019s schedule)')
    .option('--feed <path>', 'the feed, e.g. /repos/OWNER/REPO/events')
    .option('--sink <sink>', 'where new events go (default: the sink of the feed\u2019s schedule, else file)')
    .option('--sink-secret <name>', 'the HTTP sink\u2019s signing secret, by name, as configured on the workers')
    .addOption(new Option('--sink-secret-env <NAME>', 'refused: use --sink-secret NAME').hideHelp())
    .option('--early-wait <seconds>', 'how early it may come and still wait for the poll to be due instead of skipping', positiveSeconds)
    .addOption(new Option('--grace <seconds>', 'the former name of --early-wait').argParser(positiveSeconds).hideHelp())
    .option('--workflow-id <id>', 'workflow id (default: readable and unique)')
    .option('--wait', 'wait for the outcome')
    .addOption(new Option('--json', 'print one JSON object'))
    .action(async (flags: FeedPollFlags) => {
      const feed = canonicalFeed(flags.feed);
      const context = ctx();
      const sink = sinkFrom(flags.sink, flags) ?? (await scheduledSink(await context.client(), feed)) ?? { kind: 'file' };
      checkSinkTrust(sink, feed);
      const input: FeedPollRunInput = { feed, sink, origin: 'manual', ...earlyWaitInput(flags) };
      const problems = feedRunProblems(input);
      if (problems.length) throw new CliError(`invalid input: ${problems.join('; ')}`, 2);
      process.exitCode = await runWorkflowCommand<[FeedPollRunInput], FeedPollOutcome, never>({
        ctx: context,
        workflow: feedPollRun,
        summary: `Poll ${feed} once`,
        workflowId: flags.workflowId ?? readableWorkflowId(Process.FeedPoll, [feed]),
        args: [input],
        searchAttributes: [
          { key: LonghaulProcess, value: Process.FeedPoll },
          { key: LonghaulTarget, value: feed },
        ],
        flags,
        describeResult: describeFeedOutcome,
      });
    });

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
