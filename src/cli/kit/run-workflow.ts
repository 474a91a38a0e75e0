/**
 * Starting a workflow from the CLI (by its function, never a type-name string) and, with `--wait`/`--follow`,
 * seeing it to the end. `--dry-run` validates and prints exactly what would be sent, without connecting.
 * stdout carries only the result; the "started" notice (when waiting) and live progress go to stderr.
 */
import { type Command, Option } from 'commander';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, type WorkflowExecutionDescription, type WorkflowHandle } from '@temporalio/client';
import type { Payload, SearchAttributePair, Workflow } from '@temporalio/common';
import { CliError, describeFailure, printJson, type CliContext } from './context';
import { ExitCode, exitCodeForStatus } from '../../common/exit-codes';
import { sharedWaitLine, sharedWaitOf, type PendingActivityView } from '../../common/shared-wait';
import { fitSearchAttributes } from '../../common/search-attributes';
import { statusQuery } from '../../workflows/kit/status-tracker';
import { failureMessage, memoTolerant } from '../../temporal/tolerant-client';

/** Adds the options every workflow-starting command shares: `--workflow-id`, `--wait`, `--follow`, `--json`, `--dry-run`. */
export function withRunOutputOptions(command: Command): Command {
  return command
    .option('--workflow-id <id>', 'workflow id (default: readable, derived from the input)')
    .option('--wait', 'wait for the result')
    .option('--follow', 'show live progress (on stderr) until the end')
    .option('--dry-run', 'validate and print what would be sent (workflow type, id, task queue, input); start nothing')
    .addOption(new Option('--json', 'print one JSON object'));
}

export interface OutputFlags {
  wait?: boolean;
  json?: boolean;
  follow?: boolean;
  dryRun?: boolean;
}

/** Everything a start sends to Temporal, and nothing else: what `--dry-run` prints. */
export interface StartPlan<Args extends unknown[] = unknown[]> {
  workflow: Workflow;
  workflowId: string;
  taskQueue: string;
  args: Args;
  searchAttributes: SearchAttributePair[];
  /** One line, shown by the Temporal UI as the workflow's summary (e.g. "Export octo-org: alpha, beta → archive"). */
  summary: string;
  /** A few lines (Markdown in the UI): the request in words. */
  details: string;
}

export type StatusLine = { line: string; percent?: number };

export interface WorkflowCommand<Args extends unknown[], Result, Status> {
  ctx: CliContext;
  /** The workflow function: its name is the workflow type, its signature checks `args`. */
  workflow: (...args: Args) => Promise<Result>;
  workflowId: string;
  args: Args;
  searchAttributes?: SearchAttributePair[];
  summary: string;
  flags: OutputFlags;
  /** Human-readable lines for a successful result. */
  describeResult(result: Result): string[];
  /**
   * One progress line from the workflow's `status` query (for `--follow`), plus the heartbeat details
   * of a running activity when it reports any (e.g. a download's byte offset).
   */
  describeStatus?(status: Status, heartbeat?: unknown): StatusLine;
}

/** The static details of a start: the input's fields in words (the UI renders them as a list). */
export function inputDetails(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  const lines: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined || (typeof value === 'object' && value !== null && Object.keys(value).length === 0)) continue;
    const text = Array.isArray(value) ? value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ') : typeof value === 'object' ? JSON.stringify(value) : String(value);
    lines.push(`- ${key}: ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`);
  }
  return lines.join('\n');
}

export function planStart<Args extends unknown[], Result, Status>(cmd: WorkflowCommand<Args, Result, Status>): StartPlan<Args> {
  return {
    workflow: cmd.workflow,
    workflowId: cmd.workflowId,
    taskQueue: cmd.ctx.config.taskQueue,
    args: cmd.args,
    // What is sent (and what `--dry-run` shows) is within the server's size rule: a start is never refused for it.
    searchAttributes: fitSearchAttributes(cmd.searchAttributes ?? []).pairs,
    summary: cmd.summary,
    details: inputDetails(cmd.args[0]),
  };
}

/** What `--dry-run` prints for one start: exactly what would be sent. */
export function describePlan(plan: StartPlan): Record<string, unknown> {
  return {
    workflowType: plan.workflow.name,
    workflowId: plan.workflowId,
    taskQueue: plan.taskQueue,
    input: plan.args.length === 1 ? plan.args[0] : plan.args,
    searchAttributes: Object.fromEntries(plan.searchAttributes.map((p) => [p.key.name, p.value])),
    staticSummary: plan.summary,
    staticDetails: plan.details,
  };
}

export function printPlanLines(plan: StartPlan, log: (line: string) => void = console.log): void {
  const d = describePlan(plan);
  log(`would start ${String(d.workflowType)} ${plan.workflowId} on task queue ${plan.taskQueue}`);
  log(`  summary: ${plan.summary}`);
  log(`  search attributes: ${JSON.stringify(d.searchAttributes)}`);
  log(`  input: ${JSON.stringify(d.input, null, 2).replace(/\n/g, '\n  ')}`);
}

/** Starts one planned workflow; an id already running is a clear refusal. */
export async function startPlan(ctx: CliContext, plan: StartPlan): Promise<WorkflowHandle & { firstExecutionRunId: string }> {
  const client = await ctx.client();
  try {
    return await client.workflow.start(plan.workflow, {
      taskQueue: plan.taskQueue,
      workflowId: plan.workflowId,
      args: plan.args,
      typedSearchAttributes: plan.searchAttributes,
      staticSummary: plan.summary,
      staticDetails: plan.details,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new CliError(`already running: ${plan.workflowId} (see it with \`longhaul status ${plan.workflowId}\`; --workflow-id starts another)`);
    }
    throw err;
  }
}

/** How a workflow ended, as the CLI reports it. */
export interface Outcome<Result> {
  workflowId: string;
  workflowStatus: string;
  exitCode: number;
  result?: Result;
  error?: { type?: string; message: string };
}

/** The handle's workflow described, a memo it cannot decrypt read as unreadable rather than failing (`memoTolerant`). */
function describeOf(handle: WorkflowHandle): Promise<WorkflowExecutionDescription> {
  return memoTolerant(handle.client).workflow.getHandle(handle.workflowId).describe();
}

/** Waits for the end of a workflow (following its status on stderr when asked). */
export async function awaitOutcome<Result, Status>(
  handle: WorkflowHandle,
  follow?: (status: Status, heartbeat?: unknown) => StatusLine,
): Promise<Outcome<Result>> {
  const stopFollowing = follow ? followStatus(handle, follow) : undefined;
  try {
    const result = (await handle.result()) as Result;
    await stopFollowing?.();
    const status = (await describeOf(handle)).status.name;
    return { workflowId: handle.workflowId, workflowStatus: status, exitCode: ExitCode.Success, result };
  } catch (err) {
    await stopFollowing?.();
    const error = err instanceof WorkflowFailedError ? describeFailure(err) : ((await unreadableFailure(handle)) ?? describeFailure(err));
    let status = 'FAILED';
    try {
      status = (await describeOf(handle)).status.name;
    } catch {
      // The failure itself is what matters.
    }
    return { workflowId: handle.workflowId, workflowStatus: status, exitCode: exitCodeForStatus(status), error };
  }
}

/**
 * The failure of a workflow whose failure this client could not decode (its message encrypted with a key it
 * lacks, or it has none): read again through a client that marks what it cannot decode, so the type still shows
 * and the message says it is encrypted. Undefined when the workflow did not fail that way.
 */
async function unreadableFailure(handle: WorkflowHandle): Promise<Outcome<unknown>['error']> {
  try {
    await memoTolerant(handle.client).workflow.getHandle(handle.workflowId).result();
    return undefined;
  } catch (err) {
    return err instanceof WorkflowFailedError ? describeFailure(err) : undefined;
  }
}

/** Prints an outcome: one JSON object, or the result's lines on stdout / one error line on stderr. */
export function printOutcome<Result>(outcome: Outcome<Result>, json: boolean | undefined, describeResult: (r: Result) => string[]): void {
  const { workflowId, workflowStatus, error, result } = outcome;
  if (json) printJson(error ? { workflowId, workflowStatus, error } : { ...(result as object), workflowId, workflowStatus });
  else if (error) console.error(`error: ${workflowId} ${workflowStatus.toLowerCase()}: ${error.type ? `${error.type}: ` : ''}${error.message}`);
  else for (const line of describeResult(result as Result)) console.log(line);
}

/** Starts the workflow (or, with `--dry-run`, only shows it); with `--wait`/`--follow` waits for its end. Returns the exit code. */
export async function runWorkflowCommand<Args extends unknown[], Result, Status>(cmd: WorkflowCommand<Args, Result, Status>): Promise<number> {
  const { ctx, flags } = cmd;
  const plan = planStart(cmd);
  if (flags.dryRun) {
    if (flags.json) printJson({ dryRun: true, ...describePlan(plan) });
    else printPlanLines(plan);
    return ExitCode.Success;
  }
  const handle = await startPlan(ctx, plan);
  const link = ctx.uiLink(cmd.workflowId);
  const waiting = flags.wait || flags.follow;
  if (!waiting) {
    if (flags.json) printJson({ workflowId: cmd.workflowId, runId: handle.firstExecutionRunId, workflowType: cmd.workflow.name, workflowStatus: 'RUNNING', uiUrl: link });
    else {
      console.log(`started ${cmd.workflow.name} ${cmd.workflowId}`);
      if (link) console.log(`watch it in the Temporal UI: ${link}`);
    }
    return ExitCode.Success;
  }
  console.error(`started ${cmd.workflow.name} ${cmd.workflowId}${link ? ` (Temporal UI: ${link})` : ''}`);
  const outcome = await awaitOutcome<Result, Status>(handle, flags.follow ? cmd.describeStatus : undefined);
  printOutcome(outcome, flags.json, cmd.describeResult);
  return outcome.exitCode;
}

/** Renders the workflow's `status` query on stderr (one rewritten line on a terminal) until stopped. */
export function followStatus<Status>(handle: WorkflowHandle, describe: (s: Status, heartbeat?: unknown) => StatusLine): () => Promise<void> {
  let stopped = false;
  let lastLine = '';
  const tty = process.stderr.isTTY;
  const loop = (async () => {
    while (!stopped) {
      try {
        const status = await handle.query(statusQuery<Status>());
        const pending = await pendingActivities(handle);
        const { line, percent } = describe(status, pending.find((p) => p.heartbeat !== undefined)?.heartbeat);
        const bar = percent === undefined ? '' : `${progressBar(percent)} `;
        // A request held back by the fleet's rate governor says so, and until when.
        const wait = sharedWaitOf(pending, Date.now());
        const text = `${bar}${line}${wait ? ` — ${sharedWaitLine(wait)}` : ''}`;
        if (text !== lastLine) {
          process.stderr.write(tty ? `\r\x1b[2K${text}` : `${text}\n`);
          lastLine = text;
        }
      } catch {
        // Not yet queryable (no worker picked it up yet) or already closed.
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    if (tty && lastLine) process.stderr.write('\n');
  };
}

/** The workflow's pending activities: decoded heartbeat details and last failure message. */
async function pendingActivities(handle: WorkflowHandle): Promise<PendingActivityView[]> {
  const { raw } = await describeOf(handle);
  return Promise.all(
    (raw.pendingActivities ?? []).map(async (activity) => ({
      heartbeat: await decodeHeartbeat(handle, activity.heartbeatDetails?.payloads?.[0]),
      lastFailureMessage: await failureMessage(handle.client, activity.lastFailure),
    })),
  );
}

/**
 * Heartbeat details as the worker wrote them: through the client's codecs first (with a codec key they are
 * encrypted like every payload), then its payload converter. Unreadable details (another key) show as none.
 */
export async function decodeHeartbeat(handle: WorkflowHandle, payload: Payload | null | undefined): Promise<unknown> {
  if (!payload) return undefined;
  const { payloadConverter, payloadCodecs } = handle.client.options.loadedDataConverter;
  try {
    let decoded = [payload];
    for (const codec of [...payloadCodecs].reverse()) decoded = await codec.decode(decoded);
    return payloadConverter.fromPayload(decoded[0]);
  } catch {
    return undefined;
  }
}

export function progressBar(percent: number, width = 24): string {
  const p = Math.max(0, Math.min(100, percent));
  const filled = Math.round((p / 100) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(p)).padStart(3)}%`;
}

/** A readable, unique-enough workflow id: `prefix-part-part-<time>`. */
export function readableWorkflowId(prefix: string, parts: string[], now = Date.now()): string {
  const slug = parts
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return `${prefix}-${slug}-${now.toString(36)}`;
}
