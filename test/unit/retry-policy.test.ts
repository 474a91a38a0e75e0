/**
 * The retry decision is a pure function of a response, an injected clock and the attempt number, so every
 * rule of spec 001 ("Behavior on exceeding") is checked here without a network or a real clock.
 */
import { describe, expect, it } from 'vitest';
import {
  blockedUntilFromHeaders,
  decideNetworkRetry,
  decideRetry,
  FailureType,
  githubRetryPolicy,
  msUntilReset,
  parseRetryAfterMs,
  type ResponseFacts,
  type RetryDecision,
  type RetryPolicy,
} from '../../src/http/retry-policy';

/** A fixed "server now": 2026-03-01T12:00:00Z. */
const SERVER_NOW = Date.UTC(2026, 2, 1, 12, 0, 0);
const SECONDARY_MESSAGE = 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';

function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

function facts(status: number, headers: Record<string, string> = {}, message?: string): ResponseFacts {
  return { status, headers, message };
}

function retry(decision: RetryDecision): Extract<RetryDecision, { kind: 'retry' }> {
  expect(decision.kind).toBe('retry');
  return decision as Extract<RetryDecision, { kind: 'retry' }>;
}

function permanent(decision: RetryDecision): Extract<RetryDecision, { kind: 'permanent' }> {
  expect(decision.kind).toBe('permanent');
  return decision as Extract<RetryDecision, { kind: 'permanent' }>;
}

const at = (nowMs: number, attempt = 1) => ({ nowMs, attempt });

describe('parseRetryAfterMs', () => {
  it('reads delta-seconds, including fractions', () => {
    expect(parseRetryAfterMs('30', SERVER_NOW)).toBe(30_000);
    expect(parseRetryAfterMs(' 0 ', SERVER_NOW)).toBe(0);
    expect(parseRetryAfterMs('1.5', SERVER_NOW)).toBe(1_500);
  });

  it('reads an HTTP-date relative to the server Date header when one is given', () => {
    const localNow = SERVER_NOW + 10 * 60_000; // our clock runs 10 minutes ahead
    const value = httpDate(SERVER_NOW + 45_000);
    expect(parseRetryAfterMs(value, localNow, SERVER_NOW)).toBe(45_000);
  });

  it('reads an HTTP-date relative to the local clock without a server Date', () => {
    expect(parseRetryAfterMs(httpDate(SERVER_NOW + 20_000), SERVER_NOW)).toBe(20_000);
  });

  it('never returns a negative wait for a date in the past', () => {
    expect(parseRetryAfterMs(httpDate(SERVER_NOW - 60_000), SERVER_NOW)).toBe(0);
  });

  it('returns undefined for a missing or unparsable value', () => {
    expect(parseRetryAfterMs(undefined, SERVER_NOW)).toBeUndefined();
    expect(parseRetryAfterMs('soon', SERVER_NOW)).toBeUndefined();
  });
});

describe('msUntilReset', () => {
  const resetSeconds = (SERVER_NOW + 90_000) / 1000;

  it('measures the reset on the local clock when the response has no Date header', () => {
    expect(msUntilReset(facts(200, { 'x-ratelimit-reset': String(resetSeconds) }), SERVER_NOW)).toBe(90_000);
  });

  it('measures the reset on the server clock when our clock runs ahead', () => {
    const f = facts(200, { 'x-ratelimit-reset': String(resetSeconds), date: httpDate(SERVER_NOW) });
    // Naively (reset - local now) the wait would be 0 and we would hammer the API.
    expect(msUntilReset(f, SERVER_NOW + 5 * 60_000)).toBe(90_000);
  });

  it('measures the reset on the server clock when our clock runs behind', () => {
    const f = facts(200, { 'x-ratelimit-reset': String(resetSeconds), date: httpDate(SERVER_NOW) });
    // Naively the wait would be 1 h 1.5 min.
    expect(msUntilReset(f, SERVER_NOW - 60 * 60_000)).toBe(90_000);
  });

  it("places the server's now within Date's whole second by our clock when our clock falls in it", () => {
    const f = facts(200, { 'x-ratelimit-reset': String(resetSeconds), date: httpDate(SERVER_NOW) });
    expect(msUntilReset(f, SERVER_NOW + 600)).toBe(90_000 - 600);
    expect(msUntilReset(f, SERVER_NOW + 1_000)).toBe(90_000);
    expect(msUntilReset(f, SERVER_NOW - 1)).toBe(90_000);
  });

  it('is zero for a reset already passed and undefined without a numeric reset', () => {
    expect(msUntilReset(facts(200, { 'x-ratelimit-reset': String(SERVER_NOW / 1000 - 5) }), SERVER_NOW)).toBe(0);
    expect(msUntilReset(facts(200, {}), SERVER_NOW)).toBeUndefined();
    expect(msUntilReset(facts(200, { 'x-ratelimit-reset': 'tomorrow' }), SERVER_NOW)).toBeUndefined();
  });
});

describe('decideRetry: success and permanent client errors', () => {
  it('treats 2xx, 3xx and 304 as success', () => {
    for (const status of [200, 201, 204, 302, 304]) expect(decideRetry(facts(status), at(SERVER_NOW)).kind).toBe('success');
  });

  it.each([
    [400, FailureType.BadRequest],
    [401, FailureType.Authentication],
    [403, FailureType.Forbidden],
    [404, FailureType.NotFound],
    [410, FailureType.Gone],
    [422, FailureType.ValidationFailed],
    [451, FailureType.ClientError],
  ])('makes %i non-retryable (%s) and keeps the API message', (status, type) => {
    const d = permanent(decideRetry(facts(status, {}, `the API says ${status}`), at(SERVER_NOW)));
    expect(d.type).toBe(type);
    expect(d.status).toBe(status);
    expect(d.message).toBe(`the API says ${status}`);
  });

  it('makes a 403 with rate-limit headers that are not spent a plain permission error', () => {
    const d = permanent(decideRetry(facts(403, { 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': String(SERVER_NOW / 1000 + 60) }, 'Resource not accessible by integration'), at(SERVER_NOW)));
    expect(d.type).toBe(FailureType.Forbidden);
    expect(d.message).toBe('Resource not accessible by integration');
  });

  it('stays non-retryable however many attempts were made', () => {
    expect(permanent(decideRetry(facts(404, {}, 'Not Found'), at(SERVER_NOW, 50))).type).toBe(FailureType.NotFound);
  });

  it('falls back to the status line when the API gave no message', () => {
    expect(permanent(decideRetry(facts(422), at(SERVER_NOW))).message).toBe('HTTP 422');
  });

  it('makes an unlisted 4xx a non-retryable client error', () => {
    expect(permanent(decideRetry(facts(418, {}, "I'm a teapot"), at(SERVER_NOW))).type).toBe(FailureType.ClientError);
  });
});

describe('decideRetry: primary rate limit', () => {
  const resetIn = 120_000;
  const limited = (status: number, date = SERVER_NOW) =>
    facts(status, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String((SERVER_NOW + resetIn) / 1000), date: httpDate(date) }, 'API rate limit exceeded for user ID 1.');

  it.each([403, 429])('waits until x-ratelimit-reset (plus the margin) on a %i with remaining 0', (status) => {
    const d = retry(decideRetry(limited(status), at(SERVER_NOW)));
    expect(d.type).toBe(FailureType.PrimaryRateLimit);
    expect(d.delayMs).toBe(resetIn + githubRetryPolicy.resetMarginMs);
    expect(d.blockedUntilMs).toBe(SERVER_NOW + d.delayMs);
    expect(d.message).toBe('API rate limit exceeded for user ID 1.');
  });

  it('corrects for a local clock that runs ahead of the server', () => {
    const localNow = SERVER_NOW + 7 * 60_000;
    const d = retry(decideRetry(limited(403), at(localNow)));
    expect(d.delayMs).toBe(resetIn + githubRetryPolicy.resetMarginMs);
    // The block is expressed on the local clock, where the API is consulted next.
    expect(d.blockedUntilMs).toBe(localNow + resetIn + githubRetryPolicy.resetMarginMs);
  });

  it('corrects for a local clock that runs behind the server', () => {
    const localNow = SERVER_NOW - 30 * 60_000;
    const d = retry(decideRetry(limited(403), at(localNow)));
    expect(d.delayMs).toBe(resetIn + githubRetryPolicy.resetMarginMs);
    expect(d.blockedUntilMs).toBe(localNow + resetIn + githubRetryPolicy.resetMarginMs);
  });

  it('lets retry-after win over the reset header', () => {
    const f = limited(429);
    const d = retry(decideRetry({ ...f, headers: { ...f.headers, 'retry-after': '7' } }, at(SERVER_NOW)));
    expect(d.delayMs).toBe(7_000);
  });

  it('caps an absurd reset at the policy maximum', () => {
    const f = facts(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(SERVER_NOW / 1000 + 30 * 24 * 3600) });
    expect(retry(decideRetry(f, at(SERVER_NOW))).delayMs).toBe(githubRetryPolicy.maxHeaderDelayMs);
  });
});

describe('decideRetry: secondary rate limit', () => {
  const withRetryAfter = (status: number, seconds: string) =>
    facts(status, { 'retry-after': seconds, 'x-ratelimit-remaining': '4000' }, SECONDARY_MESSAGE);

  it.each([403, 429])('waits exactly retry-after on a %i secondary limit', (status) => {
    const d = retry(decideRetry(withRetryAfter(status, '42'), at(SERVER_NOW)));
    expect(d.type).toBe(FailureType.SecondaryRateLimit);
    expect(d.delayMs).toBe(42_000);
    expect(d.blockedUntilMs).toBe(SERVER_NOW + 42_000);
  });

  it('reads a retry-after given as an HTTP-date against the server Date', () => {
    const f = facts(403, { 'retry-after': httpDate(SERVER_NOW + 33_000), date: httpDate(SERVER_NOW) }, SECONDARY_MESSAGE);
    expect(retry(decideRetry(f, at(SERVER_NOW + 60 * 60_000))).delayMs).toBe(33_000);
  });

  it('recognises a 403 as a secondary limit from its message alone', () => {
    const d = retry(decideRetry(facts(403, { 'x-ratelimit-remaining': '4000' }, SECONDARY_MESSAGE), at(SERVER_NOW)));
    expect(d.type).toBe(FailureType.SecondaryRateLimit);
  });

  it('waits until the reset when a secondary limit comes with remaining 0 and no retry-after', () => {
    const f = facts(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String((SERVER_NOW + 300_000) / 1000), date: httpDate(SERVER_NOW) }, SECONDARY_MESSAGE);
    expect(retry(decideRetry(f, at(SERVER_NOW))).delayMs).toBe(300_000 + githubRetryPolicy.resetMarginMs);
  });

  it.each([403, 429])('waits at least 60 s on a %i secondary limit without retry-after, doubling with each attempt', (status) => {
    const f = facts(status, { 'x-ratelimit-remaining': '4000' }, SECONDARY_MESSAGE);
    const delays = [1, 2, 3, 4].map((attempt) => retry(decideRetry(f, at(SERVER_NOW, attempt))).delayMs);
    expect(delays).toEqual([60_000, 120_000, 240_000, 480_000]);
    for (const attempt of [1, 2, 3]) {
      expect(retry(decideRetry(f, at(SERVER_NOW, attempt))).type).toBe(FailureType.SecondaryRateLimit);
    }
  });

  it('treats a 429 without any header or message as a limit: at least 60 s, growing', () => {
    const first = retry(decideRetry(facts(429), at(SERVER_NOW, 1)));
    const third = retry(decideRetry(facts(429), at(SERVER_NOW, 3)));
    expect(first.delayMs).toBe(60_000);
    expect(third.delayMs).toBe(240_000);
    expect(first.blockedUntilMs).toBe(SERVER_NOW + 60_000);
    // Without remaining 0 it is not the primary limit.
    expect(first.type).toBe(FailureType.SecondaryRateLimit);
  });

  it('gives up, non-retryable, after the bounded number of rate-limited attempts', () => {
    const f = facts(403, {}, SECONDARY_MESSAGE);
    const last = githubRetryPolicy.maxRateLimitAttempts;
    expect(decideRetry(f, at(SERVER_NOW, last - 1)).kind).toBe('retry');
    const d = permanent(decideRetry(f, at(SERVER_NOW, last)));
    expect(d.type).toBe(FailureType.RateLimitExhausted);
    expect(d.message).toContain(SECONDARY_MESSAGE);
    expect(d.message).toContain(`${last} attempts`);
  });

  it('follows the policy data: a smaller minimum and attempt bound change the decision', () => {
    const policy: RetryPolicy = { ...githubRetryPolicy, rateLimitBackoff: { kind: 'exponential', where: 'next-retry', initialMs: 500, coefficient: 3, maxMs: Infinity }, maxRateLimitAttempts: 3 };
    const f = facts(429, {}, SECONDARY_MESSAGE);
    expect(retry(decideRetry(f, at(SERVER_NOW, 1), policy)).delayMs).toBe(500);
    expect(retry(decideRetry(f, at(SERVER_NOW, 2), policy)).delayMs).toBe(1_500);
    expect(permanent(decideRetry(f, at(SERVER_NOW, 3), policy)).type).toBe(FailureType.RateLimitExhausted);
  });
});

describe('decideRetry and decideNetworkRetry: transient faults', () => {
  it.each([500, 502, 503, 504])('backs off exponentially from 1 s on a %i', (status) => {
    const delays = [1, 2, 3].map((attempt) => retry(decideRetry(facts(status, {}, 'Server Error'), at(SERVER_NOW, attempt))).delayMs);
    expect(delays).toEqual([1_000, 2_000, 4_000]);
    const d = retry(decideRetry(facts(status), at(SERVER_NOW)));
    expect(d.type).toBe(FailureType.Server);
    // Server trouble does not close the gate for other calls.
    expect(d.blockedUntilMs).toBeUndefined();
  });

  it('caps the transient backoff at the policy maximum', () => {
    expect(retry(decideRetry(facts(502), at(SERVER_NOW, 9))).delayMs).toBe(githubRetryPolicy.transientBackoff.maxMs);
  });

  it('honours retry-after on a 503', () => {
    expect(retry(decideRetry(facts(503, { 'retry-after': '12' }), at(SERVER_NOW, 1))).delayMs).toBe(12_000);
  });

  it('gives up, non-retryable, after the bounded number of transient attempts', () => {
    const last = githubRetryPolicy.maxTransientAttempts;
    expect(decideRetry(facts(500), at(SERVER_NOW, last - 1)).kind).toBe('retry');
    const d = permanent(decideRetry(facts(500, {}, 'Server Error'), at(SERVER_NOW, last)));
    expect(d.type).toBe(FailureType.TransientExhausted);
    expect(d.message).toContain('Server Error');
  });

  it('backs off a network failure and gives up after the bounded attempts', () => {
    const first = retry(decideNetworkRetry('socket hang up', at(SERVER_NOW, 1)));
    expect(first.type).toBe(FailureType.Network);
    expect(first.delayMs).toBe(1_000);
    expect(first.message).toBe('socket hang up');
    expect(retry(decideNetworkRetry('socket hang up', at(SERVER_NOW, 4))).delayMs).toBe(8_000);
    const last = permanent(decideNetworkRetry('ECONNRESET', at(SERVER_NOW, githubRetryPolicy.maxTransientAttempts)));
    expect(last.type).toBe(FailureType.TransientExhausted);
    expect(last.message).toContain('ECONNRESET');
  });
});

describe('blockedUntilFromHeaders', () => {
  it('closes until the reset (on the server clock, plus the margin) when a successful response spent the window', () => {
    const localNow = SERVER_NOW + 3 * 60_000;
    const f = facts(200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String((SERVER_NOW + 50_000) / 1000), date: httpDate(SERVER_NOW) });
    expect(blockedUntilFromHeaders(f, localNow)).toBe(localNow + 50_000 + githubRetryPolicy.resetMarginMs);
  });

  it('leaves the API open while requests remain or without a reset', () => {
    expect(blockedUntilFromHeaders(facts(200, { 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': String(SERVER_NOW / 1000 + 50) }), SERVER_NOW)).toBeUndefined();
    expect(blockedUntilFromHeaders(facts(200, { 'x-ratelimit-remaining': '0' }), SERVER_NOW)).toBeUndefined();
    expect(blockedUntilFromHeaders(facts(200), SERVER_NOW)).toBeUndefined();
  });
});
