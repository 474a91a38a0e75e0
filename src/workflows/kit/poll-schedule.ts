/**
 * The one poll schedule of every process that waits on a remote state (exports, imports, Google operations):
 * bounds, their validation, and the growth function. Pure and deterministic: used by workflows (through
 * `pollUntil`), by the per-process model files' validation in `src/common/`, by the CLI and by benchmarks.
 */

/** How a process polls a remote state. Every field is optional in input; defaults come per process. */
export interface PollBounds {
  /** @format milliseconds — the wait before the first poll. */
  initialIntervalMs?: number;
  /** @format milliseconds — the interval never grows past this. */
  maxIntervalMs?: number;
  /** Growth of the interval per poll (≥ 1; 1 = a fixed interval). */
  backoffFactor?: number;
  /** @format milliseconds — give up waiting after this long in total (counted from the start of the wait). */
  timeoutMs?: number;
}

export type ResolvedPollBounds = Required<PollBounds>;

/**
 * No interval below this: a process "polled every second" is allowed (the 24-hour continue-as-new test
 * relies on it), anything faster only burns rate-limit points and history events.
 * @format milliseconds
 */
export const POLL_INTERVAL_FLOOR_MS = 1_000;
/**
 * No wait longer than this in total: a process that has not finished in a week needs a person, not a timer.
 * @format milliseconds
 */
export const POLL_TOTAL_CEILING_MS = 7 * 24 * 60 * 60 * 1000;
/** Largest accepted growth factor (a bigger one reaches the cap after one poll and only hides mistakes). */
export const POLL_FACTOR_CEILING = 10;

/**
 * Every problem with the given bounds (empty when valid), each naming the field as `<prefix>.<field>`.
 * Checks the fields that are given and, when both intervals are known (given or defaulted), their order.
 */
export function pollBoundsProblems(bounds: PollBounds | undefined, prefix = 'poll', defaults?: ResolvedPollBounds): string[] {
  if (bounds === undefined || bounds === null) return [];
  if (typeof bounds !== 'object' || Array.isArray(bounds)) return [`${prefix} must be an object`];
  const problems: string[] = [];
  const check = (name: keyof PollBounds, min: number, max: number, unit: string) => {
    const v = bounds[name];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isFinite(v)) problems.push(`${prefix}.${name} must be a number${unit}`);
    else if (v < min || v > max) problems.push(`${prefix}.${name} must be between ${min} and ${max}${unit} (got ${v})`);
  };
  check('initialIntervalMs', POLL_INTERVAL_FLOOR_MS, POLL_TOTAL_CEILING_MS, ' ms');
  check('maxIntervalMs', POLL_INTERVAL_FLOOR_MS, POLL_TOTAL_CEILING_MS, ' ms');
  check('backoffFactor', 1, POLL_FACTOR_CEILING, '');
  check('timeoutMs', POLL_INTERVAL_FLOOR_MS, POLL_TOTAL_CEILING_MS, ' ms');
  if (problems.length === 0) {
    const initial = bounds.initialIntervalMs ?? defaults?.initialIntervalMs;
    const max = bounds.maxIntervalMs ?? defaults?.maxIntervalMs;
    if (initial !== undefined && max !== undefined && max < initial) {
      problems.push(`${prefix}.maxIntervalMs (${max}) must be at least ${prefix}.initialIntervalMs (${initial})`);
    }
  }
  return problems;
}

/** The defaults with the given fields on top (validate first). */
export function resolvePollBounds(defaults: ResolvedPollBounds, given: PollBounds | undefined): ResolvedPollBounds {
  const pick = <K extends keyof PollBounds>(k: K) => (given?.[k] !== undefined ? (given[k] as number) : defaults[k]);
  return { initialIntervalMs: pick('initialIntervalMs'), maxIntervalMs: pick('maxIntervalMs'), backoffFactor: pick('backoffFactor'), timeoutMs: pick('timeoutMs') };
}

/** The growth function: the wait before poll `n` (1-based) grows by the factor from the initial interval, capped. */
export function pollDelayMs(n: number, bounds: ResolvedPollBounds): number {
  return Math.round(Math.min(bounds.maxIntervalMs, bounds.initialIntervalMs * Math.pow(bounds.backoffFactor, Math.max(0, n - 1))));
}

/**
 * When poll `n` is due, given when poll `n - 1` was due: anchored to the schedule, not to when the previous
 * poll ended, so poll latency does not accumulate. When the process fell behind (a slow poll, an outage), the
 * schedule re-anchors at `nowMs` instead of firing the missed polls back to back.
 */
export function nextPollAtMs(previousDueAtMs: number, n: number, bounds: ResolvedPollBounds, nowMs: number): number {
  const due = previousDueAtMs + pollDelayMs(n, bounds);
  return due >= nowMs ? due : nowMs + pollDelayMs(n, bounds);
}

/**
 * The poller's schedule when every poll answers at once: the times (ms after the start of the wait) at which
 * it polls, up to and including the first poll at or after `untilMs`, never past `bounds.timeoutMs`.
 */
export function pollScheduleMs(bounds: ResolvedPollBounds, untilMs: number): number[] {
  const times: number[] = [];
  let t = 0;
  for (let n = 1; t < untilMs; n++) {
    const next = nextPollAtMs(t, n, bounds, t);
    if (next > bounds.timeoutMs) break;
    t = next;
    times.push(t);
  }
  return times;
}

/** How many polls it takes to see a process that finishes `durationMs` after the wait began. */
export function pollsToObserve(durationMs: number, bounds: ResolvedPollBounds, opts: { pollAtStart?: boolean } = {}): number {
  return pollScheduleMs({ ...bounds, timeoutMs: Number.POSITIVE_INFINITY }, durationMs).length + (opts.pollAtStart ? 1 : 0);
}
