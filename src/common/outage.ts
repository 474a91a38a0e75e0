/**
 * Outages are waited out, not fatal (issue 8, item 1). An API call that still fails after its own
 * activity retries with a transient failure (5xx, an HTML error page, a reset, a timeout) means the
 * service is down for longer than those retries cover (about four minutes). Recurring work (feed
 * polls, hook repair) then keeps trying on a separate, generous budget with backoff capped at a few
 * minutes, instead of failing the run; only a permanent answer or a spent budget ends it.
 *
 * Deterministic: shared by workflows, the starter and tests.
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';

export interface OutageBudget {
  /** How long a run keeps waiting out an outage before it fails. @format milliseconds */
  budgetMs: number;
  /** The first wait after a failed call. @format milliseconds */
  initialDelayMs: number;
  /** Waits double up to this. @format milliseconds */
  maxDelayMs: number;
}

/** Six hours, waits from 10 s doubling to 3 minutes. */
export const DEFAULT_OUTAGE_BUDGET: OutageBudget = { budgetMs: 6 * 3_600_000, initialDelayMs: 10_000, maxDelayMs: 3 * 60_000 };

/** Bounds of the settings (a floor keeps a run from hammering a down service; a ceiling keeps runs finite). */
export const OUTAGE_LIMITS = { minDelayMs: 100, maxDelayMs: 60 * 60_000, maxBudgetMs: 7 * 24 * 3_600_000 } as const;

/**
 * Failure types of the HTTP core (`FailureType` in `src/http/retry-policy.ts`, repeated here because
 * workflows may not import `src/http`; a unit test keeps them equal) that mean "not reachable now".
 */
export const OUTAGE_FAILURE_TYPES: readonly string[] = [
  'ServerError',
  'NetworkError',
  'TransientRetriesExhaustedError',
  'RateLimitRetriesExhaustedError',
  // A 200 whose body is not what the API returns (an HTML page from a proxy in front of it).
  'UnexpectedResponseError',
  // A success answer that is not the API's (a proxy's HTML page, truncated JSON): see src/http/answer.ts.
  'MalformedAnswer',
];

export function outageBudget(partial?: Partial<OutageBudget>): OutageBudget {
  return { ...DEFAULT_OUTAGE_BUDGET, ...partial };
}

/** Every problem with outage settings (empty when valid). */
export function outageProblems(partial: Partial<OutageBudget> | undefined, field = 'outage'): string[] {
  if (partial === undefined) return [];
  if (typeof partial !== 'object' || partial === null) return [`${field} must be an object`];
  const o = outageBudget(partial);
  const problems: string[] = [];
  const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  if (!num(o.budgetMs) || o.budgetMs < 0 || o.budgetMs > OUTAGE_LIMITS.maxBudgetMs) problems.push(`${field}.budgetMs must be between 0 and ${OUTAGE_LIMITS.maxBudgetMs} (7 days)`);
  if (!num(o.initialDelayMs) || o.initialDelayMs < OUTAGE_LIMITS.minDelayMs) problems.push(`${field}.initialDelayMs must be at least ${OUTAGE_LIMITS.minDelayMs}`);
  if (!num(o.maxDelayMs) || o.maxDelayMs > OUTAGE_LIMITS.maxDelayMs) problems.push(`${field}.maxDelayMs must be at most ${OUTAGE_LIMITS.maxDelayMs} (1 hour)`);
  else if (num(o.initialDelayMs) && o.maxDelayMs < o.initialDelayMs) problems.push(`${field}.maxDelayMs must be at least initialDelayMs`);
  return problems;
}

/** The wait before attempt `n + 1` after `n` failed attempts (n ≥ 1). @format milliseconds */
export function outageDelayMs(n: number, o: OutageBudget): number {
  return Math.min(o.maxDelayMs, o.initialDelayMs * 2 ** Math.max(0, Math.min(30, n - 1)));
}

/** The failure a call ended with, if it means the service is unreachable for now (an outage). */
export function outageCause(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return `timed out: ${cause.message}`;
  if (cause instanceof ApplicationFailure && OUTAGE_FAILURE_TYPES.includes(cause.type ?? '')) return `${cause.type}: ${cause.message}`;
  return undefined;
}
