/**
 * The HTTP core's observer against undici's MockAgent (no network): what the core reports for answers,
 * limited answers, gate refusals and network failures; the worker's observer turning those reports into
 * `longhaul_…` counts with templated routes (a recording meter stands in for the Temporal runtime's); and
 * the route templates themselves.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import type { MetricCounter, MetricGauge, MetricTags } from '@temporalio/common';
import { ApiClient } from '../../src/http/api-client';
import { createGithubClient, GITHUB_DEFAULT_HEADERS } from '../../src/http/github';
import type { ApiObservation } from '../../src/http/observer';
import { apiObserver } from '../../src/http/api-observer';
import type { LonghaulMetrics } from '../../src/telemetry/metrics';
import { routeTemplate } from '../../src/telemetry/route-template';

const API = 'https://ghe.example.test';
const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const json = { 'content-type': 'application/json' };

let agent: MockAgent;
let now: number;

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  now = START;
});
afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

/** Every add/set, as `name {labels} value`, in order. */
function recordingMetrics(): { metrics: LonghaulMetrics; records: string[] } {
  const records: string[] = [];
  const tags = (t?: MetricTags) => JSON.stringify(t ?? {});
  const counter = (name: string) => ({ add: (v: number, t?: MetricTags) => records.push(`${name} ${tags(t)} ${v}`) }) as unknown as MetricCounter;
  const gauge = (name: string) => ({ set: (v: number, t?: MetricTags) => records.push(`${name} ${tags(t)} ${v}`) }) as unknown as MetricGauge;
  return {
    records,
    metrics: {
      apiRequests: counter('requests'),
      limitedAnswers: counter('limited'),
      limitWaitMs: counter('waitMs'),
      gateClosed: gauge('gateClosed'),
      polls: counter('polls'),
      sendLookups: counter('sendLookups'),
      downloadBytes: counter('bytes'),
      eventsDelivered: counter('delivered'),
      sinkFailures: counter('sinkFailures'),
    },
  };
}

function client(observer: { observe(o: ApiObservation): void }): ApiClient {
  // A GHES base path: routes are reported below it.
  return new ApiClient({ baseUrl: `${API}/api/v3`, token: () => 't', defaultHeaders: { ...GITHUB_DEFAULT_HEADERS }, dispatcher: agent, clock: () => now, observer });
}

describe("the HTTP core's observer", () => {
  it('reports each answer with its path below the base URL, status and decision; a limited answer closes the gate and the next call is reported not sent', async () => {
    const seen: ApiObservation[] = [];
    const api = client({ observe: (o) => seen.push(o) });
    const pool = agent.get(API);
    pool.intercept({ path: '/api/v3/orgs/octo-org/migrations/4242', method: 'GET' }).reply(200, { id: 4242 }, { headers: json });
    pool.intercept({ path: '/api/v3/orgs/octo-org/migrations', method: 'POST' }).reply(403, { message: 'You have exceeded a secondary rate limit.' }, { headers: { ...json, 'retry-after': '30' } });

    await api.request({ method: 'GET', path: '/orgs/octo-org/migrations/4242' });
    await expect(api.request({ method: 'POST', path: '/orgs/octo-org/migrations', body: {} })).rejects.toMatchObject({ type: 'SecondaryRateLimitError' });
    now += 10_000;
    await expect(api.request({ method: 'GET', path: '/orgs/octo-org' })).rejects.toMatchObject({ type: 'PrimaryRateLimitError' });

    // Each request sent is admitted past the gate first; the refused one never is.
    expect(seen[0]).toEqual({ kind: 'admitted', method: 'GET', path: '/orgs/octo-org/migrations/4242' });
    expect(seen[1]).toEqual({ kind: 'answer', method: 'GET', path: '/orgs/octo-org/migrations/4242', status: 200, decision: { kind: 'success' }, attempt: 1, gateClosedUntilMs: undefined });
    expect(seen[2]).toEqual({ kind: 'admitted', method: 'POST', path: '/orgs/octo-org/migrations' });
    expect(seen[3]).toMatchObject({ kind: 'answer', method: 'POST', path: '/orgs/octo-org/migrations', status: 403, decision: { kind: 'retry', type: 'SecondaryRateLimitError', delayMs: 30_000 }, gateClosedUntilMs: START + 30_000 });
    expect(seen[4]).toEqual({ kind: 'not-sent', method: 'GET', path: '/orgs/octo-org', waitMs: 20_000 });
    expect(seen).toHaveLength(5);
  });

  it('checks the gate again once the token is there: a request that waited while another answer closed the gate is not sent', async () => {
    const seen: ApiObservation[] = [];
    let tokenCalls = 0;
    let handOver!: () => void;
    const held = new Promise<void>((resolve) => (handOver = resolve));
    // The first request's token takes a while (a GitHub App's exchange); the second's is there at once.
    const token = async () => (tokenCalls++ === 0 ? held.then(() => 't') : 't');
    const api = new ApiClient({ baseUrl: `${API}/api/v3`, token, defaultHeaders: { ...GITHUB_DEFAULT_HEADERS }, dispatcher: agent, clock: () => now, observer: { observe: (o) => seen.push(o) } });
    agent.get(API).intercept({ path: '/api/v3/orgs/octo-org/migrations', method: 'POST' }).reply(403, { message: 'You have exceeded a secondary rate limit.' }, { headers: { ...json, 'retry-after': '30' } });

    const waiting = api.request({ method: 'GET', path: '/orgs/octo-org' });
    await expect(api.request({ method: 'POST', path: '/orgs/octo-org/migrations', body: {} })).rejects.toMatchObject({ type: 'SecondaryRateLimitError' });
    handOver();
    await expect(waiting).rejects.toMatchObject({ type: 'PrimaryRateLimitError' });
    expect(seen.map((o) => `${o.kind} ${o.method} ${o.path}`)).toEqual(['admitted POST /orgs/octo-org/migrations', 'answer POST /orgs/octo-org/migrations', 'not-sent GET /orgs/octo-org']);
  });

  it('reports a network failure, and an observer that throws never changes the outcome of a call', async () => {
    const seen: ApiObservation[] = [];
    agent.get(API).intercept({ path: '/api/v3/orgs/octo-org', method: 'GET' }).replyWithError(new Error('connection reset'));
    await expect(client({ observe: (o) => seen.push(o) }).request({ method: 'GET', path: '/orgs/octo-org' })).rejects.toMatchObject({ type: 'NetworkError' });
    // MockAgent fails the request before it is written (as a refused connection does): nothing was admitted.
    expect(seen).toMatchObject([
      { kind: 'network-failure', method: 'GET', path: '/orgs/octo-org', decision: { kind: 'retry', type: 'NetworkError' } },
    ]);

    agent.get(API).intercept({ path: '/api/v3/orgs/octo-org', method: 'GET' }).reply(200, { login: 'octo-org' }, { headers: json });
    const broken = client({
      observe: () => {
        throw new Error('telemetry broke');
      },
    });
    await expect(broken.request({ method: 'GET', path: '/orgs/octo-org' })).resolves.toMatchObject({ status: 200, body: { login: 'octo-org' } });
  });

  it("the worker's observer counts requests by api, templated route and status, limited answers, waits and the gate", async () => {
    const { metrics, records } = recordingMetrics();
    const api = client(apiObserver('github', { metrics: () => metrics, clock: () => now }));
    const pool = agent.get(API);
    pool.intercept({ path: '/api/v3/orgs/octo-org/migrations/4242/repos/alpha/lock', method: 'DELETE' }).reply(204, '');
    pool.intercept({ path: '/api/v3/orgs/octo-org/migrations/4242', method: 'GET' }).reply(403, { message: 'You have exceeded a secondary rate limit.' }, { headers: { ...json, 'retry-after': '30' } });
    pool.intercept({ path: '/api/v3/repos/octo-org/missing/import', method: 'GET' }).reply(404, { message: 'Not Found' }, { headers: json });

    await api.request({ method: 'DELETE', path: '/orgs/octo-org/migrations/4242/repos/alpha/lock' });
    await expect(api.request({ method: 'GET', path: '/orgs/octo-org/migrations/4242' })).rejects.toThrow();
    now += 30_000;
    await expect(api.request({ method: 'GET', path: '/repos/octo-org/missing/import' })).rejects.toMatchObject({ type: 'NotFoundError' });

    expect(records).toEqual([
      'requests {"api":"github","route":"DELETE /orgs/{org}/migrations/{id}/repos/{repo}/lock","status":"204"} 1',
      'requests {"api":"github","route":"GET /orgs/{org}/migrations/{id}","status":"403"} 1',
      'gateClosed {"api":"github"} 1',
      'limited {"api":"github","kind":"secondary"} 1',
      'waitMs {"api":"github"} 30000',
      'requests {"api":"github","route":"GET /repos/{owner}/{repo}/import","status":"404"} 1',
    ]);
  });

  it("times the gate's end on the client's own clock (a time-skipping stack's runs years ahead of the wall clock)", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const yearsAhead = Date.now() + 50 * 365 * 86_400_000;
      const api = createGithubClient({ baseUrl: API, token: () => 't', dispatcher: agent, clock: () => yearsAhead });
      agent.get(API).intercept({ path: '/orgs/octo-org/migrations', method: 'POST' }).reply(403, { message: 'You have exceeded a secondary rate limit.' }, { headers: { ...json, 'retry-after': '30' } });
      await expect(api.request({ method: 'POST', path: '/orgs/octo-org/migrations', body: {} })).rejects.toMatchObject({ type: 'SecondaryRateLimitError' });
      // Node emits a warning on the next tick; on the wall clock the gate's end was 50 years away (the timer overflowed).
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('route templates (metric labels never carry names or ids)', () => {
  it.each([
    ['/orgs/octo-org/migrations', '/orgs/{org}/migrations'],
    ['/orgs/octo-org/migrations/4242/archive', '/orgs/{org}/migrations/{id}/archive'],
    ['/orgs/octo-org/migrations/4242/repos/alpha/lock', '/orgs/{org}/migrations/{id}/repos/{repo}/lock'],
    ['/repos/octo-org/alpha/import/authors/17', '/repos/{owner}/{repo}/import/authors/{id}'],
    ['/repos/octo-org/alpha/hooks/9/deliveries/123/attempts', '/repos/{owner}/{repo}/hooks/{id}/deliveries/{id}/attempts'],
    ['/networks/octo-org/alpha/events', '/networks/{owner}/{repo}/events'],
    ['/v2/projects/p-1/locations/global/keys/k-9', '/v2/projects/{project}/locations/{location}/keys/{key}'],
    ['/v2/operations/akmf.p7-123:cancel', '/v2/operations/{operation}:cancel'],
    ['/v2/projects/p-1/locations/global/buckets:createAsync', '/v2/projects/{project}/locations/{location}/buckets:createAsync'],
    ['/dns/v1/projects/p/managedZones/zone-a/changes/42', '/dns/v1/projects/{project}/managedZones/{zone}/changes/{change}'],
    ['/v2/entries:write', '/v2/entries:write'],
    ['/unknown/12345/x.y-z', '/unknown/{id}/{id}'],
  ])('%s → %s', (path, template) => {
    expect(routeTemplate(path)).toBe(template);
  });
});

describe('Google API names (the `api` label)', () => {
  it('comes from the host name, or from the emulator path, and is never free text', async () => {
    const { googleApiName } = await import('../../src/http/google');
    expect(googleApiName('https://dns.googleapis.com')).toBe('google-dns');
    expect(googleApiName('https://logging.googleapis.com/')).toBe('google-logging');
    expect(googleApiName('http://127.0.0.1:8787/google/apikeys')).toBe('google-apikeys');
    expect(googleApiName('http://10.0.0.7:9000')).toBe('google');
  });
});
