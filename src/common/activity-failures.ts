/**
 * Reading the failure an activity ended with, in workflow code (no workflows here: not exported from the
 * index). Workflows may not import `src/http`, so the failure type names they react to are repeated in
 * `HttpFailure`; a unit test keeps them equal to `FailureType`.
 *
 * Pure (imports `@temporalio/common` only), so the classification is unit-tested without a workflow.
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure, TimeoutType } from '@temporalio/common';

/** Failure types of the HTTP core (`FailureType` in `src/http/retry-policy.ts`) that workflows react to. */
export const HttpFailure = {
  AlreadyExists: 'AlreadyExistsError',
  Conflict: 'ConflictError',
  NotFound: 'NotFoundError',
  FailedPrecondition: 'FailedPreconditionError',
  Gone: 'GoneError',
  ValidationFailed: 'ValidationFailedError',
  PrimaryRateLimit: 'PrimaryRateLimitError',
  SecondaryRateLimit: 'SecondaryRateLimitError',
  ResourceExhausted: 'ResourceExhaustedError',
  Server: 'ServerError',
  Network: 'NetworkError',
  /** The HTTP core stopped retrying a transient failure (it is marked non-retryable, but it is an outage). */
  TransientExhausted: 'TransientRetriesExhaustedError',
  /** The HTTP core stopped retrying a rate limit (non-retryable, but waiting longer would help). */
  RateLimitExhausted: 'RateLimitRetriesExhaustedError',
  /**
   * A success status with a body that is not the documented answer. The server may have acted (a mutation's
   * outcome is unknown), and a proxy's page may go away: never permanent, even after the activity's budget.
   */
  MalformedAnswer: 'MalformedAnswer',
} as const;

/**
 * An activity scheduled on one worker's own task queue that no worker took within its schedule-to-start timeout:
 * that worker is gone (a retry would go to the same queue, so Temporal does not retry this timeout).
 */
export function workerGone(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START;
}

/** The `ApplicationFailure` an activity ended with, unwrapped. */
export function activityCause(err: unknown): ApplicationFailure | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/** The wait the server demanded (`details[0].retryDelayMs` of an HTTP failure), if any. @format milliseconds */
export function demandedDelayMs(failure: ApplicationFailure | undefined): number | undefined {
  const details = failure?.details?.[0] as { retryDelayMs?: number } | undefined;
  return typeof details?.retryDelayMs === 'number' ? details.retryDelayMs : undefined;
}

const REFUSED: readonly string[] = [HttpFailure.PrimaryRateLimit, HttpFailure.SecondaryRateLimit, HttpFailure.ResourceExhausted, HttpFailure.RateLimitExhausted];

/** Refused before the server acted on it: rate limited or out of quota, or never sent because the API was limited. */
export function certainlyNotProcessed(failure: ApplicationFailure | undefined): boolean {
  return REFUSED.includes(failure?.type ?? '');
}

/** Non-retryable types that still mean "try again later": the activity gave up on an outage, a rate limit or malformed answers. */
const EXHAUSTED: readonly string[] = [HttpFailure.TransientExhausted, HttpFailure.RateLimitExhausted, HttpFailure.MalformedAnswer];

/** What a workflow needs to know about a failed activity call to decide what comes next. */
export interface FailureFacts {
  /**
   * `cancelled`: the workflow is being cancelled; `transient`: the call may succeed later (5xx, HTML error page,
   * reset, timeout, DNS, rate limit — even after the activity's own retries ran out); `permanent`: the API
   * answered for good (404, 401/403 that is not a rate limit, 409, 410, 422…).
   */
  kind: 'cancelled' | 'transient' | 'permanent';
  type?: string;
  message: string;
  /** @format milliseconds */
  demandedDelayMs?: number;
  /** The server certainly did not act on the call (rate limited before processing). */
  notProcessed: boolean;
}

/** Classifies the error an activity call threw. */
export function failureFacts(err: unknown): FailureFacts {
  const message = err instanceof Error ? (err.cause instanceof Error && err instanceof ActivityFailure ? err.cause.message : err.message) : String(err);
  if (err instanceof CancelledFailure || (err instanceof ActivityFailure && err.cause instanceof CancelledFailure)) {
    return { kind: 'cancelled', message, notProcessed: false };
  }
  const failure = activityCause(err);
  if (failure) {
    const permanent = failure.nonRetryable && !EXHAUSTED.includes(failure.type ?? '');
    return {
      kind: permanent ? 'permanent' : 'transient',
      type: failure.type ?? undefined,
      message,
      demandedDelayMs: demandedDelayMs(failure),
      notProcessed: certainlyNotProcessed(failure),
    };
  }
  // Activity timeouts (start-to-close, heartbeat) and anything unrecognised: the call may have happened.
  const timeout = err instanceof ActivityFailure && err.cause instanceof TimeoutFailure;
  return { kind: 'transient', type: timeout ? 'ActivityTimeout' : undefined, message, notProcessed: false };
}
