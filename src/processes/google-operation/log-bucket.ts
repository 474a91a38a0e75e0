/**
 * Log bucket create and update through Cloud Logging's async methods (`buckets:createAsync`,
 * `{bucket}:updateAsync`): validate before any call → send once → poll the Operation, reporting
 * `BucketMetadata.state` (SCHEDULED, WAITING_FOR_PERMISSIONS, RUNNING, SUCCEEDED, FAILED, CANCELLED) through
 * the `status` query, the `LonghaulState` search attribute and the UI's current details.
 *
 * The create never runs twice: after a try whose outcome is unknown, an ALREADY_EXISTS is resolved by reading
 * the bucket and the operation that try started.
 *
 * Cancelling the workflow sends `:cancel`, then reads the operation until it ends to learn whether the cancel
 * took effect. If it did, the workflow ends cancelled. If it arrived too late and the operation succeeded, the
 * workflow returns the result with `cancel.tookEffect: false`, because the bucket now exists (or changed).
 */
import { ApplicationFailure, CancellationScope, isCancellation, log } from '@temporalio/workflow';
import {
  LogBucketCreateInputSchema,
  LogBucketUpdateInputSchema,
  type LogBucketCreateInput,
  type LogBucketResult,
  type LogBucketUpdateInput,
  type OperationRunOptions,
} from './input';
import { BACKOFF } from '../../common/backoff';
import { GoogleOperationFailure, operationCancelled, type CancelOutcome, type OperationView, type PollBounds } from './model';
import { awaitOperation, endWith, googleApi, googlePoll, googleQuietPoll, googleSend, FailureType, sendOperation, startRun, type OperationRun } from './operation';
import { CLOCK_SKEW_MS } from '../../common/clock-skew';
import { Process } from './names';
import { validatedWorkflow } from '../../workflows/kit/validated-input';
import { GOOGLE_OPERATION_FAILURES } from './failures';


/** How long, after `:cancel`, the workflow watches the operation to learn how it ended. */
const CANCEL_WATCH: PollBounds = {
  initialIntervalMs: BACKOFF.bucketCancelWatch.initialMs,
  backoffFactor: BACKOFF.bucketCancelWatch.coefficient,
  maxIntervalMs: BACKOFF.bucketCancelWatch.maxMs,
  timeoutMs: 5 * 60 * 1000,
};

export const logBucketCreate = validatedWorkflow('logBucketCreate', { what: 'log bucket creation', failures: GOOGLE_OPERATION_FAILURES, schema: LogBucketCreateInputSchema }, createBucket);

async function createBucket(input: LogBucketCreateInput): Promise<LogBucketResult> {
  const bucketName = `${input.parent}/buckets/${input.bucketId}`;
  const run = startRun(Process.LogBucketCreate, bucketName);
  const notBefore = new Date(Date.now() - CLOCK_SKEW_MS.google).toISOString();
  const findOwnOperation = async (): Promise<OperationView | undefined> => {
    // The bucket exists (CREATING or ACTIVE) once a create started; its operation tells whether it is ours.
    const bucket = await googleApi.getLogBucket({ name: bucketName });
    return bucket ? googleApi.findLogBucketOperation({ bucketName, kind: 'create', notBefore }) : undefined;
  };
  return runBucketOperation(run, input, {
    what: `the creation of log bucket ${bucketName}`,
    send: () =>
      googleSend.createLogBucketAsync({ parent: input.parent, bucketId: input.bucketId, retentionDays: input.retentionDays, description: input.description }),
    recover: findOwnOperation,
    bucketName,
  });
}

export const logBucketUpdate = validatedWorkflow('logBucketUpdate', { what: 'log bucket update', failures: GOOGLE_OPERATION_FAILURES, schema: LogBucketUpdateInputSchema }, updateBucket);

async function updateBucket(input: LogBucketUpdateInput): Promise<LogBucketResult> {
  const run = startRun(Process.LogBucketUpdate, input.name);
  const notBefore = new Date(Date.now() - CLOCK_SKEW_MS.google).toISOString();
  const update = {
    updateMask: input.updateMask,
    retentionDays: input.retentionDays,
    description: input.description,
    locked: input.locked,
    analyticsEnabled: input.analyticsEnabled,
  };
  return runBucketOperation(run, input, {
    what: `the update of log bucket ${input.name}`,
    send: () => googleSend.updateLogBucketAsync({ name: input.name, ...update }),
    // Only an update with this mask and these values is ours; another client's recent update is not.
    recover: () => googleApi.findLogBucketOperation({ bucketName: input.name, kind: 'update', notBefore, update }),
    bucketName: input.name,
  });
}

interface BucketOperationSpec {
  what: string;
  send: () => Promise<OperationView>;
  recover: () => Promise<OperationView | undefined>;
  bucketName: string;
}

async function runBucketOperation(run: OperationRun, options: OperationRunOptions, spec: BucketOperationSpec): Promise<LogBucketResult> {
  const { poll: bounds, outage } = options;
  const graceMs = options.sendOnceGraceMs ?? options.recoveryGraceMs;
  let operation: OperationView | undefined;
  try {
    // Non-cancellable while in flight: a cancel waits for the answer, so the operation below is always known.
    operation = await sendOperation({ what: spec.what, send: spec.send, recover: spec.recover, conflictTypes: [FailureType.AlreadyExists], outage, graceMs });
    run.status.phase = 'waiting';
    const first = operation;
    const done = await awaitOperation(run, first, {
      what: spec.what,
      bounds,
      outage,
      read: () => googlePoll.getLoggingOperation({ name: first.name }),
      quiet: (request) => googleQuietPoll.quietGetLoggingOperation({ name: first.name, ...request }),
    });
    return finish(run, spec, done);
  } catch (err) {
    if (!isCancellation(err)) endWith(run, err);
    // Cancelled: cancel the server's operation too, and find out whether that worked.
    const outcome = await CancellationScope.nonCancellable(() => cancelOperation(run, spec, operation));
    run.status.cancel = outcome.cancel;
    run.observe();
    if (outcome.final && !outcome.final.error && outcome.final.done) {
      // Too late: the operation succeeded. Say so instead of pretending nothing happened.
      return { ...finish(run, spec, outcome.final), cancel: outcome.cancel };
    }
    endWith(run, err);
  }
}

function finish(run: OperationRun, spec: BucketOperationSpec, done: OperationView): LogBucketResult {
  if (done.error || done.state === 'FAILED') {
    throw ApplicationFailure.nonRetryable(
      `${spec.what} failed on the server (operation ${done.name}, state ${done.state}): ${done.error?.message ?? 'no error message'}${done.error ? ` (code ${done.error.code})` : ''}`,
      GoogleOperationFailure.OperationFailed,
      { operation: done.name, state: done.state, error: done.error },
    );
  }
  run.status.phase = 'done';
  run.observe(done);
  return { bucket: spec.bucketName, operation: done.name, state: done.state ?? 'SUCCEEDED', response: done.response };
}

/** `:cancel`, then watch the operation until it ends (bounded); the outcome is logged (`event: "cleanup"`, replay-safe). */
async function cancelOperation(run: OperationRun, spec: BucketOperationSpec, known: OperationView | undefined): Promise<{ cancel: CancelOutcome; final?: OperationView }> {
  const ended = await cancelAndWatch(run, spec, known);
  log.info(`cancel ${spec.what}: ${ended.cancel.message}`, { event: 'cleanup', step: `cancel ${spec.what}`, requested: ended.cancel.requested, tookEffect: ended.cancel.tookEffect });
  return ended;
}

async function cancelAndWatch(run: OperationRun, spec: BucketOperationSpec, known: OperationView | undefined): Promise<{ cancel: CancelOutcome; final?: OperationView }> {
  run.status.phase = 'cancelling';
  // Cancelled while sending: the create may have started all the same.
  const operation = known ?? (await spec.recover().catch(() => undefined));
  if (!operation) {
    return { cancel: { requested: false, message: `cancelled before ${spec.what} started an operation` } };
  }
  run.observe(operation);
  let request: { accepted: boolean; message?: string } = { accepted: false, message: 'the operation had already finished' };
  let final: OperationView;
  try {
    if (!operation.done) request = await googleApi.cancelLoggingOperation({ name: operation.name });
    final = await awaitOperation(run, await googlePoll.getLoggingOperation({ name: operation.name }), {
      what: `${spec.what} (after cancel)`,
      bounds: CANCEL_WATCH,
      read: () => googlePoll.getLoggingOperation({ name: operation.name }),
      quiet: (request) => googleQuietPoll.quietGetLoggingOperation({ name: operation.name, ...request }),
    });
  } catch (err) {
    // Whatever went wrong here, the workflow still ends cancelled; the status says what is known.
    return {
      cancel: {
        requested: request.accepted,
        finalState: run.status.state,
        message: `cancel ${request.accepted ? 'requested' : 'not confirmed'}; whether it took effect is unknown (operation ${operation.name}): ${err instanceof Error ? err.message : String(err)}`,
      },
    };
  }
  if (operationCancelled(final)) {
    return { final, cancel: { requested: request.accepted, tookEffect: true, finalState: final.state, message: `cancel took effect: operation ${final.name} ended CANCELLED` } };
  }
  return {
    final,
    cancel: {
      requested: request.accepted,
      tookEffect: false,
      finalState: final.state,
      message: `cancel arrived too late: operation ${final.name} ended ${final.state}${request.accepted ? '' : ` (the server refused the cancel: ${request.message})`}`,
    },
  };
}
