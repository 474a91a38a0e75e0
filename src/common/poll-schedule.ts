/**
 * The one poll schedule of every process that waits on a remote state (exports, imports, Google operations):
 * bounds, their validation, and the growth function. Pure and deterministic: used by workflows (through
 * `pollUntil`), by the per-process model files' validation in `src/common/`, by the CLI and by benchmarks.
 */
import { BACKOFF, backoffMs, type Backoff } from './backoff';
import * as v from 'valibot';
import { firstProblem, object, problemsOf, rule } from './schema';

/** How a process polls a remote state. Every field is optional in input; defaults come per process. */
export type PollBounds = v.InferInput<ReturnType<typeof pollBoundsFields>>;

/** Bounds with every field known (`elapsedFraction` absent = 0, as in bounds recorded before it existed). */
export type ResolvedPollBounds = Required<Omit<PollBounds, 'elapsedFraction'>> & Pick<PollBounds, 'elapsedFraction'>;

/**
 * The default shape of every waiting process, worked out from the promise "a finished process is noticed at
 * most max(10 % of the elapsed wait, 30 s) late". A process that finishes just after a poll at `t` is seen by
 * the next poll, so each interval must be ≤ max(0.1·t, 30 s); the fewest polls that keep that promise take the
 * largest such step every time (t + max(0.1·t, 30 s) grows with t, so no other schedule is ever ahead of it):
 * every 30 s for the first 5 minutes, then 10 % of the elapsed wait (×1.1 per poll), capped at 10 minutes.
 * That is 18 polls for a 10-minute wait and 37 for 60 minutes; on GitHub, polls answered 304 (unchanged since
 * the ETag) do not count against the primary limit, so only the few that see a change do.
 */
export const HONEST_POLL_SHAPE = {
  initialIntervalMs: BACKOFF.poll.initialMs,
  maxIntervalMs: BACKOFF.poll.maxMs,
  backoffFactor: BACKOFF.poll.coefficient,
  elapsedFraction: 0.1,
} as const satisfies Omit<ResolvedPollBounds, 'timeoutMs'>;
/** The detection-delay promise of the defaults: a fraction of the elapsed wait, or this floor when larger. */
export const DETECTION_DELAY_FLOOR_MS = 30_000;

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

/** A bounded number: "must be a number" when it is none, "must be between" when it is out of range. */
function bounded(min: number, max: number, unit: string) {
  return v.optional(
    firstProblem(
      v.pipe(
        v.number(`must be a number${unit}`),
        v.finite(`must be a number${unit}`),
        v.minValue(min, (issue) => `must be between ${min} and ${max}${unit} (got ${String(issue.input)})`),
        v.maxValue(max, (issue) => `must be between ${min} and ${max}${unit} (got ${String(issue.input)})`),
      ),
    ),
  );
}

function pollBoundsFields() {
  return object({
    /** @format milliseconds — the wait before the first poll. */
    initialIntervalMs: bounded(POLL_INTERVAL_FLOOR_MS, POLL_TOTAL_CEILING_MS, ' ms'),
    /** @format milliseconds — the interval never grows past this. */
    maxIntervalMs: bounded(POLL_INTERVAL_FLOOR_MS, POLL_TOTAL_CEILING_MS, ' ms'),
    /** Growth of the interval per poll (≥ 1; 1 = a fixed interval). */
    backoffFactor: bounded(1, POLL_FACTOR_CEILING, ''),
    /** @format milliseconds — give up waiting after this long in total (counted from the start of the wait). */
    timeoutMs: bounded(POLL_INTERVAL_FLOOR_MS, POLL_TOTAL_CEILING_MS, ' ms'),
    /**
     * The interval also grows to this fraction of the time waited so far (0 = off), so a finished process is
     * noticed at most that fraction of its wait late. Left out when `backoffFactor` is given: a growth law the
     * caller describes is kept exactly as described.
     */
    elapsedFraction: bounded(0, 1, ''),
  });
}

/**
 * Poll bounds in an input (absent or `null`: the process's defaults). Checks the fields that are given and,
 * when both intervals are known (given or defaulted), their order.
 */
export function pollBoundsSchema(defaults?: ResolvedPollBounds) {
  return v.nullish(
    v.pipe(
      pollBoundsFields(),
      rule<PollBounds>(
        ['initialIntervalMs', 'maxIntervalMs', 'backoffFactor', 'timeoutMs', 'elapsedFraction'],
        (b) => {
          const [initial, max] = [b.initialIntervalMs ?? defaults?.initialIntervalMs, b.maxIntervalMs ?? defaults?.maxIntervalMs];
          return initial === undefined || max === undefined || max >= initial;
        },
        (b) => `(${b.maxIntervalMs ?? defaults?.maxIntervalMs}) must be at least {.initialIntervalMs} (${b.initialIntervalMs ?? defaults?.initialIntervalMs})`,
        'maxIntervalMs',
      ),
    ),
  );
}

/** Every problem with the given bounds (empty when valid), each naming the field as `<prefix>.<field>`. */
export function pollBoundsProblems(bounds: PollBounds | null | undefined, prefix = 'poll', defaults?: ResolvedPollBounds): string[] {
  return problemsOf(pollBoundsSchema(defaults), bounds, prefix);
}

/**
 * The defaults with the given fields on top (validate first). A caller who gives a growth law
 * (`backoffFactor`) without `elapsedFraction` gets exactly that schedule, as before the fraction existed; one
 * who only moves its bounds (`initialIntervalMs`, `maxIntervalMs`, `timeoutMs`) keeps the default's growth
 * with the fraction (`{ initialIntervalMs: 60_000, maxIntervalMs: 600_000 }` still grows from 1 to 10 minutes).
 */
export function resolvePollBounds(defaults: ResolvedPollBounds, given: PollBounds | null | undefined): ResolvedPollBounds {
  const pick = <K extends keyof PollBounds>(k: K) => (given?.[k] !== undefined ? (given[k] as number) : (defaults[k] ?? 0));
  const ownGrowth = given?.backoffFactor !== undefined;
  const elapsedFraction = given?.elapsedFraction ?? (ownGrowth ? 0 : (defaults.elapsedFraction ?? 0));
  return {
    initialIntervalMs: pick('initialIntervalMs'),
    maxIntervalMs: pick('maxIntervalMs'),
    backoffFactor: pick('backoffFactor'),
    timeoutMs: pick('timeoutMs'),
    ...(elapsedFraction > 0 ? { elapsedFraction } : {}),
  };
}

/**
 * The growth function: the wait before poll `n` (1-based), `elapsedMs` after the schedule began — the
 * larger of the factor's growth from the initial interval (`backoffMs`) and the fraction of the time waited (rounded
 * down, so the detection-delay promise holds to the millisecond), capped at the maximum.
 */
export function pollDelayMs(n: number, bounds: ResolvedPollBounds, elapsedMs = 0): number {
  const proportional = Math.floor((bounds.elapsedFraction ?? 0) * Math.max(0, elapsedMs));
  return Math.max(backoffMs(pollGrowth(bounds), n), Math.round(Math.min(bounds.maxIntervalMs, proportional)));
}

/** The factor's part of a poll schedule as a backoff schedule (a poll is a durable timer). */
export function pollGrowth(bounds: ResolvedPollBounds): Backoff {
  return { kind: 'exponential', where: 'timer', initialMs: bounds.initialIntervalMs, coefficient: bounds.backoffFactor, maxMs: bounds.maxIntervalMs };
}

/**
 * When poll `n` is due, given when poll `n - 1` was due and when the schedule began (`sinceMs`): anchored
 * to the schedule, not to when the previous poll ended, so poll latency does not accumulate. When the
 * process fell behind (a slow poll, an outage), the schedule re-anchors at `nowMs` instead of firing the
 * missed polls back to back.
 */
export function nextPollAtMs(previousDueAtMs: number, n: number, bounds: ResolvedPollBounds, nowMs: number, sinceMs = 0): number {
  const due = previousDueAtMs + pollDelayMs(n, bounds, previousDueAtMs - sinceMs);
  return due >= nowMs ? due : nowMs + pollDelayMs(n, bounds, nowMs - sinceMs);
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

/**
 * The worst detection delay of a schedule over waits up to `untilMs`: for each poll, how late a process that
 * finished just after the previous poll (or at the start) is seen, with the elapsed wait at that moment.
 */
export function detectionDelays(bounds: ResolvedPollBounds, untilMs: number): { finishedAtMs: number; delayMs: number }[] {
  const times = pollScheduleMs({ ...bounds, timeoutMs: Number.POSITIVE_INFINITY }, untilMs);
  return times.map((t, i) => ({ finishedAtMs: i === 0 ? 0 : times[i - 1], delayMs: t - (i === 0 ? 0 : times[i - 1]) }));
}

/**
 * The promised bound on the detection delay of a process that finished `elapsedMs` into the wait, at the
 * defaults' share of the wait or at the one a caller chose (`--poll-fraction`).
 */
export function detectionDelayBoundMs(elapsedMs: number, fraction: number = HONEST_POLL_SHAPE.elapsedFraction): number {
  return Math.max(fraction * elapsedMs, DETECTION_DELAY_FLOOR_MS);
}

/** How many polls it takes to see a process that finishes `durationMs` after the wait began. */
export function pollsToObserve(durationMs: number, bounds: ResolvedPollBounds, opts: { pollAtStart?: boolean } = {}): number {
  return pollScheduleMs({ ...bounds, timeoutMs: Number.POSITIVE_INFINITY }, durationMs).length + (opts.pollAtStart ? 1 : 0);
}

/**
 * What a conditional poll activity returns: the state with its `etag` beside its fields (so results recorded
 * before ETags existed, plain states, still read as fresh states on replay), or a bare "not modified".
 */
export type Polled<T> = (T & { etag?: string; notModified?: undefined }) | { notModified: true; etag?: string };
