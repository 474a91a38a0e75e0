/**
 * The lifecycle of running work, for every process kind, by workflow id or natural key:
 *
 *   longhaul status <id> | --org O --repos a,b | --repo owner/repo | --name <resource>
 *   longhaul wait <id> [--follow]   (alias: result)
 *   longhaul watch <id>             (wait --follow)
 *   longhaul cancel <id>            (waits for the cleanup and reports it: "unlocked alpha, beta")
 *   longhaul list [--process org-migration] [--org O] [--state exporting] [--running|--closed]
 *                   (a migration's row ends with where its archive went: `→ s3://…` or the worker's path)
 *
 * Natural keys map to the ids the start commands derive (`migrationWorkflowId`) or, for ids with a time in
 * them, to the search attributes the workflows keep (`LonghaulTarget`).
 */
import { type Command, Option } from 'commander';
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription, type WorkflowHandle } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common';
import { ARCHIVE_MEMO, migrationWorkflowId, type MigrationArchive } from '../processes/org-migration/model';
import type { UnreadablePayload } from '../temporal/codec';
import { failureMessage, memoTolerant } from '../temporal/tolerant-client';
import { statusQuery } from '../workflows/kit/status-tracker';
import { LonghaulOrg, LonghaulProcess, LonghaulState, LonghaulTarget } from '../common/search-attributes';
import { CliError, printJson, type CliContext } from './kit/context';
import { ExitCode } from '../common/exit-codes';
import { awaitOutcome, decodeHeartbeat, printOutcome } from './kit/run-workflow';
import { PROCESS_KINDS, PROCESS_NAMES } from '../processes';
import type { ProcessKind } from '../processes/descriptor';
import { processClause, type ProcessName } from '../common/processes';
import { Process as SourceImportProcess } from '../processes/source-import/names';

interface KeyFlags {
  org?: string;
  repos?: string;
  repo?: string;
  name?: string;
  json?: boolean;
}

function withKeyOptions(command: Command): Command {
  return command
    .argument('[workflowId]', 'the workflow id (printed by the start command)')
    .option('--org <org>', 'or a migration by its organization…')
    .option('--repos <names>', '…and its repositories, comma-separated (any order)')
    .option('--repo <owner/repo>', 'or the latest import into this repository')
    .option('--name <resource>', 'or the latest Google operation on this resource (key, bucket, managed zone name)')
    .addOption(new Option('--json', 'print one JSON object'));
}

/** A value inside a visibility query: refused when it could break out of its quotes. */
function quoted(value: string, flag: string): string {
  if (/['"\\]/.test(value)) throw new CliError(`${flag} must not contain quotes or backslashes`, ExitCode.Usage);
  return `'${value}'`;
}

/** The workflow id the arguments name: given, derived from a migration's key, or found by search attribute. */
async function resolveWorkflowId(ctx: CliContext, id: string | undefined, flags: KeyFlags): Promise<string> {
  if (id) return id;
  if (flags.org && flags.repos) return migrationWorkflowId(flags.org, flags.repos.split(/[\s,]+/).filter(Boolean));
  let query: string;
  if (flags.repo) {
    if (!/^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/.test(flags.repo)) throw new CliError('--repo must be owner/repo', ExitCode.Usage);
    query = `${processClause(SourceImportProcess.SourceImport)} AND ${LonghaulTarget.name} = ${quoted(flags.repo, '--repo')}`;
  } else if (flags.name) query = `${LonghaulTarget.name} = ${quoted(flags.name, '--name')}`;
  else throw new CliError('give a workflow id, or --org and --repos, --repo owner/repo, or --name RESOURCE', ExitCode.Usage);
  const client = memoTolerant(await ctx.client());
  const running = await listIds(client, `${query} AND ExecutionStatus = 'Running'`, 10);
  if (running.length > 1) throw new CliError(`several running workflows match (${running.join(', ')}); give the workflow id`, ExitCode.Usage);
  if (running.length === 1) return running[0];
  const latest = await listIds(client, query, 1);
  if (latest.length === 0) throw new CliError(`no workflow matches ${flags.repo ? `--repo ${flags.repo}` : `--name ${flags.name}`}`);
  return latest[0];
}

async function listIds(client: Client, query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query, pageSize: limit })) {
    ids.push(wf.workflowId);
    if (ids.length >= limit) break;
  }
  return ids;
}

/** The handle and description of an existing workflow; a missing one is a clear error. */
async function existing(ctx: CliContext, id: string | undefined, flags: KeyFlags): Promise<{ handle: WorkflowHandle; description: WorkflowExecutionDescription }> {
  const workflowId = await resolveWorkflowId(ctx, id, flags);
  const client = await ctx.client();
  const handle = client.workflow.getHandle(workflowId);
  try {
    // Described through a client that reads a memo it cannot decrypt as unreadable (status works without the key).
    return { handle, description: await memoTolerant(client).workflow.getHandle(workflowId).describe() };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new CliError(`no workflow ${workflowId}`);
    throw err;
  }
}

/** The `status` query, or undefined when it cannot answer (no worker, a workflow without one). */
async function queryStatus(handle: WorkflowHandle): Promise<unknown> {
  try {
    return await handle.query(statusQuery());
  } catch {
    return undefined;
  }
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** Running activities: what the workflow waits on, and why (attempts, last failure, next attempt). */
function pendingActivities(handle: WorkflowHandle, d: WorkflowExecutionDescription) {
  return Promise.all(
    (d.raw.pendingActivities ?? []).map(async (a) => ({
      activity: a.activityType?.name ?? '?',
      attempt: a.attempt ?? 1,
      lastFailure: await failureMessage(handle.client, a.lastFailure),
      nextAttemptAt: iso(optionalTsToMs(a.nextAttemptScheduleTime)),
      heartbeat: await decodeHeartbeat(handle, a.heartbeatDetails?.payloads?.[0]),
    })),
  );
}

/**
 * The status with its `nextPollInMs` taken from a quiet poll waiting for its next attempt: during a quiet
 * stretch the polls are the attempts of one activity, and the workflow's own figure dates from the stretch's
 * start (it learns of the polls only when the stretch ends), while the attempt's time is the next poll.
 */
export function withNextQuietPoll(raw: unknown, pending: readonly { activity: string; nextAttemptAt?: string }[], nowMs: number): unknown {
  if (raw === null || typeof raw !== 'object' || !('nextPollInMs' in raw)) return raw;
  const quiet = pending.find((p) => p.activity.startsWith('quiet') && p.nextAttemptAt !== undefined);
  return quiet ? { ...raw, nextPollInMs: Math.max(0, Date.parse(quiet.nextAttemptAt!) - nowMs) } : raw;
}

async function status(ctx: CliContext, id: string | undefined, flags: KeyFlags): Promise<number> {
  const { handle, description: d } = await existing(ctx, id, flags);
  const kind = processKind(d.type);
  const pending = await pendingActivities(handle, d);
  const raw = withNextQuietPoll(await queryStatus(handle), pending, Date.now());
  const line = raw !== undefined && kind.describeStatus ? kind.describeStatus(raw, pending.find((p) => p.heartbeat)?.heartbeat, d.workflowId).line : undefined;
  const attrs = d.typedSearchAttributes;
  const view = {
    workflowId: d.workflowId,
    runId: d.runId,
    workflowType: d.type,
    workflowStatus: d.status.name,
    summary: await d.staticSummary(),
    process: attrs.get(LonghaulProcess) ?? kind.process,
    state: attrs.get(LonghaulState),
    target: attrs.get(LonghaulTarget),
    line,
    startTime: d.startTime.toISOString(),
    closeTime: d.closeTime?.toISOString(),
    pending: pending.map(({ heartbeat: _h, ...p }) => p),
    status: raw,
    uiUrl: ctx.uiLink(d.workflowId),
  };
  if (flags.json) printJson(view);
  else {
    console.log(`${view.workflowId}  ${view.workflowType}  ${view.workflowStatus}`);
    if (view.summary) console.log(`  ${view.summary}`);
    if (line) console.log(`  ${line}`);
    console.log(`  started ${view.startTime}${view.closeTime ? `, closed ${view.closeTime}` : ''}`);
    for (const p of view.pending) {
      const why = p.lastFailure ? `, last failure: ${p.lastFailure}` : '';
      console.log(`  waiting on ${p.activity} (attempt ${p.attempt}${why}${p.nextAttemptAt ? `, next attempt ${p.nextAttemptAt}` : ''})`);
    }
    if (view.uiUrl) console.log(`  ${view.uiUrl}`);
  }
  return ExitCode.Success;
}

async function wait(ctx: CliContext, id: string | undefined, flags: KeyFlags & { follow?: boolean }): Promise<number> {
  const { handle, description: d } = await existing(ctx, id, flags);
  const kind = processKind(d.type);
  const describe = flags.follow && kind.describeStatus ? (s: unknown, heartbeat?: unknown) => kind.describeStatus!(s, heartbeat, d.workflowId) : undefined;
  const outcome = await awaitOutcome<unknown, unknown>(handle, describe);
  printOutcome(outcome, flags.json, kind.describeResult);
  return outcome.exitCode;
}

async function cancel(ctx: CliContext, id: string | undefined, flags: KeyFlags & { wait: boolean }): Promise<number> {
  const { handle, description: d } = await existing(ctx, id, flags);
  if (d.status.name !== 'RUNNING') throw new CliError(`${d.workflowId} is not running (${d.status.name})`);
  await handle.cancel();
  if (!flags.wait) {
    if (flags.json) printJson({ workflowId: d.workflowId, cancelRequested: true });
    else console.log(`cancellation of ${d.workflowId} requested`);
    return ExitCode.Success;
  }
  console.error(`cancelling ${d.workflowId}: waiting for its cleanup…`);
  const outcome = await awaitOutcome(handle);
  const kind = processKind(d.type);
  const final = await queryStatus(handle);
  const cleanup = final !== undefined && kind.describeCleanup ? kind.describeCleanup(final) : undefined;
  const cancelled = outcome.workflowStatus === 'CANCELLED';
  if (flags.json) printJson({ workflowId: d.workflowId, workflowStatus: outcome.workflowStatus, cleanup, status: final, ...(cancelled ? {} : { error: outcome.error }) });
  else if (cancelled) console.log(`cancelled ${d.workflowId}${cleanup ? `: ${cleanup}` : ''}`);
  else console.error(`error: ${d.workflowId} ended ${outcome.workflowStatus.toLowerCase()} before the cancellation took effect${outcome.error ? `: ${outcome.error.message}` : ''}`);
  // The command did what was asked when the workflow ended cancelled; otherwise say how it ended instead.
  return cancelled ? ExitCode.Success : outcome.exitCode || ExitCode.Failed;
}

interface ListFlags {
  process?: ProcessName;
  org?: string;
  state?: string;
  target?: string;
  running?: boolean;
  closed?: boolean;
  limit: string;
  json?: boolean;
}

/** The visibility query of `list`'s filters (through longhaul's search attributes). */
export function listQuery(flags: Omit<ListFlags, 'limit' | 'json'>): string {
  if (flags.running && flags.closed) throw new CliError('give --running or --closed, not both', ExitCode.Usage);
  const clauses = [
    flags.process ? `${LonghaulProcess.name} = ${quoted(flags.process, '--process')}` : `${LonghaulProcess.name} IS NOT NULL`,
    flags.org ? `${LonghaulOrg.name} = ${quoted(flags.org, '--org')}` : undefined,
    flags.state ? `${LonghaulState.name} = ${quoted(flags.state, '--state')}` : undefined,
    flags.target ? `${LonghaulTarget.name} = ${quoted(flags.target, '--target')}` : undefined,
    flags.running ? `ExecutionStatus = 'Running'` : flags.closed ? `ExecutionStatus != 'Running'` : undefined,
  ];
  return clauses.filter(Boolean).join(' AND ');
}

/**
 * Where a migration's archive went, from its memo (`ARCHIVE_MEMO`, set the moment the archive is stored): the
 * object's URL or the file on the worker's disk. Absent while it is not stored yet, and for runs from before it
 * was recorded.
 */
export function archiveOfMemo(memo: Record<string, unknown> | undefined): (Partial<MigrationArchive> & { where: string }) | undefined {
  const archive = memo?.[ARCHIVE_MEMO];
  if (archive === null || typeof archive !== 'object') return undefined;
  const { url, path, unreadable } = archive as Partial<MigrationArchive> & Partial<UnreadablePayload>;
  if (typeof unreadable === 'string') return { where: `(unreadable: ${unreadable})` };
  const where = typeof url === 'string' ? url : typeof path === 'string' ? path : undefined;
  return where === undefined ? undefined : { ...(archive as Partial<MigrationArchive>), where };
}

async function list(ctx: CliContext, flags: ListFlags): Promise<number> {
  const limit = Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new CliError('--limit must be a positive whole number', ExitCode.Usage);
  const query = listQuery(flags);
  // Memos are payloads (encrypted with a codec key): one this CLI cannot read is marked, not fatal to the list.
  const client = memoTolerant(await ctx.client());
  const rows = [];
  for await (const wf of client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
    const a = wf.typedSearchAttributes;
    const archive = archiveOfMemo(wf.memo);
    rows.push({
      workflowId: wf.workflowId,
      workflowType: wf.type,
      workflowStatus: wf.status.name,
      process: a.get(LonghaulProcess),
      org: a.get(LonghaulOrg),
      state: a.get(LonghaulState),
      target: a.get(LonghaulTarget),
      startTime: wf.startTime.toISOString(),
      closeTime: wf.closeTime?.toISOString(),
      ...(archive ? { archive } : {}),
    });
    if (rows.length >= limit) break;
  }
  if (flags.json) printJson({ query, workflows: rows });
  else if (rows.length === 0) console.error(`no workflows match (${query})`);
  else for (const r of rows) console.log([r.workflowId, r.workflowStatus, r.process ?? r.workflowType, r.state ?? '-', r.target ?? '-', r.startTime, ...(r.archive ? [`→ ${r.archive.where}`] : [])].join('  '));
  return ExitCode.Success;
}

export function registerLifecycleCommands(program: Command, ctx: () => CliContext): void {
  withKeyOptions(program.command('status').description('Show a workflow: phase, remote state, polls, what it waits on and why, next poll')).action(
    async (id: string | undefined, flags: KeyFlags) => {
      process.exitCode = await status(ctx(), id, flags);
    },
  );
  withKeyOptions(program.command('wait').alias('result').description('Wait for a workflow\u2019s end and print its result (exit code per how it ended)'))
    .option('--follow', 'show live progress (on stderr) meanwhile')
    .action(async (id: string | undefined, flags: KeyFlags & { follow?: boolean }) => {
      process.exitCode = await wait(ctx(), id, flags);
    });
  withKeyOptions(program.command('watch').description('Follow a running workflow\u2019s progress (on stderr) to its end, then print its result')).action(
    async (id: string | undefined, flags: KeyFlags) => {
      process.exitCode = await wait(ctx(), id, { ...flags, follow: true });
    },
  );
  withKeyOptions(program.command('cancel').description('Cancel a workflow, wait for its cleanup (e.g. repositories unlocked) and report it'))
    .option('--no-wait', 'only request the cancellation')
    .action(async (id: string | undefined, flags: KeyFlags & { wait: boolean }) => {
      process.exitCode = await cancel(ctx(), id, flags);
    });
  program
    .command('list')
    .description('List longhaul workflows, newest first, filtered through their search attributes; a migration\u2019s row ends with where its archive went')
    .addOption(new Option('--process <kind>', 'process kind').choices(PROCESS_NAMES))
    .option('--org <org>', 'organization or owner')
    .option('--state <state>', 'remote state as last seen (exporting, importing, RUNNING…)')
    .option('--target <target>', 'target (owner/repo, resource name)')
    .option('--running', 'only running workflows')
    .option('--closed', 'only closed workflows')
    .option('--limit <n>', 'at most this many', '100')
    .addOption(new Option('--json', 'print one JSON object'))
    .action(async (flags: ListFlags) => {
      process.exitCode = await list(ctx(), flags);
    });
}

/** The kind of a workflow type; unknown types (other workflows on the namespace) show their raw JSON. */
function processKind(workflowType: string): ProcessKind {
  return PROCESS_KINDS[workflowType] ?? { process: workflowType, describeResult: (r) => [JSON.stringify(r, null, 2)] };
}
