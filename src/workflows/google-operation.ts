/**
 * What the Google operation workflows share (workflow code, not a workflow: not exported from the index):
 *
 * - `sendOnce` makes the mutating call (createAsync, updateAsync, DELETE key, POST change) without blind
 *   re-sends: after a try whose outcome is unknown (timeout, connection lost, 5xx) it first looks for what
 *   that try may have done, and a conflict (ALREADY_EXISTS) after such a try is resolved by that lookup;
 * - `awaitOperation` is the one Operation poller: durable timers growing by a factor to a cap, a bounded
 *   total time, and poll failures that never lead back to the mutating call;
 * - `trackStatus` keeps the `status` query, search attributes and the UI's current details in step.
 */
import {
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import {
  DEFAULT_OPERATION_POLL,
  pollDelayMs,
  type OperationStatus,
  type OperationView,
  type PollBounds,
} from '../common/google-operations';
import { LonghaulProcess, LonghaulState, LonghaulTarget } from '../common/search-attributes';
import type { Activities } from '../activities';
import { API_CALL } from './activity-options';
import { activityCause, certainlyNotProcessed, demandedDelayMs } from './activity-failures';

export { HttpFailure } from './activity-failures';

/** Reads (and cancels): bounded retries, server-demanded waits honoured. */
export const googleApi = proxyActivities<Activities>(API_CALL);
/** Mutating calls: one attempt per try; `sendOnce` decides whether another try is safe. */
export const googleSend = proxyActivities<Activities>({ ...API_CALL, retry: { ...API_CALL.retry, maximumAttempts: 1 } });
/** Polls: fewer attempts each, since the poller itself tolerates a failed poll and polls again later. */
export const googlePoll = proxyActivities<Activities>({ ...API_CALL, retry: { ...API_CALL.retry, maximumAttempts: 5 } });

export const operationStatusQuery = defineQuery<OperationStatus>('status');

/** Failure types the Google operation workflows end with (stable strings for callers). */
export const GoogleOperationFailure = {
  InvalidInput: 'InvalidGoogleOperationInput',
  /** The operation finished with an `error` (or a bucket operation ended FAILED). */
  OperationFailed: 'GoogleOperationFailed',
  /** The operation was still running when the poller's total time ran out. */
  TimedOut: 'GoogleOperationTimedOut',
  /** Polls kept failing; the operation itself may still be running. */
  PollFailed: 'GoogleOperationPollFailed',
  /** The mutating call could not be made within its tries. */
  SendFailed: 'GoogleOperationSendFailed',
} as const;

/** Rejects invalid input before any call, as one non-retryable failure listing every problem. */
export function rejectInvalid(what: string, problems: string[]): void {
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(`invalid ${what}: ${problems.join('; ')}`, GoogleOperationFailure.InvalidInput, { problems });
  }
}

export interface SendOnceOptions<T> {
  /** The mutating call (an activity with `maximumAttempts: 1`). */
  send: () => Promise<T>;
  /** What an earlier try with an unknown outcome did, if anything (reads only). */
  recover: () => Promise<T | undefined>;
  /** Permanent failure types that, after an unknown outcome, mean "an earlier try did it" (e.g. ALREADY_EXISTS). */
  conflictTypes: readonly string[];
  /** For messages: "the creation of bucket …". */
  what: string;
  maxTries?: number;
  /**
   * Run each try and the lookup that follows it in a non-cancellable scope: a cancellation while the call is in
   * flight waits for its answer (or for the lookup of an unknown one), so the caller always learns what the
   * call started and can cancel or report it, never leaving an unknown resource behind. The waits between
   * tries stay cancellable.
   */
  nonCancellable?: boolean;
}

/**
 * Makes the mutating call at most once in effect. Permanent failures end it at once, unless they are a
 * conflict following a try whose outcome was unknown, in which case the lookup decides.
 */
export async function sendOnce<T>(opts: SendOnceOptions<T>): Promise<T> {
  const maxTries = opts.maxTries ?? 6;
  const guarded = <R>(fn: () => Promise<R>): Promise<R> => (opts.nonCancellable ? CancellationScope.nonCancellable(fn) : fn());
  let outcomeUnknown = false;
  let lastError: unknown;
  for (let attempt = 1; attempt <= maxTries; attempt++) {
    const outcome = await guarded(async (): Promise<{ done: T } | { retryAfterMs: number }> => {
      try {
        return { done: await opts.send() };
      } catch (err) {
        if (isCancellation(err)) throw err;
        const failure = activityCause(err);
        if (failure?.nonRetryable) {
          if (outcomeUnknown && opts.conflictTypes.includes(failure.type ?? '')) {
            const found = await opts.recover();
            if (found !== undefined) return { done: found };
          }
          throw err;
        }
        lastError = err;
        if (!certainlyNotProcessed(failure)) {
          outcomeUnknown = true;
          const found = await opts.recover();
          if (found !== undefined) return { done: found };
        }
        return { retryAfterMs: demandedDelayMs(failure) ?? Math.min(60_000, 1_000 * 2 ** (attempt - 1)) };
      }
    });
    if ('done' in outcome) return outcome.done;
    await sleep(outcome.retryAfterMs);
  }
  throw ApplicationFailure.create({
    type: GoogleOperationFailure.SendFailed,
    message: `${opts.what} could not be sent after ${maxTries} tries: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
    nonRetryable: true,
    cause: lastError instanceof Error ? lastError : undefined,
  });
}

export interface AwaitOperationOptions {
  bounds?: PollBounds;
  /** Reads the operation once (an activity with its own bounded retries). */
  read: () => Promise<OperationView>;
  /** Called with every observation and before every wait. */
  onUpdate: (op: OperationView) => void;
  status: OperationStatus;
  /** Failed polls in a row tolerated before giving up. */
  maxConsecutivePollFailures?: number;
  /** For messages: "bucket … creation". */
  what: string;
}

/**
 * Polls until the operation is done: waits `pollDelayMs(n)` before poll n (durable timers), gives up after
 * `timeoutMs` in total. A failed poll is only ever followed by another poll; the operation keeps running on
 * the server whatever happens here.
 */
export async function awaitOperation(first: OperationView, opts: AwaitOperationOptions): Promise<OperationView> {
  const bounds = { ...DEFAULT_OPERATION_POLL, ...opts.bounds };
  const maxFailures = opts.maxConsecutivePollFailures ?? 3;
  const { status } = opts;
  let op = first;
  let waited = 0;
  let failuresInRow = 0;
  opts.onUpdate(op);
  for (let n = 1; !op.done; n++) {
    const delay = pollDelayMs(n, bounds);
    if (waited + delay > bounds.timeoutMs) {
      throw ApplicationFailure.nonRetryable(
        `${opts.what}: operation ${op.name} was still ${op.state ?? 'running'} after ${Math.round(waited / 1000)} s of polling; it continues on the server`,
        GoogleOperationFailure.TimedOut,
        { operation: op.name, state: op.state },
      );
    }
    status.nextPollInMs = delay;
    opts.onUpdate(op);
    await sleep(delay);
    waited += delay;
    try {
      op = await opts.read();
      status.polls++;
      failuresInRow = 0;
    } catch (err) {
      if (isCancellation(err)) throw err;
      status.failedPolls++;
      failuresInRow++;
      const failure = activityCause(err);
      if (failure?.nonRetryable || failuresInRow >= maxFailures) {
        throw ApplicationFailure.create({
          type: GoogleOperationFailure.PollFailed,
          message: `${opts.what}: reading operation ${op.name} failed ${failuresInRow} time(s) in a row (${err instanceof Error ? err.message : String(err)}); the operation may still be running on the server and was not re-sent`,
          nonRetryable: true,
          details: [{ operation: op.name, state: op.state }],
          cause: err instanceof Error ? err : undefined,
        });
      }
    }
    status.nextPollInMs = undefined;
    opts.onUpdate(op);
  }
  return op;
}

/**
 * Registers the `status` query and the process's search attributes; returns `show`, which records an
 * observed operation (state changes go to `LonghaulState`) and refreshes the UI's current details.
 */
export function trackStatus(status: OperationStatus): (op?: OperationView) => void {
  setHandler(operationStatusQuery, () => status);
  upsertSearchAttributes([
    { key: LonghaulProcess, value: status.process },
    { key: LonghaulTarget, value: status.target },
  ]);
  const show = (op?: OperationView) => {
    if (op) {
      status.operation = op.name;
      if (op.state !== undefined && op.state !== status.state) {
        status.state = op.state;
        status.states.push(op.state);
        upsertSearchAttributes([{ key: LonghaulState, value: op.state }]);
      }
    }
    const parts = [`${status.process} ${status.target}`, `phase: ${status.phase}`];
    if (status.operation) parts.push(`operation ${status.operation}`);
    if (status.state) parts.push(`state: ${status.state}`);
    parts.push(`${status.polls} polls`);
    if (status.nextPollInMs !== undefined) parts.push(`next poll in ${Math.round(status.nextPollInMs / 1000)} s`);
    if (status.cancel) parts.push(status.cancel.message);
    if (status.error) parts.push(`error: ${status.error}`);
    setCurrentDetails(parts.join(' · '));
  };
  show();
  return show;
}

/** A fresh status for a process. */
export function newStatus(process: OperationStatus['process'], target: string): OperationStatus {
  return { process, target, phase: 'starting', states: [], polls: 0, failedPolls: 0 };
}

/** Records how the workflow ended (failed or cancelled) in the status, then rethrows. */
export function endWith(status: OperationStatus, show: (op?: OperationView) => void, err: unknown): never {
  status.phase = isCancellation(err) ? 'cancelled' : 'failed';
  status.nextPollInMs = undefined;
  if (!isCancellation(err)) status.error = err instanceof Error ? err.message : String(err);
  show();
  throw err;
}
