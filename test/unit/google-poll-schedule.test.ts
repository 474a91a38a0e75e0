/**
 * The Google operation poller's schedule: the delays the workflow waits, and what a 60-minute operation costs
 * in polls at the default bounds, against google-gax's default LRO backoff and a fixed 10-second poller.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_OPERATION_POLL } from '../../src/processes/google-operation/model';
import { pollDelayMs, pollScheduleMs, pollsToObserve } from '../../src/common/poll-schedule';

const HOUR = 60 * 60 * 1000;
/** google-gax's default for `google.longrunning.Operations`: 100 ms, × 1.3, capped at 60 s. */
const GAX_DEFAULT = { initialIntervalMs: 100, backoffFactor: 1.3, maxIntervalMs: 60_000, timeoutMs: Infinity };
const FIXED_10S = { initialIntervalMs: 10_000, backoffFactor: 1, maxIntervalMs: 10_000, timeoutMs: Infinity };

describe('pollDelayMs', () => {
  it('grows by the factor from the initial interval and never passes the cap', () => {
    const bounds = { initialIntervalMs: 1000, backoffFactor: 2, maxIntervalMs: 5000, timeoutMs: HOUR };
    expect([1, 2, 3, 4, 5].map((n) => pollDelayMs(n, bounds))).toEqual([1000, 2000, 4000, 5000, 5000]);
  });
});

describe('pollScheduleMs', () => {
  it('lists cumulative poll times up to the first poll at or after the horizon', () => {
    const bounds = { initialIntervalMs: 1000, backoffFactor: 2, maxIntervalMs: 5000, timeoutMs: HOUR };
    expect(pollScheduleMs(bounds, 12_000)).toEqual([1000, 3000, 7000, 12_000]);
    expect(pollScheduleMs(bounds, 12_001)).toEqual([1000, 3000, 7000, 12_000, 17_000]);
  });

  it('stops at the total time bound', () => {
    const bounds = { initialIntervalMs: 1000, backoffFactor: 1, maxIntervalMs: 1000, timeoutMs: 3500 };
    expect(pollScheduleMs(bounds, HOUR)).toEqual([1000, 2000, 3000]);
  });
});

describe('polls a 60-minute operation costs', () => {
  it('reproduces google-gax default (82 polls) and a fixed 10-second poller that also polls at once (361)', () => {
    expect(pollsToObserve(HOUR, GAX_DEFAULT)).toBe(82);
    expect(pollsToObserve(HOUR, FIXED_10S, { pollAtStart: true })).toBe(361);
  });

  it('costs fewer polls than either at the default bounds, while noticing the end at most one capped interval late', () => {
    const polls = pollsToObserve(HOUR, DEFAULT_OPERATION_POLL);
    expect(polls).toBe(37);
    expect(polls).toBeLessThan(pollsToObserve(HOUR, GAX_DEFAULT));
    const times = pollScheduleMs(DEFAULT_OPERATION_POLL, HOUR);
    expect(times.at(-1)! - HOUR).toBeLessThanOrEqual(DEFAULT_OPERATION_POLL.maxIntervalMs);
    expect(times.at(-2)!).toBeLessThan(HOUR);
  });

  it('keeps a default-bounded workflow within a few hundred polls over its whole 12-hour limit', () => {
    expect(pollScheduleMs(DEFAULT_OPERATION_POLL, Infinity).length).toBeLessThan(400);
  });
});
