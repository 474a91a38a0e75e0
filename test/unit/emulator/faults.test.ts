/**
 * Fault injection over real HTTP: injected statuses, connection resets and slow answers, before the
 * request is processed or after it (the server acted but the caller cannot know), configured at start
 * or through the admin endpoint, and counted in `/_emulator/stats`.
 */
import { describe, expect, it } from 'vitest';
import type { Emulator } from '@longhaul/emulator';
import type { EmulatorStats } from '../../../packages/emulator/src/stats';
import { call, clockedEmulators, messageOf } from '../../helpers/emulator-http';
import { waitFor } from '../../helpers/wait';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const em = clockedEmulators(START);
const start = em.start;

const LIST = '/orgs/octo-org/migrations';
const create = (e: Emulator) => call(e.apiUrl, 'POST', LIST, { body: { repositories: ['alpha'] } });

async function errorOf(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err as Error & { code?: string };
}

describe('emulator faults', () => {
  it('answers an injected 503 with retry-after the given number of times, then serves normally', async () => {
    const e = await start({ faults: [{ kind: 'status', status: 503, retryAfterSeconds: 3, path: '/orgs/:org/migrations', method: 'GET', times: 2 }] });
    const first = await call(e.apiUrl, 'GET', LIST);
    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('3');
    expect(messageOf(first)).toBe('Service Unavailable');
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(503);
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
    expect(e.stats.faultsInjected).toBe(2);
  });

  it('fires on every Nth matching request and only for the matching method', async () => {
    const e = await start({ faults: [{ kind: 'status', status: 500, method: 'GET', path: LIST, every: 2 }] });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(e.apiUrl, 'GET', LIST)).status);
    expect(statuses).toEqual([200, 500, 200, 500]);
    expect((await create(e)).status).toBe(201);
  });

  it('redirects to the given Location (another origin), or to the request itself when none is given', async () => {
    const e = await start({
      faults: [
        { kind: 'redirect', path: '/orgs/:org/migrations', method: 'GET', location: 'http://elsewhere.example.test/events', times: 1 },
        { kind: 'redirect', status: 307, path: '/orgs/:org/migrations', method: 'GET', times: 1 },
      ],
    });
    const away = await call(e.apiUrl, 'GET', LIST);
    expect(away.status).toBe(302);
    expect(away.headers.location).toBe('http://elsewhere.example.test/events');
    const loop = await call(e.apiUrl, 'GET', `${LIST}?per_page=5`);
    expect(loop.status).toBe(307);
    expect(loop.headers.location).toBe(`${LIST}?per_page=5`);
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
  });

  it('resets the connection before processing: nothing is created', async () => {
    const e = await start({ faults: [{ kind: 'reset', method: 'POST', path: '/orgs/:org/migrations', times: 1 }] });
    const err = await errorOf(create(e));
    expect(err.code).toMatch(/UND_ERR_SOCKET|ECONNRESET/);
    expect(e.migrations.all()).toHaveLength(0);
    expect((await create(e)).status).toBe(201);
    expect(e.migrations.all()).toHaveLength(1);
  });

  it('resets the connection after processing: the migration exists although the caller got no answer', async () => {
    const e = await start({ faults: [{ kind: 'reset', method: 'POST', path: '/orgs/:org/migrations', times: 1, afterProcessing: true }] });
    await errorOf(create(e));
    expect(e.migrations.all()).toHaveLength(1);
    // It counted against the caller's primary limit like any processed request.
    const list = await call(e.apiUrl, 'GET', LIST);
    expect(list.headers['x-ratelimit-used']).toBe('2');
  });

  it('answers an injected status after processing: the server acted despite the 502', async () => {
    const e = await start({ faults: [{ kind: 'status', status: 502, method: 'POST', times: 1, afterProcessing: true }] });
    expect((await create(e)).status).toBe(502);
    expect(e.migrations.all()).toHaveLength(1);
  });

  it('holds a slow request so a client that gives up never gets the answer, while a patient one gets it', async () => {
    // The impatient caller gives up once the server holds its request (not after a fixed time, which a loaded
    // machine can pass before the request even arrives, and then the fault never counts).
    const e = await start({ faults: [{ kind: 'slow', method: 'GET', path: LIST, delayMs: 60_000, times: 1 }] });
    const caller = new AbortController();
    let answered = false;
    const outcome = errorOf(call(e.apiUrl, 'GET', LIST, { signal: caller.signal }).finally(() => (answered = true)));
    await waitFor('the server to hold the request', () => e.stats.faultsInjected, (n) => n === 1, 10_000, 5);
    expect(answered).toBe(false);
    caller.abort();
    expect((await outcome).name).toBe('AbortError');
    e.setFaults([{ kind: 'slow', method: 'GET', path: LIST, delayMs: 300, times: 1 }]);
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
    expect(e.stats.faultsInjected).toBe(2);
  });

  it('processes a slow-after-processing request before its caller times out', async () => {
    // The caller gives up once the server has acted (not after a fixed time, which a loaded machine can pass
    // before the request even arrives): it never sees the answer, yet the migration exists.
    const e = await start({ faults: [{ kind: 'slow', method: 'POST', delayMs: 5_000, times: 1, afterProcessing: true }] });
    const caller = new AbortController();
    let answered = false;
    const outcome = errorOf(call(e.apiUrl, 'POST', LIST, { body: { repositories: ['alpha'] }, signal: caller.signal }).finally(() => (answered = true)));
    await waitFor('the server to create the migration', () => e.migrations.all().length, (n) => n === 1, 10_000, 5);
    expect(answered).toBe(false);
    caller.abort();
    await outcome;
    expect(e.migrations.all()).toHaveLength(1);
  });

  it('replaces the fault rules through PUT /_emulator/faults and reports counters at /_emulator/stats', async () => {
    const e = await start();
    const put = await call(e.apiUrl, 'PUT', '/_emulator/faults', { token: null, body: [{ kind: 'status', status: 500, path: '/migrations', times: 1 }] });
    expect(put.status).toBe(200);
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(500);
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);

    const bad = await call(e.apiUrl, 'PUT', '/_emulator/faults', { token: null, body: { kind: 'reset' } });
    expect(bad.status).toBe(422);

    const stats = (await call(e.apiUrl, 'GET', '/_emulator/stats', { token: null })).json as EmulatorStats;
    expect(stats.requests).toBe(2);
    expect(stats.byRoute['GET /orgs/:org/migrations']).toBe(2);
    expect(stats.byStatus).toMatchObject({ '200': 1, '500': 1 });
    expect(stats.faultsInjected).toBe(1);
    expect(stats.requestsWhileLimited).toBe(0);
  });

  it('answers a 502 with an HTML error page (as a load balancer does) and only inside its time window', async () => {
    const e = await start({ faults: [{ kind: 'status', status: 502, html: true, path: LIST, activeFromMs: START + 1_000, activeUntilMs: START + 6_000 }] });
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
    em.now = START + 1_000;
    const down = await call(e.apiUrl, 'GET', LIST);
    expect(down.status).toBe(502);
    expect(down.headers['content-type']).toMatch(/^text\/html/);
    expect(down.text).toContain('<h1>502 Bad Gateway</h1>');
    em.now = START + 5_999;
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(502);
    em.now = START + 6_000;
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
    expect(e.stats.faultsInjected).toBe(2);
  });

  it('reads a synced clock afresh before each request: a window on the time of another server opens and closes as that time jumps', async () => {
    // Another server's time (a time-skipping test server's), jumping while no request is in flight.
    let serverMs = START;
    let syncs = 0;
    const e = await start({
      clock: () => em.now,
      clockSync: async () => {
        syncs++;
        em.now = serverMs;
      },
      faults: [{ kind: 'status', status: 502, path: LIST, activeFromMs: START + 60_000, activeUntilMs: START + 360_000 }],
    });
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(200);
    serverMs = START + 60_000;
    expect((await call(e.apiUrl, 'GET', LIST)).status).toBe(502);
    serverMs = START + 360_000;
    const after = await call(e.apiUrl, 'GET', LIST);
    expect(after.status).toBe(200);
    expect(Date.parse(after.headers.date)).toBe(START + 360_000);
    expect(syncs).toBe(3);
  });

  describe('malformed answers', () => {
    it('truncated JSON after processing: the migration exists and is locked, the 201 body does not parse', async () => {
      const e = await start({ faults: [{ kind: 'truncated-json', method: 'POST', path: '/orgs/:org/migrations', afterProcessing: true, times: 1 }] });
      const res = await call(e.apiUrl, 'POST', LIST, { body: { repositories: ['alpha'], lock_repositories: true } });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toContain('application/json');
      expect(() => JSON.parse(res.text)).toThrow();
      expect(e.migrations.all()).toHaveLength(1);
      expect((await create(e)).status).toBe(201);
    });

    it('a missing field after processing removes exactly that field from the real answer', async () => {
      const e = await start({ faults: [{ kind: 'missing-field', field: 'id', method: 'POST', path: '/orgs/:org/migrations', afterProcessing: true, times: 1 }] });
      const res = await create(e);
      expect(res.status).toBe(201);
      const body = res.json as Record<string, unknown>;
      expect(body).not.toHaveProperty('id');
      expect(body.guid).toBe(e.migrations.all()[0].guid);
    });

    it('a field value after processing replaces exactly that field of the real answer', async () => {
      const state = '"\\漢🚀\u0001'.repeat(3);
      const e = await start({ faults: [{ kind: 'field-value', field: 'state', value: state, method: 'POST', path: '/orgs/:org/migrations', afterProcessing: true, times: 1 }] });
      const res = await create(e);
      expect(res.status).toBe(201);
      const body = res.json as Record<string, unknown>;
      expect(body.state).toBe(state);
      expect(body.id).toBe(e.migrations.all()[0].id);
      expect(((await create(e)).json as Record<string, unknown>).state).toBe('pending');
    });

    it('an HTML page with 200 before processing: nothing is created', async () => {
      const e = await start({ faults: [{ kind: 'html-page', method: 'POST', path: '/orgs/:org/migrations', times: 1 }] });
      const res = await create(e);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.text).toMatch(/^<!DOCTYPE html>/);
      expect(e.migrations.all()).toHaveLength(0);
    });

    it('a wrong content type keeps the JSON body but labels it otherwise', async () => {
      const e = await start({ faults: [{ kind: 'content-type', contentType: 'text/html', method: 'GET', path: LIST, afterProcessing: true, times: 1 }] });
      await create(e);
      const res = await call(e.apiUrl, 'GET', LIST);
      expect(res.headers['content-type']).toBe('text/html');
      expect(Array.isArray(res.json)).toBe(true);
      expect(e.requestLog.map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${LIST}`, `GET ${LIST}`]);
    });
  });
});
