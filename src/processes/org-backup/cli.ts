/**
 * `backup`: an organization's backups on a Temporal Schedule, one per organization and destination.
 *
 *   longhaul backup --org octo-org --archive-to s3://backups/github --every 24h --keep 30d
 *   longhaul backup --org octo-org --archive-to s3://backups/github --now --follow
 *   longhaul backup --list
 *   longhaul backup status --org octo-org
 *   longhaul backup verify --org octo-org [--run 20261128T020000Z]
 *   longhaul backup delete --org octo-org --archive-to s3://backups/github
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { CliError, printJson, type CliContext } from '../../cli/kit/context';
import { ExitCode } from '../../common/exit-codes';
import { CREDENTIAL_OPTION_HELP, credentialName, duration, wholeNumber } from '../../cli/kit/arguments';
import { runWorkflowCommand, withRunOutputOptions, type OutputFlags } from '../../cli/kit/run-workflow';
import { listSchedules, upsertSchedule } from '../../temporal/schedules';
import { LonghaulOrg, LonghaulProcess } from '../../common/search-attributes';
import { Process } from './names';
import { orgBackup } from './workflow';
import { BACKUP_EXCLUDE_FIELDS, BACKUP_EXCLUDE_FLAGS, backupInputProblems, backupScheduleId, coverage, describeBackup, runStamp, type BackupExcludeFlag, type BackupInput, type BackupResult, type BackupStatus } from './model';
import { readRuns, verifyRun, type RunFolder } from './cli-runs';

export const BACKUP_SCHEDULE_PREFIX = 'backup:';
const DEFAULT_EVERY_MS = 24 * 3600_000;

interface BackupFlags extends OutputFlags, Partial<Record<BackupExcludeFlag, boolean>> {
  org?: string;
  archiveTo?: string;
  every?: number;
  cron?: string;
  reposPerExport?: number;
  concurrentExports?: number;
  keep?: number;
  keepGithubArchives?: boolean;
  credential?: string;
  now?: boolean;
  list?: boolean;
  paused?: boolean;
  workflowId?: string;
}

export function describeBackupResult(r: BackupResult): string[] {
  return [
    `backed up ${coverage(r)} of ${r.org} in ${r.exports} exports (${r.halvings} halvings)`,
    `manifest: ${r.manifest}`,
    ...(r.failed.length ? [`failed: ${r.failed.map((f) => `${f.name} (${f.kind}: ${f.reason})`).join('; ')}`] : []),
    ...(r.pruned.length ? [`pruned: ${r.pruned.join(', ')}`] : []),
  ];
}

/** A cron expression of five fields (or Temporal's @daily, @hourly…): refused before anything is sent. */
function cronExpression(value: string): string {
  if (/^@(yearly|annually|monthly|weekly|daily|midnight|hourly)$/.test(value.trim())) return value.trim();
  const fields = value.trim().split(/\s+/);
  if (fields.length !== 5 || !fields.every((f) => /^[\d*,/\-A-Za-z?]+$/.test(f))) throw new InvalidArgumentError('must be a cron expression of five fields ("0 2 * * *") or @daily, @hourly…');
  return value.trim();
}

function inputFrom(flags: BackupFlags, origin: 'schedule' | 'now'): BackupInput {
  if (!flags.org) throw new CliError("required option '--org <org>' not specified", ExitCode.Usage);
  if (!flags.archiveTo) throw new CliError("required option '--archive-to <url>' not specified (s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or azblob://CONTAINER/PREFIX)", ExitCode.Usage);
  const input: BackupInput = {
    org: flags.org,
    archiveTo: flags.archiveTo,
    ...(flags.reposPerExport !== undefined ? { reposPerExport: flags.reposPerExport } : {}),
    ...(flags.concurrentExports !== undefined ? { concurrentExports: flags.concurrentExports } : {}),
    ...(flags.keep !== undefined ? { keepMs: flags.keep } : {}),
    ...(flags.keepGithubArchives ? { keepGithubArchives: true } : {}),
    ...Object.fromEntries(BACKUP_EXCLUDE_FLAGS.filter((f) => flags[f]).map((f) => [f, true])),
    ...(flags.credential ? { credential: flags.credential } : {}),
    origin,
  };
  const problems = backupInputProblems(input);
  if (problems.length) throw new CliError(`invalid input: ${problems.join('; ')} (nothing was started)`, ExitCode.Usage);
  return input;
}

function summaryOf(input: BackupInput): string {
  return `Back up ${input.org} into ${input.archiveTo}`;
}

async function scheduleFor(ctx: CliContext, flags: BackupFlags): Promise<number> {
  if (flags.every !== undefined && flags.cron !== undefined) throw new CliError('give --every or --cron, not both', ExitCode.Usage);
  const input = inputFrom(flags, 'schedule');
  const everyMs = flags.every ?? DEFAULT_EVERY_MS;
  const scheduleId = backupScheduleId(input.org, input.archiveTo);
  const when = flags.cron !== undefined ? `on "${flags.cron}"` : `every ${everyMs / 1000} s`;
  const s = {
    scheduleId,
    everyMs,
    ...(flags.cron !== undefined ? { cron: flags.cron, catchupWindowMs: DEFAULT_EVERY_MS } : {}),
    note: `back up ${input.org} into ${input.archiveTo} ${when}`,
    target: input.archiveTo,
    process: Process.Backup,
    paused: flags.paused,
    action: {
      type: 'startWorkflow' as const,
      workflowType: orgBackup,
      taskQueue: ctx.config.taskQueue,
      workflowId: scheduleId,
      args: [input],
      staticSummary: summaryOf(input),
    },
  };
  if (flags.dryRun) {
    const plan = { dryRun: true, scheduleId, spec: s.cron !== undefined ? { cron: s.cron } : { everyMs }, overlap: 'skip', workflowType: orgBackup.name, input };
    if (flags.json) printJson(plan);
    else console.log(`would create or update schedule ${scheduleId}: ${s.note}\n  input: ${JSON.stringify(input)}`);
    return ExitCode.Success;
  }
  const upserted = await upsertSchedule(await ctx.client(), s);
  if (flags.json) printJson({ scheduleId, created: upserted.created, note: s.note });
  else console.log(`${upserted.created ? 'created' : 'updated'} schedule ${scheduleId}: ${s.note}`);
  return ExitCode.Success;
}

/** The Schedules of `org` (every destination), with the destination each backs up into. */
async function orgSchedules(client: Client, org?: string): Promise<{ scheduleId: string; archiveTo?: string; nextActionAt?: string; paused: boolean; note?: string }[]> {
  const prefix = org ? `${BACKUP_SCHEDULE_PREFIX}${org.toLowerCase()}:` : BACKUP_SCHEDULE_PREFIX;
  const out = [];
  for (const s of await listSchedules(client, prefix)) {
    const described = await client.schedule.getHandle(s.scheduleId).describe();
    const args = described.action.type === 'startWorkflow' ? (described.action.args as BackupInput[] | undefined) : undefined;
    out.push({ scheduleId: s.scheduleId, archiveTo: args?.[0]?.archiveTo, nextActionAt: s.nextActionAt, paused: s.paused, note: s.note });
  }
  return out;
}

function runLines(run: RunFolder | undefined, label: string): string[] {
  if (!run?.manifest) return [`${label}: none`];
  const m = run.manifest;
  return [
    `${label}: ${run.url} (started ${m.startedAt}, finished ${m.finishedAt})`,
    `  coverage: ${m.repositories.length} of ${m.listed} repositories backed up, in ${m.exports.length} archives`,
    ...(m.failed.length ? [`  failed: ${m.failed.map((f) => `${f.name} (${f.kind}: ${f.reason})`).join('; ')}`] : ['  failed: none']),
  ];
}

async function status(ctx: CliContext, flags: { org: string; archiveTo?: string; json?: boolean }): Promise<number> {
  const client = await ctx.client();
  const schedules = await orgSchedules(client, flags.org);
  const destinations = flags.archiveTo ? [flags.archiveTo] : [...new Set(schedules.map((s) => s.archiveTo).filter((a): a is string => !!a))];
  if (destinations.length === 0) throw new CliError(`no backup schedule of ${flags.org}: give --archive-to to read its runs`, ExitCode.Usage);
  const report = [];
  for (const archiveTo of destinations) {
    const runs = await readRuns(archiveTo, flags.org);
    const complete = runs.find((r) => r.manifest);
    const schedule = schedules.find((s) => s.archiveTo === archiveTo);
    const running: { workflowId: string; line: string }[] = [];
    for await (const wf of client.workflow.list({ query: `${LonghaulProcess.name} = '${Process.Backup}' AND ${LonghaulOrg.name} = '${flags.org.replace(/'/g, '')}' AND ExecutionStatus = 'Running'` })) {
      const s = (await client.workflow.getHandle(wf.workflowId).query<BackupStatus>('status').catch(() => undefined)) ?? undefined;
      if (s && s.destination === archiveTo) running.push({ workflowId: wf.workflowId, line: describeBackup(s).line });
    }
    report.push({
      archiveTo,
      scheduleId: schedule?.scheduleId,
      nextRun: schedule?.paused ? 'paused' : schedule?.nextActionAt,
      lastComplete: complete && { url: complete.url, ...complete.manifest!, repositories: complete.manifest!.repositories.length, coverage: { backedUp: complete.manifest!.repositories.length, listed: complete.manifest!.listed } },
      incomplete: runs.filter((r) => !r.manifest).map((r) => r.url),
      running,
    });
    if (!flags.json) {
      console.log(`${flags.org} → ${archiveTo}${schedule ? ` (schedule ${schedule.scheduleId})` : ' (no schedule)'}`);
      for (const line of runLines(complete, 'last complete run')) console.log(`  ${line}`);
      console.log(`  next run: ${schedule ? (schedule.paused ? 'paused' : (schedule.nextActionAt ?? '?')) : 'none scheduled'}`);
      for (const r of running) console.log(`  running: ${r.workflowId}: ${r.line}`);
      const incomplete = runs.filter((r) => !r.manifest && !running.length);
      if (incomplete.length) console.log(`  incomplete (no manifest): ${incomplete.map((r) => r.stamp).join(', ')}`);
    }
  }
  if (flags.json) printJson({ org: flags.org, destinations: report });
  return ExitCode.Success;
}

async function verify(flags: { org: string; archiveTo?: string; run?: string; json?: boolean }, ctx: CliContext): Promise<number> {
  const archiveTo = flags.archiveTo ?? (await orgSchedules(await ctx.client(), flags.org)).find((s) => s.archiveTo)?.archiveTo;
  if (!archiveTo) throw new CliError(`no backup schedule of ${flags.org}: give --archive-to`, ExitCode.Usage);
  const runs = await readRuns(archiveTo, flags.org);
  const run = flags.run ? runs.find((r) => r.stamp === flags.run) : runs.find((r) => r.manifest);
  if (!run) throw new CliError(flags.run ? `no run ${flags.run} of ${flags.org} in ${archiveTo}` : `no complete run of ${flags.org} in ${archiveTo}`);
  if (!run.manifest) throw new CliError(`${run.url} has no ${'manifest.json'}: an incomplete run (in progress, or stopped), nothing to verify`);
  const checked = await verifyRun(run);
  const bad = checked.filter((c) => !c.ok);
  if (flags.json) printJson({ run: run.url, archives: checked.length, repositories: run.manifest.repositories.length, ok: bad.length === 0, problems: bad });
  else {
    for (const c of checked) console.log(`${c.ok ? 'ok' : 'BAD'} ${c.archive} ${c.found ? `${c.found.bytes} bytes sha256 ${c.found.sha256}` : 'missing'}${c.ok ? '' : ` (manifest: ${c.expected.bytes} bytes sha256 ${c.expected.sha256})`}`);
    console.log(`${run.url}: ${checked.length - bad.length} of ${checked.length} archives match the manifest (${run.manifest.repositories.length} repositories)`);
  }
  return bad.length === 0 ? ExitCode.Success : ExitCode.Failed;
}

async function list(ctx: CliContext, json?: boolean): Promise<number> {
  const schedules = await orgSchedules(await ctx.client());
  if (json) printJson({ schedules });
  else if (schedules.length === 0) console.log('no backup schedules');
  else for (const s of schedules) console.log(`${s.scheduleId} · ${s.note ?? ''} · ${s.paused ? 'PAUSED' : `next ${s.nextActionAt ?? '?'}`}`);
  return ExitCode.Success;
}

export function registerBackupCommands(program: Command, ctx: () => CliContext): void {
  const backup = program
    .command('backup')
    .description("Back up every repository of an organization into object storage on a Schedule (or --now): exports that never lock, a manifest per run, retention")
    // `backup status --org X`: options after a subcommand are the subcommand's (both define --org and --archive-to;
    // without this, `backup` took them and `status` reported its --org missing). The program's are positional too.
    .enablePositionalOptions()
    .option('--org <org>', 'organization')
    .option('--archive-to <url>', "s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or azblob://CONTAINER/PREFIX: runs go under PREFIX/ORG/<run start, UTC>/ (credentials from the worker's SDK settings)")
    .option('--every <duration>', 'how often (default 24h)', duration)
    .option('--cron <expression>', 'when, as a cron expression ("0 2 * * *"), instead of --every', cronExpression)
    .option('--repos-per-export <n>', 'at most this many repositories per export (1..5000, default 100)', wholeNumber)
    .option('--concurrent-exports <n>', 'exports running at once (default 4)', wholeNumber)
    .option('--keep <duration>', 'after a complete run, delete runs older than this (never the newest complete one, never one in progress)', duration)
    .option('--keep-github-archives', "keep GitHub's copy of each export archive (default: deleted once stored)")
    .option('--credential <name>', CREDENTIAL_OPTION_HELP, credentialName)
    .option('--now', 'run once now instead of creating the schedule')
    .option('--list', 'list the backup schedules')
    .option('--paused', 'create (or update) the schedule paused');
  for (const f of BACKUP_EXCLUDE_FLAGS) backup.option(`--${BACKUP_EXCLUDE_FIELDS[f].replaceAll('_', '-')}`, BACKUP_EXCLUDE_FIELDS[f]);
  withRunOutputOptions(backup).action(async (flags: BackupFlags) => {
    if (flags.list) {
      process.exitCode = await list(ctx(), flags.json);
      return;
    }
    if (!flags.now) {
      if (flags.wait || flags.follow || flags.workflowId) throw new CliError('--wait, --follow and --workflow-id go with --now (a schedule starts its own runs)', ExitCode.Usage);
      process.exitCode = await scheduleFor(ctx(), flags);
      return;
    }
    if (flags.every !== undefined || flags.cron !== undefined) throw new CliError('--now runs once: leave out --every and --cron', ExitCode.Usage);
    const input = inputFrom(flags, 'now');
    process.exitCode = await runWorkflowCommand({
      ctx: ctx(),
      workflow: orgBackup,
      workflowId: flags.workflowId ?? `backup-${input.org.toLowerCase()}-${runStamp(Date.now())}`,
      args: [input],
      searchAttributes: [
        { key: LonghaulProcess, value: Process.Backup },
        { key: LonghaulOrg, value: input.org },
      ],
      summary: summaryOf(input),
      flags,
      describeResult: describeBackupResult,
      describeStatus: (s: BackupStatus) => ({ line: describeBackup(s).line }),
    });
  });
  backup
    .command('status')
    .description('the last complete run (coverage, failures by name), runs in progress and the next run')
    .requiredOption('--org <org>', 'organization')
    .option('--archive-to <url>', 'the destination (default: every destination of its schedules)')
    .addOption(new Option('--json', 'print one JSON object'))
    .action(async (flags: { org: string; archiveTo?: string; json?: boolean }) => {
      process.exitCode = await status(ctx(), flags);
    });
  backup
    .command('verify')
    .description("read a run's manifest and each archive back; check size and SHA-256")
    .requiredOption('--org <org>', 'organization')
    .option('--archive-to <url>', 'the destination (default: its schedule\u2019s)')
    .option('--run <stamp>', 'the run folder (20261128T020000Z; default: the newest complete run)')
    .addOption(new Option('--json', 'print one JSON object'))
    .action(async (flags: { org: string; archiveTo?: string; run?: string; json?: boolean }) => {
      process.exitCode = await verify(flags, ctx());
    });
  backup
    .command('delete')
    .description("delete the organization's backup schedule for a destination (its stored runs stay)")
    .requiredOption('--org <org>', 'organization')
    .requiredOption('--archive-to <url>', 'the destination')
    .addOption(new Option('--json', 'print one JSON object'))
    .action(async (flags: { org: string; archiveTo: string; json?: boolean }) => {
      const scheduleId = backupScheduleId(flags.org, flags.archiveTo);
      try {
        await (await ctx().client()).schedule.getHandle(scheduleId).delete();
      } catch (err) {
        if (err instanceof ScheduleNotFoundError) throw new CliError(`there is no backup schedule of ${flags.org} into ${flags.archiveTo} (${scheduleId})`);
        throw err;
      }
      if (flags.json) printJson({ scheduleId, deleted: true });
      else console.log(`deleted schedule ${scheduleId} (stored runs stay)`);
    });
}
