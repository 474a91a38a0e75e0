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
import { ApplicationFailure, CancellationScope, isCancellation } from '@temporalio/workflow';
import {
  bucketCreateProblems,
  bucketUpdateProblems,
  type LogBucketCreateInput,
  type LogBucketResult,
  type LogBucketUpdateInput,
} from '../common/google-input';
import { operationCancelled, type CancelOutcome, type OperationStatus, type OperationView, type PollBounds } from '../common/google-operations';
import {
  awaitOperation,
  HttpFailure,
  endWith,
  googleApi,
  googlePoll,
  googleSend,
  GoogleOperationFailure,
  newStatus,
  rejectInvalid,
  sendOnce,
  trackStatus,
} from './google-operation';

const CLOCK_SKEW_MARGIN_MS = 5 * 60 * 1000;

/** How long, after `:cancel`, the workflow watches the operation to learn how it ended. */
const CANCEL_WATCH: PollBounds = { initialIntervalMs: 500, backoffFactor: 1.5, maxIntervalMs: 10_000, timeoutMs: 5 * 60 * 1000 };

export async function logBucketCreate(input: LogBucketCreateInput): Promise<LogBucketResult> {
  rejectInvalid('log bucket creation', bucketCreateProblems(input));
  const bucketName = `${input.parent}/buckets/${input.bucketId}`;
  const status = newStatus('log-bucket-create', bucketName);
  const show = trackStatus(status);
  const notBefore = new Date(Date.now() - CLOCK_SKEW_MARGIN_MS).toISOString();
  const findOwnOperation = async (): Promise<OperationView | undefined> => {
    // The bucket exists (CREATING or ACTIVE) once a create started; its operation tells whether it is ours.
    const bucket = await googleApi.getLogBucket({ name: bucketName });
    return bucket ? googleApi.findLogBucketOperation({ bucketName, kind: 'create', notBefore }) : undefined;
  };
  return runBucketOperation(status, show, input.poll, {
    what: `the creation of log bucket ${bucketName}`,
    send: () =>
      googleSend.createLogBucketAsync({ parent: input.parent, bucketId: input.bucketId, retentionDays: input.retentionDays, description: input.description }),
    recover: findOwnOperation,
    bucketName,
  });
}

export async function logBucketUpdate(input: LogBucketUpdateInput): Promise<LogBucketResult> {
  rejectInvalid('log bucket update', bucketUpdateProblems(input));
  const status = newStatus('log-bucket-update', input.name);
  const show = trackStatus(status);
  const notBefore = new Date(Date.now() - CLOCK_SKEW_MARGIN_MS).toISOString();
  const update = {
    updateMask: input.updateMask,
    retentionDays: input.retentionDays,
    description: input.description,
    locked: input.locked,
    analyticsEnabled: input.analyticsEnabled,
  };
  return runBucketOperation(status, show, input.poll, {
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

async function runBucketOperation(
  status: OperationStatus,
  show: (op?: OperationView) => void,
  poll: PollBounds | undefined,
  spec: BucketOperationSpec,
): Promise<LogBucketResult> {
  let operation: OperationView | undefined;
  try {
    operation = await sendOnce({ what: spec.what, send: spec.send, recover: spec.recover, conflictTypes: [HttpFailure.AlreadyExists], nonCancellable: true });
    status.phase = 'waiting';
    const first = operation;
    const done = await awaitOperation(first, {
      what: spec.what,
      bounds: poll,
      read: () => googlePoll.getLoggingOperation({ name: first.name }),
      onUpdate: show,
      status,
    });
    return finish(status, show, spec, done);
  } catch (err) {
    if (!isCancellation(err)) endWith(status, show, err);
    // Cancelled: cancel the server's operation too, and find out whether that worked.
    const outcome = await CancellationScope.nonCancellable(() => cancelOperation(status, show, spec, operation));
    status.cancel = outcome.cancel;
    show();
    if (outcome.final && !outcome.final.error && outcome.final.done) {
      // Too late: the operation succeeded. Say so instead of pretending nothing happened.
      return { ...finish(status, show, spec, outcome.final), cancel: outcome.cancel };
    }
    endWith(status, show, err);
  }
}

function finish(status: OperationStatus, show: (op?: OperationView) => void, spec: BucketOperationSpec, done: OperationView): LogBucketResult {
  if (done.error || done.state === 'FAILED') {
    throw ApplicationFailure.nonRetryable(
      `${spec.what} failed on the server (operation ${done.name}, state ${done.state}): ${done.error?.message ?? 'no error message'}${done.error ? ` (code ${done.error.code})` : ''}`,
      GoogleOperationFailure.OperationFailed,
      { operation: done.name, state: done.state, error: done.error },
    );
  }
  status.phase = 'done';
  show(done);
  return { bucket: spec.bucketName, operation: done.name, state: done.state ?? 'SUCCEEDED', response: done.response };
}

/** `:cancel`, then watch the operation until it ends (bounded). */
async function cancelOperation(
  status: OperationStatus,
  show: (op?: OperationView) => void,
  spec: BucketOperationSpec,
  known: OperationView | undefined,
): Promise<{ cancel: CancelOutcome; final?: OperationView }> {
  status.phase = 'cancelling';
  // Cancelled while sending: the create may have started all the same.
  const operation = known ?? (await spec.recover().catch(() => undefined));
  if (!operation) {
    return { cancel: { requested: false, message: `cancelled before ${spec.what} started an operation` } };
  }
  show(operation);
  let request: { accepted: boolean; message?: string } = { accepted: false, message: 'the operation had already finished' };
  let final: OperationView;
  try {
    if (!operation.done) request = await googleApi.cancelLoggingOperation({ name: operation.name });
    final = await awaitOperation(await googlePoll.getLoggingOperation({ name: operation.name }), {
      what: `${spec.what} (after cancel)`,
      bounds: CANCEL_WATCH,
      read: () => googlePoll.getLoggingOperation({ name: operation.name }),
      onUpdate: show,
      status,
    });
  } catch (err) {
    // Whatever went wrong here, the workflow still ends cancelled; the status says what is known.
    return {
      cancel: {
        requested: request.accepted,
        finalState: status.state,
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
