/**
 * Turning retry decisions into Temporal failures. Every failure an activity raises for an HTTP call is an
 * `ApplicationFailure` with a stable `type`, the API's message, and details that identify the call (never
 * its credentials). Permanent failures are non-retryable; waits demanded by the server travel as
 * `nextRetryDelay`, so Temporal's retry timer, not a sleeping activity, does the waiting.
 */
import { ApplicationFailure, type ApplicationFailureCategory } from '@temporalio/common';
import type { RetryDecision } from './retry-policy';

/** Identifies the call in failure details and messages. Never holds headers or bodies with secrets. */
export interface CallDescription {
  method: string;
  /** The URL without query credentials (we never put credentials in URLs). */
  url: string;
}

/** What a failure carries in `details[0]`, for callers that want more than the type. */
export interface HttpFailureDetails {
  method: string;
  url: string;
  status?: number;
  reason?: string;
  /** @format milliseconds */
  retryDelayMs?: number;
}

/**
 * `type` replaces the decision's failure type where a caller keeps its own stable names (the HTTP sink's).
 * `category` BENIGN marks a retry that is expected flow (the SDK logs it at DEBUG, not as a failed activity).
 */
export function failureFromDecision(
  decision: Exclude<RetryDecision, { kind: 'success' }>,
  call: CallDescription,
  type: string = decision.type,
  category?: ApplicationFailureCategory,
): ApplicationFailure {
  const statusText = decision.status ? ` → ${decision.status}` : '';
  const message = `${call.method} ${call.url}${statusText}: ${decision.message}`;
  const details: HttpFailureDetails = {
    method: call.method,
    url: call.url,
    status: decision.status,
    reason: decision.reason,
    retryDelayMs: decision.kind === 'retry' ? decision.delayMs : undefined,
  };
  if (decision.kind === 'permanent') {
    return ApplicationFailure.create({ type, message, nonRetryable: true, details: [details] });
  }
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: false,
    details: [details],
    nextRetryDelay: decision.delayMs,
    category,
  });
}

/** Reads the first `HttpFailureDetails` back out of a failure (e.g. in a workflow's catch). */
export function httpFailureDetails(err: unknown): HttpFailureDetails | undefined {
  const details = (err as { details?: unknown[] } | undefined)?.details;
  const first = Array.isArray(details) ? details[0] : undefined;
  return first && typeof first === 'object' && 'url' in first ? (first as HttpFailureDetails) : undefined;
}
