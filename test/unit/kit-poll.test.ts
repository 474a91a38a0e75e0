/** The kit's poll schedule, bounds validation, outage budget and poll decisions: pure, in milliseconds. */
import { describe, expect, it } from 'vitest';
import {
  afterFailure,
  afterPollAnswered,
  afterPollFailed,
  afterSuccess,
  DEFAULT_OUTAGE,
  NO_OUTAGE,
  nextPollAtMs,
  outageBackoffMs,
  outageBoundsProblems,
  outageSpentMs,
  pollBoundsProblems,
  pollDelayMs,
  pollScheduleMs,
  pollsToObserve,
  POLL_TOTAL_CEILING_MS,
  startPolling,
  type ResolvedPollBounds,
} from '../../src/workflows/kit';
import type { FailureFacts } from '../../src/common/activity-failures';

const BOUNDS: ResolvedPollBounds = { initialIntervalMs: 2_000, maxIntervalMs: 60_000, backoffFactor: 1.2, timeoutMs: 24 * 3600_000 };
const TRANSIENT: FailureFacts = { kind: 'transient', type: 'ServerError', message: '502 Bad Gateway (HTML)', notProcessed: false };
const PERMANENT: FailureFacts = { kind: 'permanent', type: 'NotFoundError', message: '404', notProcessed: false };
const HOUR = 3600_000;

describe('poll schedule', () => {
  it('grows the interval by the factor from the initial interval and caps it at the maximum', () => {
    expect([1, 2, 3].map((n) => pollDelayMs(n, BOUNDS))).toEqual([2_000, 2_400, 2_880]);
    expect(pollDelayMs(100, BOUNDS)).toBe(60_000);
    expect(pollDelayMs(5, { ...BOUNDS, backoffFactor: 1 })).toBe(2_000);
  });

  it('anchors each poll to the schedule so latency does not accumulate, and re-anchors when it fell behind', () => {
    // Poll 1 was due at 2 000 and answered at 2 300: poll 2 is still due at 2 000 + 2 400.
    expect(nextPollAtMs(2_000, 2, BOUNDS, 2_300)).toBe(4_400);
    // Fell behind by more than an interval (a slow poll): wait one interval from now, no burst of missed polls.
    expect(nextPollAtMs(2_000, 2, BOUNDS, 10_000)).toBe(12_400);
  });

  it('predicts the polls an operation costs, including the one that sees it finished', () => {
    const google: ResolvedPollBounds = { initialIntervalMs: 1_000, maxIntervalMs: 120_000, backoffFactor: 1.5, timeoutMs: 12 * HOUR };
    expect(pollsToObserve(60 * 60_000, google)).toBe(40);
    expect(pollsToObserve(60 * 60_000, { initialIntervalMs: 10_000, maxIntervalMs: 10_000, backoffFactor: 1, timeoutMs: HOUR }, { pollAtStart: true })).toBe(361);
    const times = pollScheduleMs({ ...BOUNDS, timeoutMs: 10_000 }, 60_000);
    expect(times).toEqual([2_000, 4_400, 7_280]);
  });
});

describe('poll bounds validation', () => {
  it('accepts valid bounds and absent ones', () => {
    expect(pollBoundsProblems(undefined)).toEqual([]);
    expect(pollBoundsProblems({ initialIntervalMs: 1_000, maxIntervalMs: 1_000, backoffFactor: 1, timeoutMs: 24 * HOUR })).toEqual([]);
  });

  it('refuses intervals under the 1 s floor, totals over the 7-day ceiling, factors under 1, and a max under the initial', () => {
    expect(pollBoundsProblems({ initialIntervalMs: 1 })).toEqual(['poll.initialIntervalMs must be between 1000 and 604800000 ms (got 1)']);
    expect(pollBoundsProblems({ timeoutMs: 1e15 })[0]).toContain('poll.timeoutMs must be between');
    expect(pollBoundsProblems({ backoffFactor: 0.5 })[0]).toContain('poll.backoffFactor must be between 1 and 10');
    expect(pollBoundsProblems({ initialIntervalMs: 5_000, maxIntervalMs: 2_000 })).toEqual(['poll.maxIntervalMs (2000) must be at least poll.initialIntervalMs (5000)']);
    expect(pollBoundsProblems({ maxIntervalMs: 1_500 }, 'poll', BOUNDS)).toEqual(['poll.maxIntervalMs (1500) must be at least poll.initialIntervalMs (2000)']);
    expect(pollBoundsProblems({ initialIntervalMs: '5' as unknown as number }, 'bounds')).toEqual(['bounds.initialIntervalMs must be a number ms']);
    expect(pollBoundsProblems({ timeoutMs: POLL_TOTAL_CEILING_MS + 1 })).toHaveLength(1);
  });
});

describe('outage budget', () => {
  it('backs off by doubling from the initial wait and caps at a few minutes', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => outageBackoffMs(n, DEFAULT_OUTAGE))).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000]);
    expect(outageBackoffMs(7, DEFAULT_OUTAGE)).toBe(180_000);
    expect(DEFAULT_OUTAGE.budgetMs).toBe(6 * HOUR);
  });

  it('keeps retrying transient failures until six hours of consecutive failure are spent, then gives up', () => {
    let state = NO_OUTAGE;
    let now = 1_000_000;
    let decision = afterFailure(state, TRANSIENT, now, DEFAULT_OUTAGE);
    let retries = 0;
    while (decision.action === 'retry') {
      retries++;
      state = decision.state;
      now += decision.delayMs;
      decision = afterFailure(state, TRANSIENT, now, DEFAULT_OUTAGE);
    }
    expect(decision.why).toBe('budget');
    expect(decision.message).toContain('6 h 0 min');
    expect(outageSpentMs(decision.state, now)).toBe(6 * HOUR);
    // 6 doubling waits up to the 3-minute cap, then 3-minute waits: about 120 calls in six hours.
    expect(retries).toBeGreaterThan(110);
    expect(retries).toBeLessThan(130);
  });

  it('refills the budget after one success, and counts failures in total', () => {
    const failed = afterFailure(NO_OUTAGE, TRANSIENT, 0, DEFAULT_OUTAGE).state;
    const healed = afterSuccess(failed);
    expect(healed).toEqual({ failuresInRow: 0, failures: 1 });
    expect(outageSpentMs(healed, 5 * HOUR)).toBe(0);
  });

  it('carries what was spent across continue-as-new as plain data', () => {
    const spent = { failuresInRow: 50, failingSinceMs: 0, failures: 50 };
    const carried = JSON.parse(JSON.stringify(spent));
    expect(afterFailure(carried, TRANSIENT, 6 * HOUR - 1, DEFAULT_OUTAGE).action).toBe('retry');
    expect(afterFailure(carried, TRANSIENT, 6 * HOUR, DEFAULT_OUTAGE).action).toBe('give-up');
  });

  it('gives up at once on a permanent answer, honours the wait of a rate limit, and keeps its own backoff after 5xx', () => {
    expect(afterFailure(NO_OUTAGE, PERMANENT, 0, DEFAULT_OUTAGE)).toMatchObject({ action: 'give-up', why: 'permanent' });
    const limited: FailureFacts = { kind: 'transient', type: 'SecondaryRateLimitError', message: '403', notProcessed: true, demandedDelayMs: 90_000 };
    expect(afterFailure(NO_OUTAGE, limited, 0, DEFAULT_OUTAGE)).toMatchObject({ action: 'retry', delayMs: 90_000 });
    // The HTTP core's next attempt delay after a 502 is its own backoff, not a demand: the kit's backoff rules.
    expect(afterFailure(NO_OUTAGE, { ...TRANSIENT, demandedDelayMs: 16_000 }, 0, DEFAULT_OUTAGE)).toMatchObject({ action: 'retry', delayMs: 5_000 });
  });

  it('validates its bounds', () => {
    expect(outageBoundsProblems({ budgetMs: 10 })[0]).toContain('outage.budgetMs');
    expect(outageBoundsProblems({ initialBackoffMs: 10_000, maxBackoffMs: 5_000 })).toEqual(['outage.maxBackoffMs (5000) must be at least outage.initialBackoffMs (10000)']);
    expect(outageBoundsProblems({ budgetMs: 6 * HOUR, maxBackoffMs: 5_000 })).toEqual([]);
  });
});

describe('poll decisions', () => {
  it('polls on the schedule while the remote process runs and ends at the total time bound', () => {
    const bounds = { ...BOUNDS, timeoutMs: 10_000 };
    let step = { action: 'wait' as const, state: startPolling(0, bounds) };
    const dueTimes: number[] = [];
    for (;;) {
      dueTimes.push(step.state.dueAtMs);
      const next = afterPollAnswered(step.state, bounds, step.state.dueAtMs + 100);
      if (next.action !== 'wait') {
        expect(next.action).toBe('timed-out');
        break;
      }
      step = next;
    }
    expect(dueTimes).toEqual([2_000, 4_400, 7_280]);
  });

  it('follows a failed poll by the same poll after the outage backoff, and resumes the schedule after an answer', () => {
    const start = startPolling(0, BOUNDS);
    const failed = afterPollFailed(start, TRANSIENT, BOUNDS, DEFAULT_OUTAGE, 2_000);
    expect(failed).toMatchObject({ action: 'wait', state: { n: 1, dueAtMs: 7_000, failedPolls: 1, polls: 0 } });
    const answered = afterPollAnswered(failed.state, BOUNDS, 7_050);
    expect(answered).toMatchObject({ action: 'wait', state: { n: 2, dueAtMs: 9_400, polls: 1, outage: { failuresInRow: 0, failures: 1 } } });
  });

  it('ends the wait on a permanent poll failure and when the outage budget is spent', () => {
    const start = startPolling(0, BOUNDS);
    expect(afterPollFailed(start, PERMANENT, BOUNDS, DEFAULT_OUTAGE, 2_000)).toMatchObject({ action: 'give-up', why: 'permanent' });
    const long = { ...start, outage: { failuresInRow: 100, failingSinceMs: 0, failures: 100 } };
    expect(afterPollFailed(long, TRANSIENT, BOUNDS, DEFAULT_OUTAGE, 6 * HOUR)).toMatchObject({ action: 'give-up', why: 'budget' });
  });

  it('lets the total time bound win over the outage budget', () => {
    const bounds = { ...BOUNDS, timeoutMs: 60_000 };
    const late = { ...startPolling(0, bounds), dueAtMs: 58_000 };
    expect(afterPollFailed(late, TRANSIENT, bounds, DEFAULT_OUTAGE, 58_000).action).toBe('timed-out');
  });
});
