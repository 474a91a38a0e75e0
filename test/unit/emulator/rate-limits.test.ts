/**
 * The emulator's rate limits over real HTTP, on an injected clock: primary window, secondary rules
 * (points per endpoint, concurrency, content creation), 403 vs 429, with and without retry-after, and
 * the count of requests sent while the caller had already been told to wait.
 */
import { describe, expect, it } from 'vitest';
import { PRIMARY_LIMIT_MESSAGE, SECONDARY_LIMIT_MESSAGE } from '../../../packages/emulator/src/rate-limiter';
import { call, clockedEmulators, messageOf } from '../../helpers/emulator-http';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const em = clockedEmulators(START);
const start = em.start;

const LIST = '/orgs/octo-org/migrations';

describe('emulator primary rate limit', () => {
  it('counts down x-ratelimit-remaining, then answers 403 with remaining 0 until the window resets', async () => {
    const e = await start({ rateLimit: { limit: 3, windowMs: 10_000 } });
    const resetSeconds = String(Math.ceil((START + 10_000) / 1000));

    const ok = [];
    for (let i = 0; i < 3; i++) ok.push(await call(e.apiUrl, 'GET', LIST));
    expect(ok.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(ok.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0']);
    expect(ok.map((r) => r.headers['x-ratelimit-used'])).toEqual(['1', '2', '3']);
    expect(ok[0].headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-reset': resetSeconds, 'x-ratelimit-resource': 'core' });
    expect(e.stats.requestsWhileLimited).toBe(0);

    const limited = await call(e.apiUrl, 'GET', LIST);
    expect(limited.status).toBe(403);
    expect(messageOf(limited)).toBe(PRIMARY_LIMIT_MESSAGE);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-ratelimit-reset']).toBe(resetSeconds);
    expect(limited.headers['retry-after']).toBeUndefined();
    expect(e.stats.rateLimited.primary).toBe(1);
    // It arrived in the same instant as the answer that said remaining 0: it was already in flight.
    expect(e.stats.requestsInFlightWhenLimited).toBe(1);
    expect(e.stats.requestsWhileLimited).toBe(0);

    // Seconds later the caller has long known: this request ignored the limit.
    em.now = START + 9_999;
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(403);
    expect(e.stats.requestsWhileLimited).toBe(1);

    em.now = START + 10_000;
    const after = await call(e.apiUrl, 'GET', LIST);
    expect(after.status).toBe(200);
    expect(after.headers['x-ratelimit-remaining']).toBe('2');
    expect(e.stats.requestsWhileLimited).toBe(1);
  });

  it('counts a request as sent while limited only once the in-flight grace (250 ms by default) after the first notice has passed', async () => {
    const e = await start({ rateLimit: { limit: 1, windowMs: 10_000 } });
    await call(e.apiUrl, 'GET', LIST);
    em.now = START + 249;
    await call(e.apiUrl, 'GET', LIST);
    expect(e.stats).toMatchObject({ requestsInFlightWhenLimited: 1, requestsWhileLimited: 0 });
    // A later rejection does not restart the grace: the wait was announced at START.
    em.now = START + 250;
    await call(e.apiUrl, 'GET', LIST);
    expect(e.stats).toMatchObject({ requestsInFlightWhenLimited: 1, requestsWhileLimited: 1 });
  });

  it('reports per-window figures, the smallest gap between mutations and the peak of concurrent requests per caller', async () => {
    const e = await start({ rateLimit: { limit: 2, windowMs: 10_000 } });
    await call(e.apiUrl, 'GET', LIST);
    em.now = START + 700;
    await call(e.apiUrl, 'POST', LIST, { body: { repositories: ['alpha'] } });
    em.now = START + 1_000;
    await call(e.apiUrl, 'GET', LIST); // limited, and sent 300 ms after the POST's answer said remaining 0
    em.now = START + 2_000;
    await call(e.apiUrl, 'GET', LIST); // limited, sent while limited
    em.now = START + 2_400;
    await call(e.apiUrl, 'DELETE', `${LIST}/1/archive`); // limited, sent while limited, 1 700 ms after the POST
    em.now = START + 10_000;
    await call(e.apiUrl, 'GET', LIST);
    const figures = Object.values(e.rateLimiter.fleetStats())[0];
    expect(figures.windows).toEqual([
      { startMs: START, endMs: START + 10_000, used: 2, limitedAnswers: 3, whileLimited: 3 },
      { startMs: START + 10_000, endMs: START + 20_000, used: 1, limitedAnswers: 0, whileLimited: 0 },
    ]);
    expect(figures.minMutationGapMs).toBe(1_700);
    expect(figures.closestMutations).toEqual([`POST ${LIST}`, `DELETE ${LIST}/1/archive`]);
    expect(figures.peakConcurrent).toBe(1);
  });

  it('resets a window at the whole second its x-ratelimit-reset announces, not before', async () => {
    const e = await start({ rateLimit: { limit: 1, windowMs: 10_000 } });
    em.now = START + 300; // the window opens mid-second: it lasts until the next whole second after 10 s
    const first = await call(e.apiUrl, 'GET', LIST);
    expect(first.headers['x-ratelimit-reset']).toBe(String((START + 11_000) / 1000));
    em.now = START + 10_999;
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(403);
    em.now = START + 11_000;
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
  });

  it('answers the primary limit with 429 when configured so', async () => {
    const e = await start({ rateLimit: { limit: 1, windowMs: 10_000, primaryStatus: 429 } });
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
    const limited = await call(e.apiUrl, 'GET', LIST);
    expect(limited.status).toBe(429);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('keeps one window per token', async () => {
    const e = await start({ token: undefined, rateLimit: { limit: 1, windowMs: 10_000 } });
    expect((await call(e.apiUrl, 'GET', LIST, { token: 'one' })).status).toBe(200);
    expect((await call(e.apiUrl, 'GET', LIST, { token: 'one' })).status).toBe(403);
    const other = await call(e.apiUrl, 'GET', LIST, { token: 'two' });
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('does not count rejected requests as used', async () => {
    const e = await start({ rateLimit: { limit: 2, windowMs: 10_000 } });
    await call(e.apiUrl, 'GET', LIST);
    await call(e.apiUrl, 'GET', LIST);
    const limited = await call(e.apiUrl, 'GET', LIST);
    expect(limited.headers['x-ratelimit-used']).toBe('2');
  });
});

describe('emulator secondary rate limits', () => {
  it('limits points per endpoint with 403, the secondary message and, when configured to send it, retry-after until the window frees', async () => {
    const e = await start({ rateLimit: { secondary: { pointsPerWindow: 3, windowMs: 60_000, retryAfter: true } } });
    for (let i = 0; i < 3; i++) expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);

    em.now = START + 15_000;
    const limited = await call(e.apiUrl, 'GET', LIST);
    expect(limited.status).toBe(403);
    expect(messageOf(limited)).toBe(SECONDARY_LIMIT_MESSAGE);
    expect(limited.headers['retry-after']).toBe('45');
    // Not a primary limit: requests remain.
    expect(Number(limited.headers['x-ratelimit-remaining'])).toBeGreaterThan(0);
    expect(e.stats.rateLimited.secondary).toBe(1);
    expect(e.stats.requestsWhileLimited).toBe(0);

    em.now = START + 30_000;
    const ignored = await call(e.apiUrl, 'GET', LIST);
    expect(ignored.status).toBe(403);
    expect(ignored.headers['retry-after']).toBe('30');
    expect(e.stats.requestsWhileLimited).toBe(1);

    em.now = START + 60_000;
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
    expect(e.stats.requestsWhileLimited).toBe(1);
  });

  it('charges mutations 5 points and keeps a separate budget per endpoint', async () => {
    const e = await start({ rateLimit: { secondary: { pointsPerWindow: 5, windowMs: 60_000 } } });
    expect((await call(e.apiUrl, 'POST', LIST, { body: { repositories: ['alpha'] } })).status).toBe(201);
    expect((await call(e.apiUrl, 'POST', LIST, { body: { repositories: ['beta'] } })).status).toBe(403);
    // The list endpoint has its own 5 points.
    for (let i = 0; i < 5; i++) expect((await call(e.apiUrl, 'GET', LIST, {})).status).not.toBe(403);
  });

  it('answers without retry-after by default (GitHub often sends none), and then expects the caller to wait at least a minute', async () => {
    const e = await start({ rateLimit: { secondary: { pointsPerWindow: 1, windowMs: 5_000, status: 429 } } });
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
    const limited = await call(e.apiUrl, 'GET', LIST);
    expect(limited.status).toBe(429);
    expect(messageOf(limited)).toBe(SECONDARY_LIMIT_MESSAGE);
    expect(limited.headers['retry-after']).toBeUndefined();

    // The window frees after 5 s, but a caller told nothing must still wait a minute.
    em.now = START + 30_000;
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
    expect(e.stats.requestsWhileLimited).toBe(1);
    em.now = START + 60_000;
    await call(e.apiUrl, 'GET', LIST);
    expect(e.stats.requestsWhileLimited).toBe(1);
  });

  it('does not count a caller that waited the configured time without retry-after and finds the limit still in force', async () => {
    const e = await start({ rateLimit: { secondary: { pointsPerWindow: 1, windowMs: 10_000, retryAfter: false, waitWithoutRetryAfterMs: 2_000 } } });
    await call(e.apiUrl, 'GET', LIST);
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(403);
    em.now = START + 1_000;
    await call(e.apiUrl, 'GET', LIST);
    expect(e.stats.requestsWhileLimited).toBe(1);
    em.now = START + 2_000 + 1_000;
    // The endpoint's window is still spent, so it is rejected again, but the caller did what it was told.
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(403);
    expect(e.stats.requestsWhileLimited).toBe(1);
  });

  it('limits content-creating requests per minute and per hour', async () => {
    const e = await start({ rateLimit: { secondary: { contentPerMinute: 2, contentPerHour: 3, retryAfter: true } } });
    e.service('github').router.post('/test/content', () => ({ status: 201, body: {} }), { contentCreating: true });

    expect((await call(e.apiUrl, 'POST', '/test/content', { body: {} })).status).toBe(201);
    em.now = START + 1_000;
    expect((await call(e.apiUrl, 'POST', '/test/content', { body: {} })).status).toBe(201);
    const perMinute = await call(e.apiUrl, 'POST', '/test/content', { body: {} });
    expect(perMinute.status).toBe(403);
    expect(perMinute.headers['retry-after']).toBe('59');

    em.now = START + 60_000;
    expect((await call(e.apiUrl, 'POST', '/test/content', { body: {} })).status).toBe(201);
    em.now = START + 2 * 60_000;
    const perHour = await call(e.apiUrl, 'POST', '/test/content', { body: {} });
    expect(perHour.status).toBe(403);
    expect(perHour.headers['retry-after']).toBe(String(58 * 60));
  });

  it('limits concurrent requests per caller, counting a request that is in flight', async () => {
    const e = await start({
      rateLimit: { secondary: { maxConcurrent: 1 } },
      faults: [{ kind: 'slow', method: 'GET', path: '/orgs/:org/migrations', delayMs: 400, times: 1 }],
    });
    const slow = call(e.apiUrl, 'GET', LIST);
    await new Promise((r) => setTimeout(r, 100));
    const second = await call(e.apiUrl, 'GET', '/orgs/octo-org/migrations/79');
    expect(second.status).toBe(403);
    expect(messageOf(second)).toBe(SECONDARY_LIMIT_MESSAGE);
    expect((await slow).status).toBe(200);
    em.now = START + 2_000;
    // The slot is free again once the slow request finished.
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
  });
});
