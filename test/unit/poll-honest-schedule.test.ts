/**
 * The default poll schedule of every waiting process against its two promises: a finished process is noticed
 * at most max(10 % of the elapsed wait, 30 s) late at every moment, and a 60-minute GitHub wait costs at most
 * 25 requests counted against the primary limit (304s to conditional polls are not counted). Checked over
 * the whole schedule, through the same decision functions the workflows run, and against the event budgets.
 */
import { describe, expect, it } from 'vitest';
import {
  afterPollAnswered,
  asConditional,
  detectionDelayBoundMs,
  detectionDelays,
  HONEST_POLL_SHAPE,
  pollDelayMs,
  pollScheduleMs,
  pollsToObserve,
  resolvePollBounds,
  startPolling,
  type ResolvedPollBounds,
} from '../../src/workflows/kit';
import { DEFAULT_POLL } from '../../src/processes/org-migration/model';
import { DEFAULT_IMPORT_POLL } from '../../src/processes/source-import/model';
import { DEFAULT_OPERATION_POLL, EVENTS_PER_POLL, maxPollsPerRun, operationPollProblems } from '../../src/processes/google-operation/model';
import { DEFAULT_OUTAGE } from '../../src/common/outage';
import { MAX_EVENTS_PER_RUN } from '../../src/common/run-budget';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const PROCESSES: [string, ResolvedPollBounds][] = [
  ['org-migration export', DEFAULT_POLL],
  ['source import', DEFAULT_IMPORT_POLL],
  ['Google operations (API-key delete, log-bucket create/update, DNS change)', DEFAULT_OPERATION_POLL],
];

/** A small deterministic PRNG (mulberry32): the same "random" instants on every run. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The first poll at or after `finishedAtMs` (the one that sees the process finished). */
function seenAt(times: number[], finishedAtMs: number): number {
  let lo = 0;
  let hi = times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] >= finishedAtMs) hi = mid;
    else lo = mid + 1;
  }
  return times[lo];
}

describe.each(PROCESSES)('default schedule of %s', (_name, bounds) => {
  const times = pollScheduleMs(bounds, bounds.timeoutMs);

  it('notices a finish at most max(10 % of the elapsed wait, 30 s) late, for any finishing instant up to the time bound', () => {
    const random = prng(20261124);
    const instants: number[] = [1, bounds.timeoutMs - 1];
    // Just after each poll (the worst case of its interval), exactly at it, and 20,000 instants anywhere.
    for (const t of times) instants.push(t + 1, t);
    for (let i = 0; i < 20_000; i++) instants.push(1 + Math.floor(random() * (bounds.timeoutMs - 2)));
    let checked = 0;
    for (const finishedAt of instants) {
      if (finishedAt > times.at(-1)!) continue;
      const delay = seenAt(times, finishedAt) - finishedAt;
      expect(delay, `finished at ${finishedAt} ms`).toBeLessThanOrEqual(detectionDelayBoundMs(finishedAt));
      checked++;
    }
    expect(checked).toBeGreaterThan(20_000);
    // The worst case of each interval, as the bench reports it.
    for (const { finishedAtMs, delayMs } of detectionDelays(bounds, bounds.timeoutMs)) expect(delayMs).toBeLessThanOrEqual(detectionDelayBoundMs(finishedAtMs));
  });

  it('polls 18 times for a 10-minute wait and 37 for 60 minutes: the fewest that keep the delay promise', () => {
    expect(pollsToObserve(10 * MINUTE, bounds)).toBe(18);
    expect(pollsToObserve(HOUR, bounds)).toBe(37);
    // The greedy schedule (the largest allowed step every time) needs exactly as many: none can need fewer.
    let greedy = 0;
    for (let t = 0; t < HOUR; greedy++) t += Math.floor(detectionDelayBoundMs(t));
    expect(pollsToObserve(HOUR, bounds)).toBe(greedy);
  });

  it('runs the same schedule through the workflow decision functions, from any start and after falling behind', () => {
    const start = Date.UTC(2026, 10, 24, 1, 2, 3, 456);
    let state = startPolling(start, bounds);
    const seen: number[] = [];
    while (state.dueAtMs - start <= 3 * HOUR) {
      seen.push(state.dueAtMs - start);
      state = afterPollAnswered(state, bounds, state.dueAtMs).state;
    }
    expect(seen).toEqual(pollScheduleMs(bounds, 3 * HOUR).filter((t) => t <= 3 * HOUR));
    // On time, the next poll is due 10 % of the wait after the last one was due...
    const onTime = afterPollAnswered({ ...state, dueAtMs: start + HOUR }, bounds, start + HOUR + MINUTE).state;
    expect(onTime.dueAtMs - start).toBe(HOUR + 6 * MINUTE);
    // ...and a poll answered 10 minutes late (an outage, a slow worker) re-anchors: 10 % of the wait so far from now.
    const late = afterPollAnswered({ ...state, dueAtMs: start + HOUR }, bounds, start + HOUR + 10 * MINUTE).state;
    expect(late.dueAtMs - (start + HOUR + 10 * MINUTE)).toBe(7 * MINUTE);
  });
});

describe('GitHub: requests counted against the primary limit', () => {
  /**
   * A remote process whose answer changes at `changesAtMs` (ETag changes with the body): a poll sees a 200
   * (counted) when the body changed since the last poll, a 304 (not counted) otherwise.
   */
  const counted = (bounds: ResolvedPollBounds, waitMs: number, changesAtMs: number[]) => {
    const times = pollScheduleMs(bounds, waitMs);
    let version = -1;
    let countedRequests = 0;
    for (const t of times) {
      const now = changesAtMs.filter((c) => c <= t).length;
      if (now !== version) countedRequests++;
      version = now;
    }
    return { polls: times.length, counted: countedRequests };
  };

  it('a 60-minute export (pending → exporting → exported) costs 3 counted requests of 37 polls', () => {
    expect(counted(DEFAULT_POLL, HOUR, [12 * MINUTE, HOUR])).toEqual({ polls: 37, counted: 3 });
  });

  it('stays within 25 counted requests for 60 minutes even when the import status changes every few minutes', () => {
    // An import moving through its steps and percentages: a body change every 3 minutes.
    const changes = Array.from({ length: 20 }, (_, i) => (i + 1) * 3 * MINUTE);
    const { polls, counted: c } = counted(DEFAULT_IMPORT_POLL, HOUR, changes);
    expect(polls).toBe(37);
    expect(c).toBeLessThanOrEqual(25);
  });
});

describe('bounds a caller gives', () => {
  it('keeps a growth law the caller gives exactly (no proportional growth unless asked for)', () => {
    const fixed = resolvePollBounds(DEFAULT_POLL, { initialIntervalMs: 1_000, maxIntervalMs: 1_000, backoffFactor: 1 });
    expect(fixed.elapsedFraction).toBeUndefined();
    expect(pollScheduleMs(fixed, 5_000)).toEqual([1_000, 2_000, 3_000, 4_000, 5_000]);
    const grown = resolvePollBounds(DEFAULT_POLL, { initialIntervalMs: 2_000, backoffFactor: 1.2 });
    expect([1, 2, 3].map((n) => pollDelayMs(n, grown, 1e9))).toEqual([2_000, 2_400, 2_880]);
  });

  it('keeps the default growth when only the bounds are given, and the fraction when given', () => {
    // "First poll after a minute, at most 10 minutes apart": still grows (by 10 % of the wait) from 1 to 10 minutes.
    const moved = resolvePollBounds(DEFAULT_POLL, { initialIntervalMs: 60_000, maxIntervalMs: 600_000 });
    expect(moved.elapsedFraction).toBe(0.1);
    expect(pollScheduleMs(moved, 9 * MINUTE).map((t) => t / 1000)).toEqual([60, 120, 180, 240, 300, 360, 420, 480, 540]);
    expect(pollDelayMs(20, moved, 100 * MINUTE)).toBe(600_000);
    expect(pollScheduleMs(moved, 24 * HOUR).length).toBeLessThan(200);
    const capped = resolvePollBounds(DEFAULT_POLL, { maxIntervalMs: 60_000, timeoutMs: HOUR });
    expect(capped).toEqual({ ...HONEST_POLL_SHAPE, maxIntervalMs: 60_000, timeoutMs: HOUR });
    expect(pollDelayMs(30, capped, 2 * HOUR)).toBe(60_000);
    const own = resolvePollBounds(DEFAULT_POLL, { initialIntervalMs: 5_000, elapsedFraction: 0.05 });
    expect(pollDelayMs(2, own, 10 * MINUTE)).toBe(30_000);
  });
});

describe('event budgets at the defaults', () => {
  it('keeps a Google operation run (no continue-as-new) within its history budget over the whole 12-hour bound and an outage', () => {
    expect(operationPollProblems(undefined, undefined)).toEqual([]);
    expect(maxPollsPerRun(DEFAULT_OPERATION_POLL, DEFAULT_OUTAGE) * EVENTS_PER_POLL).toBeLessThan(MAX_EVENTS_PER_RUN);
  });

  it('lets a 24-hour GitHub wait fit in one run of the default event budget, so continue-as-new is only a safety net', () => {
    for (const bounds of [DEFAULT_POLL, DEFAULT_IMPORT_POLL]) {
      const polls = pollsToObserve(bounds.timeoutMs, bounds);
      expect(polls).toBeLessThan(200);
      expect(polls * EVENTS_PER_POLL).toBeLessThan(MAX_EVENTS_PER_RUN);
    }
  });
});

describe('conditional answers', () => {
  it('reads a poll result as fresh (with its ETag apart) or as not modified; a result without ETag fields is fresh', () => {
    expect(asConditional({ state: 'exporting', etag: 'W/"a"' })).toEqual({ notModified: false, value: { state: 'exporting' }, etag: 'W/"a"' });
    expect(asConditional<{ state: string }>({ notModified: true, etag: 'W/"a"' })).toEqual({ notModified: true, etag: 'W/"a"' });
    expect(asConditional({ state: 'pending' })).toEqual({ notModified: false, value: { state: 'pending' }, etag: undefined });
  });
});
