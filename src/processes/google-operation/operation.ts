/**
 * What the Google operation workflows share (workflow code, not a workflow: `workflow.ts` exports the workflows).
 * Thin adapters over the kit, which holds the ideas themselves:
 *
 * - `sendOperation`: the kit's `sendOnce` for the mutating call (createAsync, updateAsync, DELETE key, POST
 *   change), non-cancellable while in flight, with lookups over a grace period before any re-send;
 * - `awaitOperation`: the kit's `pollUntil` on an Operation, its outage budget included: a failed poll is only
 *   ever followed by another poll;
 * - `startRun`: the kit's status tracker fed by the model's `describeOperationStatus`.
 */
import { isCancellation, proxyActivities } from '@temporalio/workflow';
import {
  DEFAULT_OPERATION_POLL,
  describeOperationStatus,
  GoogleOperationFailure,
  newOperationStatus,
  type GoogleProcess,
  type OperationStatus,
  type OperationView,
} from './model';
import type { GoogleOperationActivities } from './activities';
import { POLL, QUIET_POLL, READ, SEND_ONCE } from '../../workflows/kit/activity-options';
import { pollUntil, quietWherePatched, resolvePollBounds, sendOnce, statusQuery, trackStatus, type OutageBounds, type PollBounds, type Polled, type QuietPollAnswer, type QuietPollRequest } from '../../workflows/kit';
import { summarized } from '../../workflows/kit/activity-summaries';
import { GOOGLE_OPERATION_SUMMARIES } from './summaries';

export { FailureType } from '../../common/failures';

/** Reads (lookups, cancels): bounded retries, server-demanded waits honoured. */
export const googleApi = summarized(proxyActivities<GoogleOperationActivities>(READ), GOOGLE_OPERATION_SUMMARIES);
/** Mutating calls: one attempt per try; `sendOnce` decides whether another try is safe. */
export const googleSend = summarized(proxyActivities<GoogleOperationActivities>(SEND_ONCE), GOOGLE_OPERATION_SUMMARIES);
/** Polls: fewer attempts each, since the poller itself polls again later on its outage budget. */
export const googlePoll = summarized(proxyActivities<GoogleOperationActivities>(POLL), GOOGLE_OPERATION_SUMMARIES);
/** Quiet polls (`QUIET_POLL`): the polls of a stretch without change as one activity's attempts. */
export const googleQuietPoll = summarized(proxyActivities<GoogleOperationActivities>(QUIET_POLL), GOOGLE_OPERATION_SUMMARIES);

export const operationStatusQuery = statusQuery<OperationStatus>();

/** One workflow's status, kept in step with the query, the UI's details and the search attributes. */
export interface OperationRun {
  status: OperationStatus;
  /** Records an observed operation (name, state changes) and refreshes the status. */
  observe(op?: OperationView): void;
}

export function startRun(process: GoogleProcess, target: string): OperationRun {
  const status = newOperationStatus(process, target);
  const tracker = trackStatus(operationStatusQuery, status, describeOperationStatus);
  return {
    status,
    observe(op) {
      if (op) {
        status.operation = op.name || status.operation;
        if (op.state !== undefined && op.state !== status.state) {
          status.state = op.state;
          status.states.push(op.state);
        }
      }
      tracker.update();
    },
  };
}

export interface SendOperationOptions<T> {
  what: string;
  send: () => Promise<T>;
  recover: () => Promise<T | undefined>;
  conflictTypes: readonly string[];
  outage?: OutageBounds | null;
  /** @format milliseconds — lookups after an unknown outcome go on this long before a re-send (the kit's default when absent). */
  graceMs?: number;
}

/** The mutating call, at most once in effect, never abandoned to a cancellation while in flight. */
export function sendOperation<T>(opts: SendOperationOptions<T>): Promise<T> {
  return sendOnce({ ...opts, nonCancellable: true, failureType: GoogleOperationFailure.SendFailed });
}

export interface AwaitOperationOptions {
  /** For messages: "the creation of log bucket …". */
  what: string;
  /** Reads the operation once (a `POLL` activity). */
  read: () => Promise<OperationView>;
  /** The same read as a quiet poll (a `QUIET_POLL` activity), used by runs recorded after quiet polls came. */
  quiet: (request: QuietPollRequest<OperationView>) => Promise<QuietPollAnswer<Polled<OperationView>>>;
  bounds?: PollBounds | null;
  outage?: OutageBounds | null;
}

/**
 * Polls until the operation is done, within the total time bound. A failed poll (5xx, HTML error page, reset,
 * timeout) is followed by another poll on the outage budget; only a permanent answer or the time bound ends
 * the wait, and the operation keeps running on the server whatever happens here.
 */
export async function awaitOperation(run: OperationRun, first: OperationView, opts: AwaitOperationOptions): Promise<OperationView> {
  const { status } = run;
  run.observe(first);
  if (first.done) return first;
  // Counts carry over from an earlier wait of the same run (the watch after a cancel).
  const base = { polls: status.polls, failedPolls: status.failedPolls };
  const outcome = await pollUntil<OperationView>(
    {
      what: opts.what,
      poll: async () => {
        const op = await opts.read();
        run.observe(op);
        return op;
      },
      quiet: quietWherePatched(async (request) => {
        const answer = await opts.quiet(request);
        if (answer.kind === 'changed' && !answer.polled.notModified) run.observe(answer.polled);
        return answer;
      }),
      done: (op) => op.done,
      bounds: resolvePollBounds(DEFAULT_OPERATION_POLL, opts.bounds),
      outage: opts.outage,
      onProgress: (progress) => {
        status.polls = base.polls + progress.polls;
        status.failedPolls = base.failedPolls + progress.failedPolls;
        status.failingPolls = progress.failuresInRow || undefined;
        status.nextPollInMs = progress.nextPollInMs;
        run.observe();
      },
      failureTypes: { timedOut: GoogleOperationFailure.TimedOut, pollFailed: GoogleOperationFailure.PollFailed },
      describeLast: (op) => `still ${(op ?? first).state ?? 'running'}: operation ${first.name} continues on the server`,
      details: { operation: first.name },
    },
    first,
  );
  // Without `suspend`, the poller only ends done (or by throwing).
  if (outcome.kind !== 'done') throw new Error(`${opts.what}: the poller was suspended unexpectedly`);
  return outcome.value;
}

/** Records how the workflow ended (failed or cancelled) in the status, then rethrows. */
export function endWith(run: OperationRun, err: unknown): never {
  run.status.phase = isCancellation(err) ? 'cancelled' : 'failed';
  run.status.nextPollInMs = undefined;
  if (!isCancellation(err)) run.status.error = err instanceof Error ? err.message : String(err);
  run.observe();
  throw err;
}
