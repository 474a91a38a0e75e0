/**
 * The feed commands, from the starter:
 *
 *   npm run starter -- feed-schedule --feed /repos/octo-org/alpha/events --every 1m [--sink file|file:PATH|https://…|logging:projects/P]
 *   npm run starter -- feed-schedule --list
 *   npm run starter -- feed-schedule --feed /repos/octo-org/alpha/events --pause | --unpause | --delete [--forget-cursor [--runs-timeout 2m]]
 *   npm run starter -- feed-poll --feed /repos/octo-org/alpha/events --wait
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
} from './model';
import { LonghaulProcess, LonghaulTarget } from '../../common/search-attributes';
import { DEFAULT_RUNS_TIMEOUT_MS, deleteFeedSchedule, type FeedScheduleDeletion } from './cli-schedule-delete';
import { FEED_SCHEDULE_PREFIX, upsertFeedSchedule } from './cli-schedule';
import { listSchedules } from '../../temporal/schedules';
import { CliError, printJson, type CliContext } from '../../cli/kit/context';
import { readableWorkflowId, runWorkflowCommand, type OutputFlags } from '../../cli/kit/run-workflow';
import { duration, positiveSeconds } from '../../cli/kit/arguments';
import { earlyWaitInput, listingLine, manage, manageOptions, managementAction, recurringInput, seconds, type ManageFlags, type RecurringFlags } from '../scheduled-run/cli';
import { feedCursorStatusQuery, feedPollRun } from './workflow';
import { Process } from './names';

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

export function registerFeedCommands(program: Command, ctx: () => CliContext): void {
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
}
