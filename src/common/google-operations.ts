/**
 * Shared, deterministic pieces of the Google long-running-operation workflows: the normalized view of an
 * operation (API Keys and Logging `Operation`s, Cloud DNS `Change`s), the poll schedule, and the status
 * the workflows answer to the `status` query. Used by workflows, activities, the starter and tests.
 */
import type { PollBounds } from './migration-input';

export type { PollBounds } from './migration-input';

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

/**
 * Poll bounds of the Google operation poller. 60 minutes of waiting cost 40 polls with these (see
 * `pollsToObserve`), against 82 for google-gax's default (100 ms × 1.3, capped at 60 s) and 361 for a fixed
 * 10-second poller; a finished operation is noticed at most 2 minutes late.
 */
export const DEFAULT_OPERATION_POLL: Required<PollBounds> = {
  initialIntervalMs: 1_000,
  maxIntervalMs: 120_000,
  backoffFactor: 1.5,
  timeoutMs: 12 * 60 * 60 * 1000,
};

/** The delay before poll `n` (1-based): grows by the factor from the initial interval, capped at the maximum. */
export function pollDelayMs(n: number, bounds: Required<PollBounds>): number {
  return Math.round(Math.min(bounds.maxIntervalMs, bounds.initialIntervalMs * Math.pow(bounds.backoffFactor, Math.max(0, n - 1))));
}

/**
 * The poller's schedule: the times (ms after the mutating call answered) at which it polls, up to and
 * including the first poll at or after `untilMs`, never past `bounds.timeoutMs`. The workflow waits exactly
 * these delays, so this is what an operation costs.
 */
export function pollScheduleMs(bounds: Required<PollBounds>, untilMs: number): number[] {
  const times: number[] = [];
  let t = 0;
  for (let n = 1; t < untilMs; n++) {
    const delay = pollDelayMs(n, bounds);
    if (t + delay > bounds.timeoutMs) break;
    t += delay;
    times.push(t);
  }
  return times;
}

/**
 * How many polls it takes to see an operation that finishes `durationMs` after it was started.
 * `pollAtStart` counts an extra poll at t = 0 (pollers that check right away, like a fixed-interval loop).
 */
export function pollsToObserve(durationMs: number, bounds: Required<PollBounds>, opts: { pollAtStart?: boolean } = {}): number {
  return pollScheduleMs({ ...bounds, timeoutMs: Number.POSITIVE_INFINITY }, durationMs).length + (opts.pollAtStart ? 1 : 0);
}

export type OperationPhase = 'starting' | 'waiting' | 'cancelling' | 'done' | 'failed' | 'cancelled';

/** What the `status` query of every Google operation workflow answers. */
export interface OperationStatus {
  process: 'apikey-delete' | 'log-bucket-create' | 'log-bucket-update' | 'dns-change';
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
