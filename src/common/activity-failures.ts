/**
 * Reading the failure an activity ended with, in workflow code (no workflows here: not exported from the
 * index). The failure types and their classification are the registry's (`src/common/failures.ts`), which
 * the HTTP core raises from too.
 *
 * Pure (imports `@temporalio/common` and the registry only), so the classification is unit-tested without a workflow.
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { FAILURES, FailureType, meansOutage } from './failures';

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

const REFUSED: readonly string[] = [FailureType.PrimaryRateLimit, FailureType.SecondaryRateLimit, FailureType.ResourceExhausted, FailureType.RateLimitExhausted];

/** Refused before the server acted on it: rate limited or out of quota, or never sent because the API was limited. */
export function certainlyNotProcessed(failure: ApplicationFailure | undefined): boolean {
  return REFUSED.includes(failure?.type ?? '');
}

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
    // Non-retryable types that still mean "try again later" (the activity gave up on an outage, a rate limit or
    // malformed answers) are the registry's outages.
    const permanent = failure.nonRetryable && !meansOutage(failure.type);
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
  return { kind: 'transient', type: timeout ? FAILURES.activity.Timeout.type : undefined, message, notProcessed: false };
}
