/**
 * Backoff: the one function that says how long to wait before the next try, and every schedule longhaul
 * waits on, as data. A schedule grows from `initialMs` per attempt, by the factor `coefficient` (exponential;
 * 1 is a fixed interval) or by `coefficient × initialMs` (linear), never past `maxMs`; `jitterMs` adds a uniform
 * share of up to that many milliseconds.
 *
 * Deterministic and shared by both sides: workflows (durable timers), activities (in-process waits and the
 * `nextRetryDelay` the HTTP core asks for) and the activity options' Temporal `RetryPolicy` objects, which are
 * derived from the same presets (`temporalRetryPolicy`) so their numbers live once. Jitter needs a random
 * source from the caller; only activity-side presets have any (a unit test keeps workflow presets without it).
 */
import type { RetryPolicy } from '@temporalio/common';

/** How a schedule grows: by a factor per attempt, or by a fixed step. */
export type BackoffKind = 'exponential' | 'linear';

/** Where a schedule's waits happen (who waits, and so who computes the delay). */
export type BackoffWhere =
  /** A workflow's durable timer (the kit): replayed, so its numbers must never change for running work. */
  | 'timer'
  /** Temporal's activity retry policy: the server computes the same growth from the policy's fields. */
  | 'retry-policy'
  /** The HTTP core's `nextRetryDelay`: the activity fails and tells Temporal when to try again. */
  | 'next-retry'
  /** A wait inside a running activity (a broken download, the rate governor's link). */
  | 'in-activity';

/**
 * One backoff schedule. After the `n`-th failure (1-based) it waits `initialMs × coefficient^(n−1)`
 * (exponential) or `initialMs × (1 + coefficient × (n−1))` (linear), at most `maxMs`, rounded, plus jitter.
 */
export interface Backoff {
  readonly kind: BackoffKind;
  readonly where: BackoffWhere;
  /** @format milliseconds — the wait before the second try (after the first failure). */
  readonly initialMs: number;
  /**
   * Growth per attempt. Exponential: the factor (≥ 1; 1 = a fixed interval). Linear: the share of
   * `initialMs` added per attempt (1: initial, 2 × initial, 3 × initial…).
   */
  readonly coefficient: number;
  /** @format milliseconds — the wait never grows past this (`Infinity`: bounded only by the caller's attempts). */
  readonly maxMs: number;
  /** @format milliseconds — up to this much is added at random, so many waiters do not all come back at once. */
  readonly jitterMs?: number;
}

/**
 * Every schedule of longhaul by name. Those that take their bounds from a process's input (the outage
 * backoff, the poll schedule) start from these and replace `initialMs`/`maxMs` with the input's.
 */
export const BACKOFF = {
  /**
   * Polls of a remote state, by default (`HONEST_POLL_SHAPE`, which also grows the interval to 10 % of the
   * wait): every 30 s, at most 10 min apart. A process's input may give its own bounds and factor.
   */
  poll: { kind: 'exponential', where: 'timer', initialMs: 30_000, coefficient: 1, maxMs: 10 * 60_000 },
  /** A log bucket's cancelled long-running operation, watched until it ends: 1 s growing by half to 10 s. */
  bucketCancelWatch: { kind: 'exponential', where: 'timer', initialMs: 1_000, coefficient: 1.5, maxMs: 10_000 },
  /** After a failed call or poll, on the outage budget (`src/common/outage.ts`): 5 s doubling to 3 min. */
  outage: { kind: 'exponential', where: 'timer', initialMs: 5_000, coefficient: 2, maxMs: 3 * 60_000 },
  /** The same for recurring work (feed polls, hook repair): a scheduled run has time, 10 s doubling to 3 min. */
  recurringOutage: { kind: 'exponential', where: 'timer', initialMs: 10_000, coefficient: 2, maxMs: 3 * 60_000 },
  /** `sendOnce`'s lookups over the grace period (runs recorded before bounded lookups): 1 s doubling to 15 s. */
  sendOnceLookup: { kind: 'exponential', where: 'timer', initialMs: 1_000, coefficient: 2, maxMs: 15_000 },
  /** `sendOnce`'s re-send after a refused try, when the server demanded no wait: 1 s doubling to 60 s. */
  sendOnceResend: { kind: 'exponential', where: 'timer', initialMs: 1_000, coefficient: 2, maxMs: 60_000 },

  /** Reads, polls and single-attempt sends (`READ`, `POLL`, `SEND_ONCE`): 1 s doubling to 2 min. */
  readRetry: { kind: 'exponential', where: 'retry-policy', initialMs: 1_000, coefficient: 2, maxMs: 2 * 60_000 },
  /** Cleanup calls, downloads and lost quiet-poll attempts (`CLEANUP`, `DOWNLOAD`, `QUIET_POLL`): 1 s doubling to 1 min. */
  longRetry: { kind: 'exponential', where: 'retry-policy', initialMs: 1_000, coefficient: 2, maxMs: 60_000 },
  /** A feed's sink deliveries and the feed entity's control calls: 1 s doubling to 30 s. */
  feedRetry: { kind: 'exponential', where: 'retry-policy', initialMs: 1_000, coefficient: 2, maxMs: 30_000 },
  /** Recording a scheduled run's failure on its Schedule: 1 s doubling to 10 s. */
  scheduleHealthRetry: { kind: 'exponential', where: 'retry-policy', initialMs: 1_000, coefficient: 2, maxMs: 10_000 },

  /** GitHub's secondary rate limit without headers (spec 001): at least 60 s, doubling per attempt. */
  githubSecondaryLimit: { kind: 'exponential', where: 'next-retry', initialMs: 60_000, coefficient: 2, maxMs: Number.POSITIVE_INFINITY },
  /** GitHub's 5xx and network faults: 1 s doubling to 60 s. */
  githubTransient: { kind: 'exponential', where: 'next-retry', initialMs: 1_000, coefficient: 2, maxMs: 60_000 },
  /** Google's `RESOURCE_EXHAUSTED` without `RetryInfo` (AIP-194): from 5 s, doubling. */
  googleRateLimit: { kind: 'exponential', where: 'next-retry', initialMs: 5_000, coefficient: 2, maxMs: Number.POSITIVE_INFINITY },
  /** Google's `UNAVAILABLE`, `DEADLINE_EXCEEDED`, `INTERNAL` and network faults: 1 s doubling to 30 s. */
  googleTransient: { kind: 'exponential', where: 'next-retry', initialMs: 1_000, coefficient: 2, maxMs: 30_000 },
  /** Storage and sinks (token-less client): a 429 without `retry-after`, from 1 s doubling. */
  tokenlessRateLimit: { kind: 'exponential', where: 'next-retry', initialMs: 1_000, coefficient: 2, maxMs: Number.POSITIVE_INFINITY },
  /** Storage and sinks: 408, 425, 5xx and network faults, 1 s doubling to 30 s. */
  tokenlessTransient: { kind: 'exponential', where: 'next-retry', initialMs: 1_000, coefficient: 2, maxMs: 30_000 },

  /** A download that broke without progress, before resuming (`MAX_STALLS` bounds the attempts): 200 ms doubling. */
  downloadStall: { kind: 'exponential', where: 'in-activity', initialMs: 200, coefficient: 2, maxMs: Number.POSITIVE_INFINITY },
  /** The rate governor's link reporting a limit it saw (Signal-with-Start), 5 tries: 200 ms, 400 ms, 600 ms… */
  governorReport: { kind: 'linear', where: 'in-activity', initialMs: 200, coefficient: 1, maxMs: Number.POSITIVE_INFINITY },
  /** An object store's request failing transiently (connection refused, 408, 429, 5xx), inside the upload activity. */
  objectStoreRetry: { kind: 'exponential', where: 'in-activity', initialMs: 200, coefficient: 2, maxMs: 5_000 },
  /** The rate governor's link asking again (unreachable, or its attempt's time spent): 1–2 s, jittered. */
  governorRetry: { kind: 'exponential', where: 'in-activity', initialMs: 1_000, coefficient: 1, maxMs: 1_000, jitterMs: 1_000 },
} as const satisfies Record<string, Backoff>;

export type BackoffName = keyof typeof BACKOFF;

/**
 * The wait before try `attempt + 1`, i.e. after the `attempt`-th failure (1-based): `initialMs` grown per
 * attempt as the schedule's `kind` says, capped at `maxMs` and rounded to the millisecond, plus
 * `random() × jitterMs` (rounded) when the schedule has jitter. Temporal's retry policy computes the same
 * exponential growth.
 */
export function backoffMs(schedule: Backoff, attempt: number, random?: () => number): number {
  const steps = Math.max(0, attempt - 1);
  const grown = schedule.initialMs * (schedule.kind === 'linear' ? 1 + schedule.coefficient * steps : Math.pow(schedule.coefficient, steps));
  const delay = Math.round(Math.min(schedule.maxMs, grown));
  if (!schedule.jitterMs) return delay;
  if (random === undefined) throw new TypeError('backoffMs: a schedule with jitter needs a random source');
  return delay + Math.round(random() * schedule.jitterMs);
}

/**
 * A `retry-policy` schedule as Temporal's `RetryPolicy`, with the attempt bound and non-retryable types the
 * call needs (`rest`).
 */
export function temporalRetryPolicy(
  schedule: Backoff & { kind: 'exponential'; where: 'retry-policy' },
  rest: Omit<RetryPolicy, 'initialInterval' | 'backoffCoefficient' | 'maximumInterval'> = {},
): RetryPolicy {
  return { initialInterval: schedule.initialMs, backoffCoefficient: schedule.coefficient, maximumInterval: schedule.maxMs, ...rest };
}
