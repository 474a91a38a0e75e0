/**
 * Every backoff schedule, as the waits it gives attempt by attempt. The expected tables were produced by the
 * schedules as they were before `src/common/backoff.ts` (nine hand-written formulas, issue 28) and must never
 * change: the kit's waits are durable timers in histories of running work, the others are what operators and
 * the APIs' rules expect.
 */
import { describe, expect, it } from 'vitest';
import { msOptionalToNumber } from '@temporalio/common/lib/time';
import type { ActivityOptions } from '@temporalio/workflow';
import { DEFAULT_OUTAGE, outageBackoffMs, RECURRING_OUTAGE } from '../../src/common/outage';
import { lookupDelayMs, resendDelayMs } from '../../src/workflows/kit/send-once-decision';
import { HONEST_POLL_SHAPE, pollDelayMs, resolvePollBounds } from '../../src/common/poll-schedule';
import { decideNetworkRetry, decideRetry, githubRetryPolicy, type RetryPolicy } from '../../src/http/retry-policy';
import { googleRetryPolicy } from '../../src/http/google';
import { tokenlessRetryPolicy } from '../../src/http/tokenless';
import { FEED_SINK } from '../../src/processes/feed-poll/workflow';
import { CLEANUP, DOWNLOAD, FEED_CONTROL, POLL, QUIET_POLL, READ, SCHEDULE_HEALTH, SEND_ONCE } from '../../src/workflows/kit/activity-options';
import { BACKOFF, backoffMs, type Backoff } from '../../src/common/backoff';

const attempts = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** The retry policy's intervals in milliseconds (a preset may write '1 second' or 1000: the same proto Duration). */
function retryOf(options: ActivityOptions) {
  const r = options.retry ?? {};
  return {
    initialInterval: msOptionalToNumber(r.initialInterval),
    backoffCoefficient: r.backoffCoefficient,
    maximumInterval: msOptionalToNumber(r.maximumInterval),
    maximumAttempts: r.maximumAttempts,
    nonRetryableErrorTypes: r.nonRetryableErrorTypes,
  };
}

describe('the schedules keep the waits they had', () => {
  it('the outage backoff: 5 s (10 s for recurring work) doubling to 3 min, or the bounds an input gives', () => {
    expect(attempts(10).map((n) => outageBackoffMs(n, DEFAULT_OUTAGE))).toEqual([5000, 10000, 20000, 40000, 80000, 160000, 180000, 180000, 180000, 180000]);
    expect(attempts(10).map((n) => outageBackoffMs(n, RECURRING_OUTAGE))).toEqual([10000, 20000, 40000, 80000, 160000, 180000, 180000, 180000, 180000, 180000]);
    expect(attempts(10).map((n) => outageBackoffMs(n, { initialBackoffMs: 1_000, maxBackoffMs: 20_000 }))).toEqual([
      1000, 2000, 4000, 8000, 16000, 20000, 20000, 20000, 20000, 20000,
    ]);
    expect(attempts(10).map((n) => outageBackoffMs(n, { initialBackoffMs: 1_500, maxBackoffMs: 7_001 }))).toEqual([
      1500, 3000, 6000, 7001, 7001, 7001, 7001, 7001, 7001, 7001,
    ]);
  });

  it("sendOnce's lookups (1 s doubling to 15 s) and re-sends (1 s doubling to 60 s, or the wait demanded)", () => {
    expect(attempts(8).map((n) => lookupDelayMs(n))).toEqual([1000, 2000, 4000, 8000, 15000, 15000, 15000, 15000]);
    expect(attempts(10).map((n) => resendDelayMs(n))).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000, 60000]);
    expect(resendDelayMs(3, 4321)).toBe(4321);
  });

  it('the poll schedule: growth by the factor, the share of the wait, the cap, rounded as before', () => {
    const cancelWatch = resolvePollBounds({ ...HONEST_POLL_SHAPE, timeoutMs: 1e9 }, { initialIntervalMs: 1_000, backoffFactor: 1.5, maxIntervalMs: 10_000, timeoutMs: 300_000 });
    expect(attempts(10).map((n) => pollDelayMs(n, cancelWatch))).toEqual([1000, 1500, 2250, 3375, 5063, 7594, 10000, 10000, 10000, 10000]);
    const honest = { ...HONEST_POLL_SHAPE, timeoutMs: 1e9 };
    expect([0, 60_000, 299_999, 300_000, 456_789, 1_000_000, 7_000_000].map((elapsed, i) => pollDelayMs(i + 1, honest, elapsed))).toEqual([
      30000, 30000, 30000, 30000, 45678, 100000, 600000,
    ]);
    const odd = { initialIntervalMs: 1_234, backoffFactor: 1.1, maxIntervalMs: 99_999, timeoutMs: 1e9 };
    expect(attempts(30).map((n) => pollDelayMs(n, odd))).toEqual([
      1234, 1357, 1493, 1642, 1807, 1987, 2186, 2405, 2645, 2910, 3201, 3521, 3873, 4260, 4686, 5155, 5670, 6237, 6861, 7547, 8302, 9132, 10045, 11050,
      12155, 13370, 14707, 16178, 17796, 19575,
    ]);
    expect(attempts(30).map((n) => pollDelayMs(n, { ...odd, elapsedFraction: 0.1 }, n * 33_333))).toEqual([
      3333, 6666, 9999, 13333, 16666, 19999, 23333, 26666, 29999, 33333, 36666, 39999, 43332, 46666, 49999, 53332, 56666, 59999, 63332, 66666, 69999,
      73332, 76665, 79999, 83332, 86665, 89999, 93332, 96665, 99999,
    ]);
  });

  const limited = (policy: RetryPolicy) =>
    attempts(9).map((attempt) => {
      const d = decideRetry({ status: 429, headers: {} }, { nowMs: 1e12, attempt }, policy);
      return d.kind === 'retry' ? d.delayMs : d.kind;
    });
  const serverError = (policy: RetryPolicy) =>
    attempts(11).map((attempt) => {
      const d = decideRetry({ status: 502, headers: {} }, { nowMs: 1e12, attempt }, policy);
      return d.kind === 'retry' ? d.delayMs : d.kind;
    });
  const networkError = (policy: RetryPolicy) =>
    attempts(11).map((attempt) => {
      const d = decideNetworkRetry('reset', { nowMs: 1e12, attempt }, policy);
      return d.kind === 'retry' ? d.delayMs : d.kind;
    });

  it("the HTTP core's rate-limit backoff without headers: GitHub 60 s, Google 5 s, storage 1 s, doubling", () => {
    expect(limited(githubRetryPolicy)).toEqual([60000, 120000, 240000, 480000, 960000, 1920000, 3840000, 'permanent', 'permanent']);
    expect(limited(googleRetryPolicy)).toEqual([5000, 10000, 20000, 40000, 80000, 160000, 320000, 'permanent', 'permanent']);
    expect(limited(tokenlessRetryPolicy)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000]);
  });

  it("the HTTP core's transient backoff: 1 s doubling to 60 s (GitHub) or 30 s (Google, storage)", () => {
    const github = [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000, 'permanent', 'permanent'];
    const google = [1000, 2000, 4000, 8000, 16000, 30000, 30000, 'permanent', 'permanent', 'permanent', 'permanent'];
    const tokenless = [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000, 30000, 30000];
    expect(serverError(githubRetryPolicy)).toEqual(github);
    expect(networkError(githubRetryPolicy)).toEqual(github);
    expect(serverError(googleRetryPolicy)).toEqual(google);
    expect(networkError(googleRetryPolicy)).toEqual(google);
    expect(serverError(tokenlessRetryPolicy)).toEqual(tokenless);
    expect(networkError(tokenlessRetryPolicy)).toEqual(tokenless);
  });

  it("the activity presets' Temporal retry policies", () => {
    const read = { initialInterval: 1000, backoffCoefficient: 2, maximumInterval: 120_000, nonRetryableErrorTypes: undefined };
    const long = { initialInterval: 1000, backoffCoefficient: 2, maximumInterval: 60_000, nonRetryableErrorTypes: undefined };
    expect(retryOf(READ)).toEqual({ ...read, maximumAttempts: 12 });
    expect(retryOf(SEND_ONCE)).toEqual({ ...read, maximumAttempts: 1 });
    expect(retryOf(POLL)).toEqual({ ...read, maximumAttempts: 5 });
    expect(retryOf(QUIET_POLL)).toEqual({ ...long, maximumAttempts: undefined, nonRetryableErrorTypes: ['QuietPollEnded'] });
    expect(retryOf(CLEANUP)).toEqual({ ...long, maximumAttempts: 10 });
    expect(retryOf(DOWNLOAD)).toEqual({ ...long, maximumAttempts: 10 });
    expect([READ, SEND_ONCE, POLL, QUIET_POLL, CLEANUP].map((o) => msOptionalToNumber(o.startToCloseTimeout))).toEqual([60_000, 60_000, 60_000, 60_000, 60_000]);
    expect([msOptionalToNumber(DOWNLOAD.startToCloseTimeout), msOptionalToNumber(DOWNLOAD.heartbeatTimeout)]).toEqual([2 * 60 * 60_000, 30_000]);
  });

  it("the feed's and the Schedule's activity options, once written inline in their workflows", () => {
    // recurring-run.ts left the coefficient out: Temporal's default is 2, now written out.
    const feed = { initialInterval: 1000, backoffCoefficient: 2, maximumInterval: 30_000 };
    expect(retryOf(FEED_SINK)).toEqual({ ...feed, maximumAttempts: 8, nonRetryableErrorTypes: ['SinkSecretMissing', 'SinkRejected', 'FeedSpoolMissing'] });
    expect(retryOf(FEED_CONTROL)).toEqual({ ...feed, maximumAttempts: 5, nonRetryableErrorTypes: undefined });
    expect(retryOf(SCHEDULE_HEALTH)).toEqual({ initialInterval: 1000, backoffCoefficient: 2, maximumInterval: 10_000, maximumAttempts: 5, nonRetryableErrorTypes: undefined });
    expect([FEED_SINK, FEED_CONTROL, SCHEDULE_HEALTH].map((o) => msOptionalToNumber(o.startToCloseTimeout))).toEqual([120_000, 20 * 60_000, 60_000]);
    expect(msOptionalToNumber(FEED_CONTROL.heartbeatTimeout)).toBe(30_000);
  });
});

describe('one backoff function, every schedule a preset of it', () => {
  const waits = (schedule: Backoff, n: number) => attempts(n).map((a) => backoffMs(schedule, a));

  it('gives each preset the waits of the schedule it replaced', () => {
    expect(waits(BACKOFF.outage, 10)).toEqual([5000, 10000, 20000, 40000, 80000, 160000, 180000, 180000, 180000, 180000]);
    expect(waits(BACKOFF.recurringOutage, 6)).toEqual([10000, 20000, 40000, 80000, 160000, 180000]);
    expect(waits(BACKOFF.sendOnceLookup, 6)).toEqual([1000, 2000, 4000, 8000, 15000, 15000]);
    expect(waits(BACKOFF.sendOnceResend, 8)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
    expect(waits(BACKOFF.poll, 3)).toEqual([30000, 30000, 30000]);
    expect(waits(BACKOFF.bucketCancelWatch, 8)).toEqual([1000, 1500, 2250, 3375, 5063, 7594, 10000, 10000]);
    expect(waits(BACKOFF.githubSecondaryLimit, 7)).toEqual([60000, 120000, 240000, 480000, 960000, 1920000, 3840000]);
    expect(waits(BACKOFF.objectStoreRetry, 7)).toEqual([200, 400, 800, 1600, 3200, 5000, 5000]);
    expect(waits(BACKOFF.githubTransient, 9)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
    expect(waits(BACKOFF.googleRateLimit, 7)).toEqual([5000, 10000, 20000, 40000, 80000, 160000, 320000]);
    expect(waits(BACKOFF.googleTransient, 7)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(waits(BACKOFF.tokenlessRateLimit, 9)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000]);
    expect(waits(BACKOFF.tokenlessTransient, 7)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    // Temporal's own retry timer grows the same way from the presets' fields.
    expect(waits(BACKOFF.readRetry, 9)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 64000, 120000, 120000]);
    expect(waits(BACKOFF.longRetry, 8)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
    expect(waits(BACKOFF.feedRetry, 7)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(waits(BACKOFF.scheduleHealthRetry, 5)).toEqual([1000, 2000, 4000, 8000, 10000]);
    // A broken download's pause before resuming, stalls 1 to 4 (the fifth fails the transfer): was 200 × 2^(stalls − 1).
    expect(waits(BACKOFF.downloadStall, 4)).toEqual([200, 400, 800, 1600]);
  });

  it("gives the governor link's report retries 200 ms more each time, as 200 × (attempt + 1) did for attempts 0 to 4", () => {
    expect(waits(BACKOFF.governorReport, 5)).toEqual([200, 400, 600, 800, 1000]);
  });

  it("gives the governor link's retry 1 s plus up to 1 s of jitter, as 1000 + round(random × 1000) did", () => {
    expect([0, 0.25, 0.5, 0.9995, 0.99999].map((r) => backoffMs(BACKOFF.governorRetry, 1, () => r))).toEqual([1000, 1250, 1500, 2000, 2000]);
    expect(backoffMs(BACKOFF.governorRetry, 7, () => 0.5)).toBe(1500);
  });

  it('refuses jitter without a random source, and no workflow timer has jitter (replay must give the same waits)', () => {
    expect(() => backoffMs(BACKOFF.governorRetry, 1)).toThrow(/random source/);
    const presets: Backoff[] = Object.values(BACKOFF);
    for (const p of presets.filter((p) => p.where === 'timer' || p.where === 'retry-policy')) expect(p.jitterMs).toBeUndefined();
    // Temporal's retry policy only grows exponentially.
    for (const p of presets.filter((p) => p.where === 'retry-policy')) expect(p.kind).toBe('exponential');
    for (const p of presets.filter((p) => p.kind === 'exponential')) expect(p.coefficient).toBeGreaterThanOrEqual(1);
  });
});
