/**
 * The outage budget (pure): how long a process keeps retrying calls that fail transiently — 5xx, HTML error
 * pages, resets, timeouts, DNS errors, rate limits, even after the activity's own retries ran out — before it
 * gives up. Processes that run to an end (migrations, imports, Google operations) count it as *consecutive*
 * failure time: one success refills it (this file, `afterFailure`). A recurring run (feed poll, hook repair)
 * counts it as *accumulated* outage time over the run (`outage-watch.ts`, `AccumulatedOutageBounds`). Both read
 * the same input field, `outage.budgetMs`; which count applies is the process's, as its input documents. The
 * state is plain data, so a workflow carries what it spent across continue-as-new.
 */
import { backoffMs, BACKOFF } from './backoff';
import type { FailureFacts } from './activity-failures';
import * as v from 'valibot';
import { msBetween, object, problemsOf, rule } from './schema';
import { POLL_INTERVAL_FLOOR_MS, POLL_TOTAL_CEILING_MS } from './poll-schedule';

const outageMs = () =>
  v.optional(msBetween(POLL_INTERVAL_FLOOR_MS, POLL_TOTAL_CEILING_MS, `must be a number of milliseconds between ${POLL_INTERVAL_FLOOR_MS} and ${POLL_TOTAL_CEILING_MS}`));

/**
 * The outage bounds of an input (absent or `null`: the process's defaults). An unset side of the
 * `maxBackoffMs ≥ initialBackoffMs` rule takes the most lenient default of any process: bounds valid for one
 * process are valid for all.
 */
export const OutageBoundsSchema = v.nullish(
  v.pipe(
    object({
      /**
       * @format milliseconds — the outage budget, default 6 h. For a process that runs to an end: how long calls
       * may keep failing *in a row* before it gives up (consecutive). For a recurring run (feed poll, hook repair):
       * how much time the run may spend in outages *in all* (accumulated).
       */
      budgetMs: outageMs(),
      /** @format milliseconds — the first wait after a failure. Default 5 s. */
      initialBackoffMs: outageMs(),
      /** @format milliseconds — the wait after failures never grows past this. Default 3 min. */
      maxBackoffMs: outageMs(),
    }),
    rule<{ initialBackoffMs?: number; maxBackoffMs?: number }>(
      ['budgetMs', 'initialBackoffMs', 'maxBackoffMs'],
      (b) => lenientMax(b) >= lenientInitial(b),
      (b) => `(${lenientMax(b)}) must be at least {.initialBackoffMs} (${lenientInitial(b)})`,
      'maxBackoffMs',
    ),
  ),
);

export type OutageBounds = NonNullable<v.InferInput<typeof OutageBoundsSchema>>;

/** The bounds with every field known; `budgetMs` counts consecutive failure time wherever this type is used. */
export type ResolvedOutageBounds = Required<OutageBounds>;

/** A recurring run's bounds (`OutageWatch`): the input's `budgetMs` counted as accumulated outage time. */
export interface AccumulatedOutageBounds {
  /** @format milliseconds — the time a run may spend in outages, added up over the run. */
  accumulatedBudgetMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_OUTAGE: ResolvedOutageBounds = {
  budgetMs: 6 * 60 * 60 * 1000,
  initialBackoffMs: BACKOFF.outage.initialMs,
  maxBackoffMs: BACKOFF.outage.maxMs,
};

/** What the budget has spent. Plain data: carried across continue-as-new. */
export interface OutageState {
  /** Calls that failed since the last success. */
  failuresInRow: number;
  /** Workflow time of the first failure since the last success. @format epoch milliseconds */
  failingSinceMs?: number;
  /** Calls that failed transiently in total. */
  failures: number;
}

export const NO_OUTAGE: OutageState = { failuresInRow: 0, failures: 0 };

export type OutageDecision =
  | { action: 'retry'; delayMs: number; state: OutageState }
  | { action: 'give-up'; why: 'permanent' | 'budget' | 'cancelled'; message: string; state: OutageState };

/** Every problem with the given outage bounds (empty when valid). */
export function outageBoundsProblems(bounds: OutageBounds | null | undefined, prefix = 'outage'): string[] {
  return problemsOf(OutageBoundsSchema, bounds, prefix);
}

function lenientInitial(b: { initialBackoffMs?: number }): number {
  return b.initialBackoffMs ?? Math.min(DEFAULT_OUTAGE.initialBackoffMs, RECURRING_OUTAGE.initialBackoffMs);
}

function lenientMax(b: { maxBackoffMs?: number }): number {
  return b.maxBackoffMs ?? Math.max(DEFAULT_OUTAGE.maxBackoffMs, RECURRING_OUTAGE.maxBackoffMs);
}

/**
 * Recurring work (feed polls, hook repair) waits longer between tries: a scheduled run has nothing else to do
 * and the next tick comes anyway. Six hours, waits from 10 s doubling to 3 minutes.
 */
export const RECURRING_OUTAGE: ResolvedOutageBounds = {
  budgetMs: 6 * 60 * 60 * 1000,
  initialBackoffMs: BACKOFF.recurringOutage.initialMs,
  maxBackoffMs: BACKOFF.recurringOutage.maxMs,
};

/** The given bounds over the process's defaults (`DEFAULT_OUTAGE`; recurring runs: `accumulatedOutageBounds`). */
export function resolveOutageBounds(given: OutageBounds | null | undefined, defaults: ResolvedOutageBounds = DEFAULT_OUTAGE): ResolvedOutageBounds {
  return { ...defaults, ...Object.fromEntries(Object.entries(given ?? {}).filter(([, v]) => v !== undefined)) };
}

/** A recurring run's bounds: the given ones over `RECURRING_OUTAGE`, its budget counted as accumulated time. */
export function accumulatedOutageBounds(given: OutageBounds | null | undefined): AccumulatedOutageBounds {
  const { budgetMs, initialBackoffMs, maxBackoffMs } = resolveOutageBounds(given, RECURRING_OUTAGE);
  return { accumulatedBudgetMs: budgetMs, initialBackoffMs, maxBackoffMs };
}

/** How long calls have been failing in a row at `nowMs` (0 when the last call succeeded). */
export function outageSpentMs(state: OutageState, nowMs: number): number {
  return state.failingSinceMs === undefined ? 0 : Math.max(0, nowMs - state.failingSinceMs);
}

/** The wait after the `failuresInRow`-th failure in a row: the outage schedule within the given bounds (doubling, capped). */
export function outageBackoffMs(failuresInRow: number, bounds: Pick<ResolvedOutageBounds, 'initialBackoffMs' | 'maxBackoffMs'>): number {
  return backoffMs({ ...BACKOFF.outage, initialMs: bounds.initialBackoffMs, maxMs: bounds.maxBackoffMs }, failuresInRow);
}

/**
 * What to do after a call failed: give up on a permanent answer or once the budget is spent, else wait and
 * call again. A wait a rate limit demanded is honoured (within the budget).
 */
export function afterFailure(state: OutageState, failure: FailureFacts, nowMs: number, bounds: ResolvedOutageBounds): OutageDecision {
  const next: OutageState = {
    failuresInRow: state.failuresInRow + 1,
    failingSinceMs: state.failingSinceMs ?? nowMs,
    failures: state.failures + (failure.kind === 'transient' ? 1 : 0),
  };
  if (failure.kind === 'cancelled') return { action: 'give-up', why: 'cancelled', message: failure.message, state: next };
  if (failure.kind === 'permanent') return { action: 'give-up', why: 'permanent', message: failure.message, state: next };
  const spent = outageSpentMs(next, nowMs);
  if (spent >= bounds.budgetMs) {
    return {
      action: 'give-up',
      why: 'budget',
      message: `calls kept failing for ${formatDuration(spent)} (${next.failuresInRow} in a row; outage budget ${formatDuration(bounds.budgetMs)}); last: ${failure.message}`,
      state: next,
    };
  }
  // Only a rate limit's wait is a demand of the server; after 5xx and resets the kit's own backoff rules (the
  // activity already backed off between its attempts).
  const demanded = failure.notProcessed ? (failure.demandedDelayMs ?? 0) : 0;
  const wanted = Math.max(outageBackoffMs(next.failuresInRow, bounds), demanded);
  // The last try lands at the end of the budget, not past it.
  return { action: 'retry', delayMs: Math.max(0, Math.min(wanted, bounds.budgetMs - spent)), state: next };
}

/** After a success: the budget is whole again (the total count stays). */
export function afterSuccess(state: OutageState): OutageState {
  return { failuresInRow: 0, failures: state.failures };
}

/** "2 h 5 min", "45 s": for messages and status lines. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 120) return `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
