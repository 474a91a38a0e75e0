/**
 * The retry decision: a pure function from an HTTP response (or its absence) to what the caller should do.
 *
 * Policy is data (`RetryPolicy`), time is injected (`nowMs`), and nothing here does I/O, so every rule of
 * spec 001 ("Behavior on exceeding") is unit-tested without a network:
 *  1. `retry-after` (seconds or HTTP-date) wins;
 *  2. else `x-ratelimit-remaining: 0` ⇒ wait until `x-ratelimit-reset`, measured on the server's clock
 *     (the `Date` header) so a skewed local clock neither hammers nor over-waits;
 *  3. else a secondary limit ⇒ at least 60 s, growing exponentially, for a bounded number of attempts.
 */
import { BACKOFF, backoffMs, type Backoff } from '../common/backoff';
import { FailureType, type FailureTypeName } from '../common/failures';

/** What the decision needs to know about one response. Header names are lower-case. */
export interface ResponseFacts {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
  /** The API's error message, when the body had one. */
  message?: string;
  /** A server-provided retry hint from the body (e.g. Google's `RetryInfo.retryDelay`), in milliseconds. */
  bodyRetryDelayMs?: number;
  /** A machine-readable reason from the body (e.g. Google's `ErrorInfo.reason` or `status`). */
  reason?: string;
  /** The API's canonical status name from the body (Google's `error.status`, e.g. `ALREADY_EXISTS`). */
  apiStatus?: string;
}

/** Stable failure type names (the registry's, `src/common/failures.ts`): workflows and `nonRetryableErrorTypes` match on these strings. */
export { FailureType, type FailureTypeName };

export interface RetryPolicy {
  /** Statuses that never succeed on retry, with the failure type each one becomes. */
  permanent: Readonly<Record<number, FailureTypeName>>;
  /**
   * Canonical status names from the body (Google's `error.status`) that never succeed on retry, with their
   * failure type. Checked before `permanent`, because one HTTP status carries several meanings
   * (409 is `ALREADY_EXISTS` or `ABORTED`; 400 is `INVALID_ARGUMENT` or `FAILED_PRECONDITION`).
   */
  permanentByApiStatus?: Readonly<Record<string, FailureTypeName>>;
  /** Statuses that are rate limits when the response says so (403) or always (429). */
  rateLimitStatuses: readonly number[];
  /** Statuses always treated as rate limits, even without headers (429). */
  alwaysRateLimitStatuses: readonly number[];
  /** When set, every rate limit gets this type (Google has no primary/secondary distinction). */
  rateLimitType?: FailureTypeName;
  /** Messages that mark a secondary rate limit (matched case-insensitively). */
  secondaryLimitPattern: RegExp;
  /** The waits on a rate limit that came without headers (GitHub's secondary limit), from `BACKOFF`. */
  rateLimitBackoff: Backoff;
  /** Give up (non-retryable) after this many attempts that hit a rate limit. */
  maxRateLimitAttempts: number;
  /** Statuses that are transient server trouble. */
  transientStatuses: readonly number[];
  /** The waits after transient server trouble and network faults, from `BACKOFF`. */
  transientBackoff: Backoff;
  maxTransientAttempts: number;
  /** @format milliseconds — added to header-derived waits so the first request after a reset is not early. */
  resetMarginMs: number;
  /** @format milliseconds — a header asking for longer than this is capped (defends against nonsense). */
  maxHeaderDelayMs: number;
}

/** Statuses that never succeed on retry (octokit's `doNotRetry` list), with their failure types. */
export const PERMANENT_STATUSES: Readonly<Record<number, FailureTypeName>> = {
  400: FailureType.BadRequest,
  401: FailureType.Authentication,
  403: FailureType.Forbidden,
  404: FailureType.NotFound,
  405: FailureType.ClientError,
  409: FailureType.Conflict,
  410: FailureType.Gone,
  422: FailureType.ValidationFailed,
  451: FailureType.ClientError,
};

/** GitHub's REST rules (spec 001) and octokit's `doNotRetry` list. */
export const githubRetryPolicy: RetryPolicy = {
  permanent: PERMANENT_STATUSES,
  rateLimitStatuses: [403, 429],
  alwaysRateLimitStatuses: [429],
  secondaryLimitPattern: /secondary rate limit/i,
  rateLimitBackoff: BACKOFF.githubSecondaryLimit,
  maxRateLimitAttempts: 8,
  transientStatuses: [500, 502, 503, 504],
  transientBackoff: BACKOFF.githubTransient,
  maxTransientAttempts: 10,
  resetMarginMs: 1_000,
  maxHeaderDelayMs: 2 * 60 * 60 * 1000,
};

export type RetryDecision =
  | { kind: 'success' }
  | { kind: 'permanent'; type: FailureTypeName; status: number; message: string; reason?: string }
  | {
      kind: 'retry';
      type: FailureTypeName;
      status?: number;
      /** @format milliseconds — how long to wait before the next attempt. */
      delayMs: number;
      /** Epoch ms until which no request should go to this API (rate limits only). */
      blockedUntilMs?: number;
      message: string;
      reason?: string;
    };

export interface DecisionContext {
  /** Epoch milliseconds, injected. */
  nowMs: number;
  /** 1-based attempt number of the call being judged (Temporal's `info.attempt`). */
  attempt: number;
}

function header(facts: ResponseFacts, name: string): string | undefined {
  const v = facts.headers[name];
  return v === undefined || v === '' ? undefined : v;
}

/** Parses `retry-after`: delta-seconds or an HTTP-date (relative to the server's `Date`, else now). */
export function parseRetryAfterMs(value: string | undefined, nowMs: number, serverDateMs?: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - (serverDateMs ?? nowMs));
}

function serverDateMs(facts: ResponseFacts): number | undefined {
  const d = header(facts, 'date');
  if (d === undefined) return undefined;
  const ms = Date.parse(d);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Milliseconds until `x-ratelimit-reset`, measured against the server's clock when it sent a `Date`
 * (the reset is an instant on the server's clock; our clock may be off by minutes).
 *
 * `Date` has whole seconds, so the server's "now" lies in [Date, Date + 1 s). Our own clock, when it falls in
 * that second, places it more precisely; otherwise (a clock off by more) `Date` itself is used, the longer wait.
 * Taking `Date` alone overstated every wait by half a second on average — a tenth of a 10-second window.
 */
export function msUntilReset(facts: ResponseFacts, nowMs: number): number | undefined {
  const reset = header(facts, 'x-ratelimit-reset');
  if (reset === undefined || !/^\d+$/.test(reset.trim())) return undefined;
  const resetMs = Number(reset) * 1000;
  const date = serverDateMs(facts);
  const reference = date === undefined ? nowMs : nowMs >= date && nowMs < date + 1000 ? nowMs : date;
  return Math.max(0, resetMs - reference);
}

function isRateLimit(facts: ResponseFacts, policy: RetryPolicy): boolean {
  if (policy.alwaysRateLimitStatuses.includes(facts.status)) return true;
  if (!policy.rateLimitStatuses.includes(facts.status)) return false;
  return (
    header(facts, 'retry-after') !== undefined ||
    header(facts, 'x-ratelimit-remaining') === '0' ||
    policy.secondaryLimitPattern.test(facts.message ?? '')
  );
}

function clampDelay(ms: number, policy: RetryPolicy): number {
  return Math.min(Math.max(0, Math.round(ms)), policy.maxHeaderDelayMs);
}

/** The decision for one response. `status < 400` (including 3xx handled by the caller) is success. */
export function decideRetry(facts: ResponseFacts, ctx: DecisionContext, policy: RetryPolicy = githubRetryPolicy): RetryDecision {
  const { status } = facts;
  if (status < 400) return { kind: 'success' };
  const message = facts.message ?? `HTTP ${status}`;
  const reason = facts.reason;

  if (isRateLimit(facts, policy)) {
    // Primary means the window is spent (remaining 0); anything else (a secondary message, a bare 429,
    // a 403 with only retry-after) is a secondary limit.
    const primary = header(facts, 'x-ratelimit-remaining') === '0' && !policy.secondaryLimitPattern.test(facts.message ?? '');
    const type = policy.rateLimitType ?? (primary ? FailureType.PrimaryRateLimit : FailureType.SecondaryRateLimit);
    if (ctx.attempt >= policy.maxRateLimitAttempts) {
      return {
        kind: 'permanent',
        type: FailureType.RateLimitExhausted,
        status,
        message: `still rate limited after ${ctx.attempt} attempts: ${message}`,
        reason,
      };
    }
    const retryAfter = parseRetryAfterMs(header(facts, 'retry-after'), ctx.nowMs, serverDateMs(facts));
    let delayMs: number;
    if (retryAfter !== undefined) {
      delayMs = clampDelay(retryAfter, policy);
    } else if (header(facts, 'x-ratelimit-remaining') === '0' && msUntilReset(facts, ctx.nowMs) !== undefined) {
      delayMs = clampDelay(msUntilReset(facts, ctx.nowMs)! + policy.resetMarginMs, policy);
    } else if (facts.bodyRetryDelayMs !== undefined) {
      delayMs = clampDelay(facts.bodyRetryDelayMs, policy);
    } else {
      delayMs = clampDelay(backoffMs(policy.rateLimitBackoff, ctx.attempt), policy);
    }
    return { kind: 'retry', type, status, delayMs, blockedUntilMs: ctx.nowMs + delayMs, message, reason };
  }

  const permanentType = (facts.apiStatus !== undefined ? policy.permanentByApiStatus?.[facts.apiStatus] : undefined) ?? policy.permanent[status];
  if (permanentType !== undefined) return { kind: 'permanent', type: permanentType, status, message, reason };

  if (policy.transientStatuses.includes(status) || status >= 500) {
    return transientDecision(ctx, policy, FailureType.Server, message, status, facts, reason);
  }
  return { kind: 'permanent', type: FailureType.ClientError, status, message, reason };
}

/** The decision when no response arrived (connection reset, timeout, DNS failure). */
export function decideNetworkRetry(message: string, ctx: DecisionContext, policy: RetryPolicy = githubRetryPolicy): RetryDecision {
  return transientDecision(ctx, policy, FailureType.Network, message);
}

function transientDecision(
  ctx: DecisionContext,
  policy: RetryPolicy,
  type: FailureTypeName,
  message: string,
  status?: number,
  facts?: ResponseFacts,
  reason?: string,
): RetryDecision {
  if (ctx.attempt >= policy.maxTransientAttempts) {
    return {
      kind: 'permanent',
      type: FailureType.TransientExhausted,
      status: status ?? 0,
      message: `gave up after ${ctx.attempt} attempts: ${message}`,
      reason,
    };
  }
  const hinted =
    facts === undefined
      ? undefined
      : (parseRetryAfterMs(header(facts, 'retry-after'), ctx.nowMs, serverDateMs(facts)) ?? facts.bodyRetryDelayMs);
  const delayMs = hinted !== undefined ? clampDelay(Math.max(hinted, 0), policy) : backoffMs(policy.transientBackoff, ctx.attempt);
  return { kind: 'retry', type, status, delayMs, message, reason };
}

/**
 * Rate-limit facts worth remembering from a *successful* response: when the window is spent
 * (`remaining: 0`), nothing may be sent until the reset even though this response was fine.
 */
export function blockedUntilFromHeaders(facts: ResponseFacts, nowMs: number, policy: RetryPolicy = githubRetryPolicy): number | undefined {
  if (header(facts, 'x-ratelimit-remaining') !== '0') return undefined;
  const wait = msUntilReset(facts, nowMs);
  return wait === undefined ? undefined : nowMs + clampDelay(wait + policy.resetMarginMs, policy);
}
