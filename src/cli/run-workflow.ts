/**
 * Starting a workflow from the CLI and, with `--wait`/`--follow`, seeing it to the end.
 */
import { type Command, Option } from 'commander';
import { WorkflowExecutionAlreadyStartedError, type WorkflowHandle, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { defaultPayloadConverter, type SearchAttributePair, type TypedSearchAttributes } from '@temporalio/common';
import { CliError, describeFailure, printJson, type CliContext } from './context';
import { sharedWaitLine, sharedWaitOf, type PendingActivityView } from '../common/shared-wait';

/** Adds the options every workflow-starting command shares: `--workflow-id`, `--wait`, `--follow`, `--json`. */
export function withRunOutputOptions(command: Command): Command {
  return command
    .option('--workflow-id <id>', 'workflow id (default: readable and unique)')
    .option('--wait', 'wait for the result')
    .option('--follow', 'show live progress until the end')
    .addOption(new Option('--json', 'print one JSON object'));
}

export interface OutputFlags {
  wait?: boolean;
  json?: boolean;
  follow?: boolean;
}

export interface WorkflowCommand<Args extends unknown[], Result, Status> {
  ctx: CliContext;
  /** The workflow function or its name. */
  workflowType: string;
  workflowId: string;
  args: Args;
  searchAttributes?: SearchAttributePair[] | TypedSearchAttributes;
  flags: OutputFlags;
  /** Human-readable lines for a successful result. */
  describeResult(result: Result): string[];
  /**
   * One progress line from the workflow's `status` query (for `--follow`), plus the heartbeat details
   * of a running activity when it reports any (e.g. a download's byte offset).
   */
  describeStatus?(status: Status, heartbeat?: unknown): { line: string; percent?: number };
}

/** Starts the workflow; with `--wait`/`--follow` waits for its end. Returns the process exit code. */
export async function runWorkflowCommand<Args extends unknown[], Result, Status>(cmd: WorkflowCommand<Args, Result, Status>): Promise<number> {
  const { ctx, flags } = cmd;
  const client = await ctx.client();
  let handle: WorkflowHandleWithFirstExecutionRunId;
  try {
    handle = await client.workflow.start(cmd.workflowType, {
      taskQueue: ctx.config.taskQueue,
      workflowId: cmd.workflowId,
      args: cmd.args,
      typedSearchAttributes: cmd.searchAttributes,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new CliError(`already running: ${cmd.workflowId} (watch it in the UI: ${ctx.uiLink(cmd.workflowId) ?? cmd.workflowId}; --workflow-id starts another)`);
    }
    throw err;
  }
  const link = ctx.uiLink(cmd.workflowId);
  if (!flags.json) {
    console.log(`started ${cmd.workflowType} ${cmd.workflowId}`);
    if (link) console.log(`watch it in the Temporal UI: ${link}`);
  }
  if (!flags.wait && !flags.follow) {
    if (flags.json) printJson({ workflowId: cmd.workflowId, runId: handle.firstExecutionRunId, workflowStatus: 'RUNNING', uiUrl: link });
    return 0;
  }
  const stopFollowing = flags.follow && cmd.describeStatus && !flags.json ? follow(handle, cmd.describeStatus) : undefined;
  try {
    const result = (await handle.result()) as Result;
    await stopFollowing?.();
    const status = (await handle.describe()).status.name;
    if (flags.json) printJson({ ...(result as object), workflowId: cmd.workflowId, workflowStatus: status });
    else for (const line of cmd.describeResult(result)) console.log(line);
    return 0;
  } catch (err) {
    await stopFollowing?.();
    const failure = describeFailure(err);
    let status = 'FAILED';
    try {
      status = (await handle.describe()).status.name;
    } catch {
      // The failure itself is what matters.
    }
    if (flags.json) printJson({ workflowId: cmd.workflowId, workflowStatus: status, error: failure });
    else console.error(`error: ${cmd.workflowId} ${status.toLowerCase()}: ${failure.type ? `${failure.type}: ` : ''}${failure.message}`);
    return 1;
  }
}

/** Renders the workflow's `status` query on one terminal line until stopped. */
function follow<Status>(handle: WorkflowHandle, describe: (s: Status, heartbeat?: unknown) => { line: string; percent?: number }): () => Promise<void> {
  let stopped = false;
  let lastLine = '';
  const tty = process.stdout.isTTY;
  const loop = (async () => {
    while (!stopped) {
      try {
        const status = await handle.query<Status>('status');
        const pending = await pendingActivities(handle);
        const { line, percent } = describe(status, pending.find((p) => p.heartbeat !== undefined)?.heartbeat);
        const bar = percent === undefined ? '' : `${progressBar(percent)} `;
        // A request held back by the fleet's rate governor says so, and until when.
        const wait = sharedWaitOf(pending, Date.now());
        const text = `${bar}${line}${wait ? ` — ${sharedWaitLine(wait)}` : ''}`;
        if (text !== lastLine) {
          if (tty) process.stdout.write(`\r\x1b[2K${text}`);
          else console.log(text);
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
    if (tty && lastLine) process.stdout.write('\n');
  };
}

/** The workflow's pending activities: decoded heartbeat details and last failure message. */
async function pendingActivities(handle: WorkflowHandle): Promise<PendingActivityView[]> {
  const { raw } = await handle.describe();
  return (raw.pendingActivities ?? []).map((activity) => {
    const payload = activity.heartbeatDetails?.payloads?.[0];
    return { heartbeat: payload ? defaultPayloadConverter.fromPayload(payload) : undefined, lastFailureMessage: activity.lastFailure?.message ?? undefined };
  });
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
