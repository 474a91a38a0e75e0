/**
 * The Google long-running-operation processes (API-key delete, log-bucket create/update, DNS change): the
 * model file shared by the workflows, activities, the CLI and tests. The normalized view of an operation
 * (API Keys and Logging `Operation`s, Cloud DNS `Change`s), the status the workflows answer to the `status`
 * query and its one `describe`, the failure types, and the poll bounds with their per-run event check.
 * Deterministic: no I/O.
 */
import * as v from 'valibot';
import { object, problemsOf, rule } from '../../common/schema';
import { DEFAULT_OUTAGE, outageBackoffMs, OutageBoundsSchema, resolveOutageBounds, type OutageBounds } from '../../common/outage';
import { HONEST_POLL_SHAPE, nextPollAtMs, pollBoundsSchema, resolvePollBounds, type PollBounds, type ResolvedPollBounds } from '../../common/poll-schedule';
import { MAX_EVENTS_PER_RUN, type RunBudget } from '../../common/run-budget';
import type { StatusView } from '../../common/search-attributes';
import type { Process } from './names';
import { failureTypes } from '../../common/failures';
import { GOOGLE_OPERATION_FAILURES } from './failures';

export type { PollBounds } from '../../common/poll-schedule';
export type { OutageBounds } from '../../common/outage';

/**
 * What a workflow keeps of one operation: small, so history stays small. Logging's `OperationState` is
 * reported without its `OPERATION_STATE_` prefix (`SCHEDULED`, `WAITING_FOR_PERMISSIONS`, `RUNNING`,
 * `SUCCEEDED`, `FAILED`, `CANCELLED`); DNS changes report `pending` / `done`.
 */
export interface OperationView {
  /** Operation name (`projects/P/locations/L/operations/ID`, `operations/…`) or DNS change id. */
  name: string;
  done: boolean;
  state?: string;
  /** `google.rpc.Status` of a failed (or cancelled) operation. */
  error?: { code: number; message: string };
  /** A summary of the operation's response (bucket, key or change), when done without error. */
  response?: Record<string, unknown>;
}

/** `google.rpc.Code.CANCELLED`: what a cancelled operation's `error.code` is. */
export const RPC_CODE_CANCELLED = 1;

/** Whether the operation ended cancelled (by state or by its error code). */
export function operationCancelled(op: OperationView): boolean {
  return op.state === 'CANCELLED' || (op.done && op.error?.code === RPC_CODE_CANCELLED);
}

/** Failure types the Google operation workflows end with (stable strings for callers). */
export const GoogleOperationFailure = failureTypes(GOOGLE_OPERATION_FAILURES);

/**
 * Poll bounds of the Google operation poller: the kit's honest shape (every 30 s, then 10 % of the wait,
 * ≤ 10 min), so a finished operation is noticed at most max(10 % of the wait, 30 s) late. Operations carry no
 * ETag, so every poll is a counted request: 18 for a 10-minute wait, 37 for 60 minutes (google-gax's default,
 * 100 ms ×1.3 ≤ 60 s, makes 82). No schedule can keep that delay promise with fewer: each interval may be at
 * most max(10 % of the time already waited, 30 s), and taking the largest step every time is never behind any
 * other schedule, so it reaches 60 minutes in the fewest polls (see `HONEST_POLL_SHAPE`).
 */
export const DEFAULT_OPERATION_POLL: ResolvedPollBounds = { ...HONEST_POLL_SHAPE, timeoutMs: 12 * 60 * 60 * 1000 };

/**
 * History events one poll costs: a timer (started, fired), the activity (scheduled, started, completed or
 * failed) and the two workflow tasks around them (3 events each).
 */
export const EVENTS_PER_POLL = 11;
/** Events of a run besides its polls: start, validation, the mutating call and its lookups, cancel, search attributes. */
const RUN_OVERHEAD_EVENTS = 200;

/**
 * The most polls a run of these bounds can make: the schedule's polls over the whole time bound plus one
 * continuous outage's failed polls (backoff from the outage bounds, over the outage budget or the time bound).
 */
export function maxPollsPerRun(bounds: ResolvedPollBounds, outage: Required<OutageBounds> = DEFAULT_OUTAGE, stopAt = Number.POSITIVE_INFINITY): number {
  let polls = 0;
  for (let n = 1, t = 0; polls <= stopAt; n++) {
    t = nextPollAtMs(t, n, bounds, t);
    if (t > bounds.timeoutMs) break;
    polls++;
  }
  const outageMs = Math.min(outage.budgetMs, bounds.timeoutMs);
  for (let n = 1, t = 0; polls <= stopAt; n++) {
    t += outageBackoffMs(n, outage);
    if (t > outageMs) break;
    polls++;
  }
  return polls;
}

/**
 * A Google input's poll and outage bounds: the kit's rules (floor, ceiling, factor, max ≥ initial) and, since
 * these workflows do not continue as new, a ceiling on what one run can cost in history events (a fixed
 * 1-second poll for 12 hours would pass 10,000 events long before the time bound).
 */
export const OperationPollEntries = {
  poll: pollBoundsSchema(DEFAULT_OPERATION_POLL),
  /** How long failed polls (and lookups) are waited out: default 6 h of consecutive failure, backoff 5 s doubling to 3 min. */
  outage: OutageBoundsSchema,
};

type PollAndOutage = { poll?: PollBounds | null; outage?: OutageBounds | null };

/**
 * An Operation workflow's run budget, in the one policy's terms (`src/common/run-budget.ts`). Its runs do not
 * continue as new: a run is bounded by its time bound, so the budget is spent at the start instead, by refusing
 * poll bounds that could pass it (`operationPollCeiling`), before anything is sent.
 */
export const OPERATION_RUN_BUDGET = { events: MAX_EVENTS_PER_RUN } as const satisfies RunBudget;

/** The per-run ceiling on polls of `OperationPollEntries`, as a check of the object holding them. */
export function operationPollCeiling<T extends PollAndOutage>() {
  const limit = Math.floor((OPERATION_RUN_BUDGET.events - RUN_OVERHEAD_EVENTS) / EVENTS_PER_POLL);
  return rule<T>(
    ['poll', 'outage'],
    (input) => maxPollsPerRun(resolvePollBounds(DEFAULT_OPERATION_POLL, input.poll), resolveOutageBounds(input.outage), limit) <= limit,
    `poll bounds allow more than ${limit} polls in one run (poll.timeoutMs at this poll rate, plus an outage's failed polls), ` +
      `which would pass the per-run budget of ${OPERATION_RUN_BUDGET.events} history events: raise poll.maxIntervalMs or lower poll.timeoutMs`,
  );
}

/** Problems with a Google input's poll and outage bounds (empty when valid). */
export function operationPollProblems(poll: PollBounds | null | undefined, outage: OutageBounds | null | undefined): string[] {
  return problemsOf(v.pipe(object(OperationPollEntries), operationPollCeiling()), { poll, outage });
}

export type OperationPhase = 'starting' | 'waiting' | 'cancelling' | 'done' | 'failed' | 'cancelled';

export type GoogleProcess = typeof Process.ApiKeyDelete | typeof Process.LogBucketCreate | typeof Process.LogBucketUpdate | typeof Process.DnsChange;

/** What the `status` query of every Google operation workflow answers. */
export interface OperationStatus {
  process: GoogleProcess;
  /** The resource the workflow works on (key, bucket or zone name). */
  target: string;
  phase: OperationPhase;
  operation?: string;
  /** The operation's state as last seen. */
  state?: string;
  /** Every distinct state seen, in order. */
  states: string[];
  polls: number;
  /** Polls that failed (the mutating call is never re-sent because of them). */
  failedPolls: number;
  /** Failed polls since the last answer: an outage in progress when > 0. */
  failingPolls?: number;
  /** @format milliseconds */
  nextPollInMs?: number;
  /** Set once the workflow was cancelled while the operation ran. */
  cancel?: CancelOutcome;
  error?: string;
}

/** What came of cancelling a running operation. */
export interface CancelOutcome {
  /** Whether `:cancel` was accepted by the server (a done operation refuses it). */
  requested: boolean;
  /** True when the operation ended CANCELLED; false when it finished anyway; undefined while unknown. */
  tookEffect?: boolean;
  /** The operation's state when the workflow last looked. */
  finalState?: string;
  message: string;
}

/** A fresh status for a process. */
export function newOperationStatus(process: GoogleProcess, target: string): OperationStatus {
  return { process, target, phase: 'starting', states: [], polls: 0, failedPolls: 0 };
}

/**
 * The one description of a status: the UI's current details, the CLI's progress line, and the search
 * attributes (process, target, the operation's state).
 */
export function describeOperationStatus(s: OperationStatus): StatusView {
  const parts = [`${s.process} ${s.target}`, `phase: ${s.phase}`];
  if (s.operation) parts.push(`operation ${s.operation}`);
  if (s.state) parts.push(`state: ${s.state}`);
  parts.push(`${s.polls} polls${s.failedPolls ? ` (${s.failedPolls} failed)` : ''}`);
  if (s.failingPolls) parts.push(`polls failing (${s.failingPolls} in a row): waiting the outage out`);
  if (s.nextPollInMs !== undefined) parts.push(`next poll in ${Math.max(1, Math.round(s.nextPollInMs / 1000))} s`);
  if (s.cancel) parts.push(s.cancel.message);
  if (s.error) parts.push(`error: ${s.error}`);
  return { line: parts.join(' · '), attributes: { process: s.process, target: s.target, state: s.state } };
}
