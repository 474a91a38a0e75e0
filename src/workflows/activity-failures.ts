/**
 * Reading the failure an activity ended with, in workflow code (no workflows here: not exported from the
 * index). Workflows may not import `src/http`, so the failure type names they react to are repeated in
 * `HttpFailure`; a unit test keeps them equal to `FailureType`.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

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
} as const;

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

/** Refused before the server acted on it: rate limited or out of quota, or never sent because the API was limited. */
export function certainlyNotProcessed(failure: ApplicationFailure | undefined): boolean {
  const refused: string[] = [HttpFailure.PrimaryRateLimit, HttpFailure.SecondaryRateLimit, HttpFailure.ResourceExhausted];
  return refused.includes(failure?.type ?? '');
}
