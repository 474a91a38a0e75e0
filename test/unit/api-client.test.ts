/**
 * The HTTP core against undici's MockAgent: no network (`disableNetConnect()`), the dispatcher passed
 * explicitly, an injected clock, and every interceptor consumed (`assertNoPendingInterceptors()`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { ApiClient, parseLinkHeader } from '../../src/http/api-client';
import { MAX_REDIRECTS } from '../../src/http/redirects';
import { GITHUB_DEFAULT_HEADERS, parseGithubErrorBody } from '../../src/http/github';
import { FailureType, githubRetryPolicy } from '../../src/http/retry-policy';
import type { HttpFailureDetails } from '../../src/http/failures';
import { failureOf } from '../helpers/failures';

const API = 'https://api.example.test';
const STORAGE = 'https://objects.example.test';
const SECONDARY_MESSAGE = 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';
const START = Date.UTC(2026, 2, 1, 12, 0, 0);

let agent: MockAgent;
let now: number;
let token: string | undefined;

function client(baseUrl = API): ApiClient {
  return new ApiClient({
    baseUrl,
    token: () => token,
    defaultHeaders: { ...GITHUB_DEFAULT_HEADERS },
    parseErrorBody: parseGithubErrorBody,
    dispatcher: agent,
    clock: () => now,
  });
}

/** Headers of the calls that reached the MockAgent, in order. */
function sentHeaders(): Record<string, string>[] {
  return (agent.getCallHistory()?.calls() ?? []).map((c) => (c.headers ?? {}) as Record<string, string>);
}

function callCount(): number {
  return agent.getCallHistory()?.calls().length ?? 0;
}


const json = { 'content-type': 'application/json' };
const rateHeaders = (remaining: number, resetMs: number) => ({
  ...json,
  'x-ratelimit-limit': '5000',
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': String(Math.ceil(resetMs / 1000)),
  date: new Date(now).toUTCString(),
});

beforeEach(() => {
  agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  now = START;
  token = 'token-one';
});

afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

describe('ApiClient requests', () => {
  it('sends the GitHub Accept and API-version headers and a bearer token resolved at call time', async () => {
    const pool = agent.get(API);
    pool.intercept({ path: '/orgs/octo-org', method: 'GET' }).reply(200, { login: 'octo-org' }, { headers: json }).times(2);
    const api = client();

    const first = await api.request<{ login: string }>({ method: 'GET', path: '/orgs/octo-org' });
    token = 'token-two';
    await api.request({ method: 'GET', path: '/orgs/octo-org' });

    expect(first.body.login).toBe('octo-org');
    const [a, b] = sentHeaders();
    expect(a.accept).toBe('application/vnd.github+json');
    expect(a['x-github-api-version']).toBe('2022-11-28');
    expect(a.authorization).toBe('Bearer token-one');
    expect(b.authorization).toBe('Bearer token-two');
  });

  it('sends no Authorization header when the token provider has none', async () => {
    agent.get(API).intercept({ path: '/meta', method: 'GET' }).reply(200, {}, { headers: json });
    token = undefined;
    await client().request({ method: 'GET', path: '/meta' });
    expect(sentHeaders()[0].authorization).toBeUndefined();
  });

  it('keeps the base URL path prefix of GitHub Enterprise Server (/api/v3)', async () => {
    agent.get(API).intercept({ path: '/api/v3/orgs/octo-org/migrations?per_page=100', method: 'GET' }).reply(200, [], { headers: json });
    const api = client(`${API}/api/v3/`);
    const res = await api.request({ method: 'GET', path: '/orgs/octo-org/migrations', query: { per_page: 100 } });
    expect(res.url).toBe(`${API}/api/v3/orgs/octo-org/migrations?per_page=100`);
  });

  it('sends a JSON body with its content type', async () => {
    agent
      .get(API)
      .intercept({ path: '/orgs/octo-org/migrations', method: 'POST', body: JSON.stringify({ repositories: ['alpha'] }) })
      .reply(201, { id: 1 }, { headers: json });
    const res = await client().request<{ id: number }>({ method: 'POST', path: '/orgs/octo-org/migrations', body: { repositories: ['alpha'] } });
    expect(res.status).toBe(201);
    expect(res.body.id).toBe(1);
    expect(sentHeaders()[0]['content-type']).toBe('application/json');
  });

  it('refuses to send credentials to another origin named as an absolute path', async () => {
    const failure = await failureOf(client().request({ method: 'GET', path: `${STORAGE}/anything` }));
    expect(failure.nonRetryable).toBe(true);
    expect(failure.type).toBe(FailureType.ForeignOrigin);
    expect(callCount()).toBe(0);
  });

  it('answers If-None-Match with notModified on a 304 instead of failing', async () => {
    agent.get(API).intercept({ path: '/orgs/octo-org/events', method: 'GET', headers: { 'if-none-match': '"abc"' } }).reply(304, '', { headers: { etag: '"abc"' } });
    const res = await client().request({ method: 'GET', path: '/orgs/octo-org/events', ifNoneMatch: '"abc"' });
    expect(res.notModified).toBe(true);
    expect(res.status).toBe(304);
  });
});

describe('ApiClient redirects', () => {
  it('refuses to follow a redirect to another origin: nothing is sent there, and the call fails for good', async () => {
    agent.get(API).intercept({ path: '/orgs/octo-org/events?per_page=100', method: 'GET' }).reply(302, '', { headers: { location: `${STORAGE}/events?sig=x` } });
    const failure = await failureOf(client().request({ method: 'GET', path: '/orgs/octo-org/events', query: { per_page: 100 } }));
    expect(failure.type).toBe(FailureType.ForeignOrigin);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(STORAGE);
    expect(failure.message).not.toContain('sig=x');
    expect(callCount()).toBe(1);
  });

  it('fails a redirect loop for good after the core’s maximum of hops', async () => {
    agent.get(API).intercept({ path: '/orgs/octo-org', method: 'GET' }).reply(302, '', { headers: { location: '/orgs/octo-org' } }).times(MAX_REDIRECTS + 1);
    const failure = await failureOf(client().request({ method: 'GET', path: '/orgs/octo-org' }));
    expect(failure.type).toBe(FailureType.TooManyRedirects);
    expect(failure.nonRetryable).toBe(true);
    expect(callCount()).toBe(MAX_REDIRECTS + 1);
  });

  it('keeps Authorization on a same-origin redirect', async () => {
    const pool = agent.get(API);
    pool.intercept({ path: '/repos/octo-org/old-name', method: 'GET' }).reply(301, '', { headers: { location: '/repositories/2001' } });
    pool.intercept({ path: '/repositories/2001', method: 'GET' }).reply(200, { id: 2001 }, { headers: json });
    const res = await client().request<{ id: number }>({ method: 'GET', path: '/repos/octo-org/old-name' });
    expect(res.body.id).toBe(2001);
    expect(sentHeaders().map((h) => h.authorization)).toEqual(['Bearer token-one', 'Bearer token-one']);
  });

  it("returns the absolute Location without following it with redirect: 'manual'", async () => {
    agent.get(API).intercept({ path: '/orgs/octo-org/migrations/1/archive', method: 'GET' }).reply(302, '', { headers: { location: `${STORAGE}/a.tar.gz?sig=y` } });
    const res = await client().request({ method: 'GET', path: '/orgs/octo-org/migrations/1/archive', redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.location).toBe(`${STORAGE}/a.tar.gz?sig=y`);
    expect(callCount()).toBe(1);
  });
});

describe('ApiClient pagination', () => {
  it('follows Link rel="next" across pages and stops at the last one', async () => {
    const pool = agent.get(API);
    pool
      .intercept({ path: '/api/v3/orgs/octo-org/migrations?per_page=2', method: 'GET' })
      .reply(200, [{ id: 1 }, { id: 2 }], { headers: { ...json, link: `<${API}/api/v3/orgs/octo-org/migrations?per_page=2&page=2>; rel="next", <${API}/api/v3/orgs/octo-org/migrations?per_page=2&page=2>; rel="last"` } });
    pool
      .intercept({ path: '/api/v3/orgs/octo-org/migrations?per_page=2&page=2', method: 'GET' })
      .reply(200, [{ id: 3 }], { headers: { ...json, link: `<${API}/api/v3/orgs/octo-org/migrations?per_page=2&page=1>; rel="first"` } });
    const ids: number[] = [];
    for await (const page of client(`${API}/api/v3`).paginate<{ id: number }>('/orgs/octo-org/migrations', { per_page: 2 })) ids.push(...page.items.map((i) => i.id));
    expect(ids).toEqual([1, 2, 3]);
    expect(sentHeaders().every((h) => h.authorization === 'Bearer token-one')).toBe(true);
  });

  it('parses Link headers with several relations', () => {
    expect(parseLinkHeader('<https://a/x?page=2>; rel="next", <https://a/x?page=5>; rel="last"')).toEqual({ next: 'https://a/x?page=2', last: 'https://a/x?page=5' });
    expect(parseLinkHeader(undefined)).toEqual({});
  });
});

describe('ApiClient failures', () => {
  it('turns a 404 into a non-retryable NotFoundError carrying the API message and the call, not the token', async () => {
    agent.get(API).intercept({ path: '/orgs/nobody/migrations/9', method: 'GET' }).reply(404, { message: 'Not Found', documentation_url: 'https://docs' }, { headers: json });
    const failure = await failureOf(client().request({ method: 'GET', path: '/orgs/nobody/migrations/9' }));
    expect(failure.type).toBe(FailureType.NotFound);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('Not Found');
    expect(failure.message).toContain(`GET ${API}/orgs/nobody/migrations/9`);
    const details = failure.details?.[0] as HttpFailureDetails;
    expect(details).toMatchObject({ method: 'GET', url: `${API}/orgs/nobody/migrations/9`, status: 404 });
    expect(JSON.stringify({ m: failure.message, d: failure.details })).not.toContain('token-one');
  });

  it('includes the field errors of a 422 in the message', async () => {
    agent
      .get(API)
      .intercept({ path: '/orgs/octo-org/migrations', method: 'POST' })
      .reply(422, { message: 'Validation Failed', errors: [{ resource: 'Migration', field: 'repositories', code: 'invalid' }] }, { headers: json });
    const failure = await failureOf(client().request({ method: 'POST', path: '/orgs/octo-org/migrations', body: { repositories: ['nope'] } }));
    expect(failure.type).toBe(FailureType.ValidationFailed);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('Validation Failed: repositories invalid');
  });

  it('turns a secondary limit with retry-after into a retryable failure whose nextRetryDelay is the wait', async () => {
    agent.get(API).intercept({ path: '/orgs/octo-org/migrations', method: 'POST' }).reply(403, { message: SECONDARY_MESSAGE }, { headers: { ...json, 'retry-after': '30' } });
    const failure = await failureOf(client().request({ method: 'POST', path: '/orgs/octo-org/migrations', body: { repositories: ['a'] } }));
    expect(failure.type).toBe(FailureType.SecondaryRateLimit);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(30_000);
    expect((failure.details?.[0] as HttpFailureDetails).retryDelayMs).toBe(30_000);
  });

  it('turns a 503 into a retryable ServerError with exponential nextRetryDelay', async () => {
    agent.get(API).intercept({ path: '/x', method: 'GET' }).reply(503, 'upstream unavailable');
    const failure = await failureOf(new ApiClient({ baseUrl: API, token: () => token, dispatcher: agent, clock: () => now, attempt: () => 3 }).request({ method: 'GET', path: '/x' }));
    expect(failure.type).toBe(FailureType.Server);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(4_000);
    expect(failure.message).toContain('upstream unavailable');
  });

  it('turns a connection error into a retryable NetworkError', async () => {
    agent.get(API).intercept({ path: '/x', method: 'GET' }).replyWithError(new Error('socket hang up'));
    const failure = await failureOf(client().request({ method: 'GET', path: '/x' }));
    expect(failure.type).toBe(FailureType.Network);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('socket hang up');
  });

  it('gives up with a non-retryable failure once the policy attempts are spent', async () => {
    agent.get(API).intercept({ path: '/x', method: 'GET' }).reply(500, { message: 'Server Error' }, { headers: json });
    const api = new ApiClient({ baseUrl: API, token: () => token, dispatcher: agent, clock: () => now, attempt: () => githubRetryPolicy.maxTransientAttempts });
    const failure = await failureOf(api.request({ method: 'GET', path: '/x' }));
    expect(failure.type).toBe(FailureType.TransientExhausted);
    expect(failure.nonRetryable).toBe(true);
  });
});

describe('ApiClient rate-limit gate', () => {
  it('sends nothing after a primary limit until the injected clock passes the reset, then sends again', async () => {
    const pool = agent.get(API);
    const resetMs = START + 60_000;
    pool.intercept({ path: '/orgs/octo-org/migrations/1', method: 'GET' }).reply(403, { message: 'API rate limit exceeded' }, { headers: rateHeaders(0, resetMs) });
    const api = client();

    const limited = await failureOf(api.request({ method: 'GET', path: '/orgs/octo-org/migrations/1' }));
    expect(limited.type).toBe(FailureType.PrimaryRateLimit);
    expect(limited.nextRetryDelay).toBe(60_000 + githubRetryPolicy.resetMarginMs);
    expect(callCount()).toBe(1);

    // Another call (another activity sharing the client) fails fast, without a request.
    now = START + 20_000;
    const gated = await failureOf(api.request({ method: 'GET', path: '/orgs/octo-org/migrations/2' }));
    expect(gated.type).toBe(FailureType.PrimaryRateLimit);
    expect(gated.nonRetryable).toBe(false);
    expect(gated.nextRetryDelay).toBe(40_000 + githubRetryPolicy.resetMarginMs);
    expect(gated.message).toContain('not sent');
    expect(callCount()).toBe(1);

    now = resetMs + githubRetryPolicy.resetMarginMs;
    pool.intercept({ path: '/orgs/octo-org/migrations/2', method: 'GET' }).reply(200, { id: 2 }, { headers: rateHeaders(4999, now + 3_600_000) });
    const res = await api.request<{ id: number }>({ method: 'GET', path: '/orgs/octo-org/migrations/2' });
    expect(res.body.id).toBe(2);
    expect(callCount()).toBe(2);
  });

  it('closes the gate after a successful response that spent the window (remaining 0)', async () => {
    const pool = agent.get(API);
    const resetMs = START + 30_000;
    pool.intercept({ path: '/a', method: 'GET' }).reply(200, {}, { headers: rateHeaders(0, resetMs) });
    const api = client();
    await api.request({ method: 'GET', path: '/a' });

    const gated = await failureOf(api.request({ method: 'GET', path: '/b' }));
    expect(gated.type).toBe(FailureType.PrimaryRateLimit);
    expect(gated.nextRetryDelay).toBe(30_000 + githubRetryPolicy.resetMarginMs);
    expect(callCount()).toBe(1);

    now = resetMs + githubRetryPolicy.resetMarginMs;
    pool.intercept({ path: '/b', method: 'GET' }).reply(200, {}, { headers: rateHeaders(4999, now + 3_600_000) });
    await api.request({ method: 'GET', path: '/b' });
    expect(callCount()).toBe(2);
  });

  it('closes the gate for the retry-after of a secondary limit', async () => {
    const pool = agent.get(API);
    pool.intercept({ path: '/a', method: 'POST' }).reply(429, { message: SECONDARY_MESSAGE }, { headers: { ...json, 'retry-after': '5' } });
    const api = client();
    await failureOf(api.request({ method: 'POST', path: '/a', body: {} }));
    now = START + 4_999;
    expect((await failureOf(api.request({ method: 'GET', path: '/b' }))).nextRetryDelay).toBe(1);
    expect(callCount()).toBe(1);
    now = START + 5_000;
    pool.intercept({ path: '/b', method: 'GET' }).reply(200, {}, { headers: json });
    await api.request({ method: 'GET', path: '/b' });
    expect(callCount()).toBe(2);
  });

  it('does not close the gate for server errors or for a redirect it refuses', async () => {
    const pool = agent.get(API);
    pool.intercept({ path: '/a', method: 'GET' }).reply(503, 'busy', { headers: { 'retry-after': '60' } });
    pool.intercept({ path: '/redirect', method: 'GET' }).reply(302, '', { headers: { location: `${STORAGE}/obj`, 'retry-after': '600' } });
    pool.intercept({ path: '/b', method: 'GET' }).reply(200, {}, { headers: json });
    const api = client();
    await failureOf(api.request({ method: 'GET', path: '/a' }));
    await failureOf(api.request({ method: 'GET', path: '/redirect' }));
    await api.request({ method: 'GET', path: '/b' });
    expect(callCount()).toBe(3);
  });
});
