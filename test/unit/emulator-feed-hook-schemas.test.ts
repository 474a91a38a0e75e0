/**
 * Every body the emulated activity feeds and webhook routes answer, checked against GitHub's official OpenAPI
 * description (`@octokit/openapi`) for that route and status: each feed kind (200, 304, 404), each hook route
 * for organization and repository hooks (200/201/202/204 and the documented 400/404/422 bodies). The test prints
 * a routes × statuses table and names every exception with its reason.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { FEED_TEMPLATES } from '../../src/processes/feed-poll/model';
import { EVENT_TYPES } from '../../packages/emulator/src/github/feed-event-payloads';
import { call, clockedEmulators, type RawResponse } from '../helpers/emulator-http';
import { checkGithubAnswer, checkGithubSchema, documentsStatus, findTemplate } from '../helpers/github-openapi';
import { PROMISED_FEEDS_HOOKS } from '../helpers/github-route-coverage';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { checkEventPage, PAYLOAD_ONE_OF_EXCEPTION } from '../helpers/github-event-schemas';

const START = Date.UTC(2026, 3, 3, 9, 0, 0);
const em = clockedEmulators(START);

/** Route template → status → how its body fared ('ok' or the named exception). */
const table = new Map<string, Map<string, string>>();
const exceptions = new Map<string, string>();

function note(method: string, path: string, status: number, outcome: string) {
  const template = findTemplate(method, path) ?? path;
  const key = `${method} ${template}`;
  if (!table.has(key)) table.set(key, new Map());
  const row = table.get(key)!;
  // A status the description does not list for the route carries a `*`, as in PROMISED_FEEDS_HOOKS.
  const label = documentsStatus(method, template, status) ? String(status) : `${status}*`;
  if (row.get(label) === undefined || row.get(label) === 'ok') row.set(label, outcome);
}

type Event = { id: string; type: string; payload: Record<string, unknown> };

function expectEventPage(path: string, res: RawResponse) {
  const { problems, usedException } = checkEventPage(path, res.json as Event[]);
  expect(problems, path).toEqual([]);
  note('GET', path, 200, usedException ? 'exception: payload oneOf' : 'ok');
  if (usedException) exceptions.set('payload oneOf', PAYLOAD_ONE_OF_EXCEPTION);
}

/** Checks a non-event answer; `exception` names why a status the description does not document is still right. */
interface Exception {
  /** The description's schema the body is checked against instead, or null for an answer without a body. */
  schema: string | null;
  /** `name: why`. */
  reason: string;
}

function expectValid(method: string, path: string, res: RawResponse, exception?: Exception) {
  const body = res.text === '' ? undefined : res.json;
  if (exception) {
    if (exception.schema === null) expect(res.text, `${method} ${path} ${res.status}`).toBe('');
    else expect(checkGithubSchema(exception.schema, body).errors, `${method} ${path} ${res.status}`).toEqual([]);
    const [name, ...why] = exception.reason.split(': ');
    note(method, path, res.status, `exception: ${name}`);
    exceptions.set(name, why.join(': '));
    return;
  }
  const r = checkGithubAnswer(method, path, res.status, body);
  expect(r.errors, `${method} ${path} ${res.status}`).toEqual([]);
  note(method, path, res.status, 'ok');
}

const UNDOCUMENTED_304: Exception = {
  schema: null,
  reason: '304 not in the description for this feed: the description and the seed list it for /events and /networks only, but GitHub answers If-None-Match on every feed (and longhaul polls every feed with it); checked as bodiless',
};

const UNDOCUMENTED_404: Exception = {
  schema: 'basic-error',
  reason: '404 not in the description: the seed (spec 001) lists 404 for unknown names and ids (as GitHub answers); checked as basic-error',
};

describe("the emulator's feeds and hooks against GitHub's official description", () => {
  it('serves every feed kind schema-exact: 200 with events of every produced type, 304, 404', async () => {
    const e = await em.start({ feeds: { initialEvents: 0, eventsPerMinute: 0 } });
    const params: Record<string, string> = { owner: 'octo-org', repo: 'alpha', org: 'octo-org', username: 'octocat' };
    const types = new Set<string>();
    for (const { template } of FEED_TEMPLATES) {
      const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => params[name]);
      e.feeds.burst(path, 60);
      const res = await call(e.apiUrl, 'GET', `${path}?per_page=100`);
      expect(res.status, path).toBe(200);
      expectEventPage(path, res);
      for (const ev of res.json as Event[]) types.add(ev.type);
      const again = await call(e.apiUrl, 'GET', `${path}?per_page=100`, { headers: { 'if-none-match': res.headers.etag } });
      expect(again.status, path).toBe(304);
      expectValid('GET', path, again, /^\/(events|networks\/)/.test(path) ? undefined : UNDOCUMENTED_304);
    }
    expect([...types].sort()).toEqual([...EVENT_TYPES].sort());
    const network = await call(e.apiUrl, 'GET', '/networks/octo-org/nope/events');
    expect(network.status).toBe(404);
    expectValid('GET', '/networks/octo-org/nope/events', network);
    for (const path of ['/repos/octo-org/nope/events', '/orgs/no-such-org/events', '/users/ghost/events']) {
      const res = await call(e.apiUrl, 'GET', path);
      expect(res.status, path).toBe(404);
      expectValid('GET', path, res, UNDOCUMENTED_404);
    }
  });

  it('answers a spent primary limit on the feeds that document it with the documented 403 body', async () => {
    const e = await em.start({ rateLimit: { limit: 2 }, feeds: { initialEvents: 1, eventsPerMinute: 0 } });
    for (const path of ['/events', '/networks/octo-org/alpha/events']) {
      expect((await call(e.apiUrl, 'GET', path)).status).toBe(200);
    }
    for (const path of ['/events', '/networks/octo-org/alpha/events']) {
      const limited = await call(e.apiUrl, 'GET', path);
      expect(limited.status, path).toBe(403);
      expectValid('GET', path, limited);
    }
  });

  it('answers a renamed repository’s network feed 301 to the feed under its current name, and an outage of the public feed 503', async () => {
    const e = await em.start({ feeds: { initialEvents: 3, eventsPerMinute: 0 } });
    const moved = await call(e.apiUrl, 'GET', '/networks/octo-org/alpha-legacy/events?per_page=2');
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toBe(`${e.apiUrl}/networks/octo-org/alpha/events?per_page=2`);
    expectValid('GET', '/networks/octo-org/alpha-legacy/events', moved);
    const followed = await call(e.apiUrl, 'GET', new URL(moved.headers.location).pathname + new URL(moved.headers.location).search);
    expect(followed.status).toBe(200);
    expectEventPage('/networks/octo-org/alpha/events', followed);

    // GitHub documents 503 for the public feed when its service is degraded: an outage, as a fault rule makes one.
    e.setFaults([{ method: 'GET', path: '/events', kind: 'status', status: 503, times: 1 }]);
    const down = await call(e.apiUrl, 'GET', '/events');
    expect(down.status).toBe(503);
    expectValid('GET', '/events', down);
    expect((await call(e.apiUrl, 'GET', '/events')).status).toBe(200);
  });

  it('refuses a webhook on a blocked repository with GitHub’s 403', async () => {
    const fixture = defaultGithubFixture();
    fixture.repositories.push({ id: 2066, name: 'taken-down', owner: 'octo-org', private: false, workflowsEnabled: false, blocked: { reason: 'tos', createdAt: '2025-06-08T01:02:15Z' } });
    const e = await em.start({ fixture });
    const refused = await call(e.apiUrl, 'POST', '/repos/octo-org/taken-down/hooks', { body: { config: { url: 'https://example.test/h' } } });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ message: 'Repository access blocked', block: { reason: 'tos' } });
    expectValid('POST', '/repos/octo-org/taken-down/hooks', refused);
  });

  it('keeps events schema-exact at every size, up to the 60 KB tail and a fixed large size', async () => {
    for (const eventBytes of ['realistic', 40_000] as const) {
      const e = await em.start({ feeds: { initialEvents: 0, eventsPerMinute: 0, eventBytes } });
      e.feeds.burst('/orgs/octo-org/events', 300);
      for (const page of [1, 2, 3]) {
        const path = '/orgs/octo-org/events';
        const res = await call(e.apiUrl, 'GET', `${path}?per_page=100&page=${page}`);
        expectEventPage(path, res);
      }
      await e.close();
    }
  });

  for (const scope of ['org', 'repo'] as const) {
    it(`answers every ${scope} hook route schema-exact, with its documented error bodies`, async () => {
      const e = await em.start({ hooks: { spam: { perMinute: 6, perHour: 500, minuteMs: 60_000, hourMs: 3_600_000 } } });
      const base = scope === 'org' ? '/orgs/octo-org/hooks' : '/repos/octo-org/alpha/hooks';
      const missing = scope === 'org' ? '/orgs/no-such-org/hooks' : '/repos/octo-org/nope/hooks';
      const check = async (method: string, path: string, status: number, body?: unknown, exception?: Exception) => {
        const res = await call(e.apiUrl, method, path, body === undefined ? {} : { body });
        expect(res.status, `${method} ${path}`).toBe(status);
        expectValid(method, path, res, exception);
        return res;
      };
      const created = await check('POST', base, 201, { name: 'web', config: { url: 'https://example.test/h', content_type: 'json', secret: 'k' }, events: ['issues', 'push'] });
      const id = (created.json as { id: number }).id;
      await check('POST', base, 422, { name: 'not-web', config: { url: 'https://example.test/h' } });
      await check('POST', base, 422, { name: 'web', config: { url: 'https://example.test/h', colour: 'red' } });
      await check('POST', missing, 404, { name: 'web', config: { url: 'https://example.test/h' } });
      await check('GET', base, 200);
      await check('GET', missing, 404);
      await check('GET', `${base}/${id}`, 200);
      await check('GET', `${base}/999`, 404);
      await check('PATCH', `${base}/${id}`, 200, { active: false });
      await check('PATCH', `${base}/${id}`, 422, { config: { url: 'ftp://nope' } });
      await check('PATCH', `${base}/999`, 404, { active: true });
      await check('GET', `${base}/${id}/config`, 200);
      await check('PATCH', `${base}/${id}/config`, 200, { content_type: 'form' });
      await check('POST', `${base}/${id}/pings`, 204);
      await check('POST', `${base}/999/pings`, 404);
      if (scope === 'repo') {
        await check('POST', `${base}/${id}/tests`, 204);
        await check('POST', `${base}/999/tests`, 404);
      }
      for (let i = 0; i < 4; i++) e.hooks.addDelivery(id, { at: START - 1000 * (4 - i), statusCode: i === 1 ? 502 : 200 });
      const list = await check('GET', `${base}/${id}/deliveries?per_page=2`, 200);
      await check('GET', `${base}/${id}/deliveries?cursor=garbage`, 400);
      await check('GET', `${base}/${id}/deliveries?per_page=101`, 422);
      const [first] = list.json as { id: number }[];
      await check('GET', `${base}/${id}/deliveries/${first.id}`, 200);
      await check('GET', `${base}/${id}/deliveries/999`, 404, undefined, UNDOCUMENTED_404);
      await check('POST', `${base}/${id}/deliveries/${first.id}/attempts`, 202);
      // The content-creation limit (6 a minute here: create, two pings/tests, one attempt so far) answers 422 "spammed".
      let spam: RawResponse | undefined;
      for (let i = 0; i < 6 && spam?.status !== 422; i++) spam = await call(e.apiUrl, 'POST', `${base}/${id}/deliveries/${first.id}/attempts`);
      expect(spam?.status).toBe(422);
      expectValid('POST', `${base}/${id}/deliveries/${first.id}/attempts`, spam!);
      await check('DELETE', `${base}/${id}`, 204);
      await check('DELETE', `${base}/${id}`, 404);
    });
  }

  it('checked every promised route and status (github-route-coverage.ts)', () => {
    const covered = Object.fromEntries([...table].map(([route, row]) => [route, [...row.keys()].sort()]));
    expect(covered).toEqual(PROMISED_FEEDS_HOOKS);
  });

  afterAll(() => {
    const statuses = [...new Set([...table.values()].flatMap((row) => [...row.keys()]))].sort();
    const width = Math.max(...[...table.keys()].map((k) => k.length));
    const lines = [`${'route'.padEnd(width)}  ${statuses.map((s) => String(s).padEnd(4)).join(' ')}`];
    for (const [route, row] of [...table.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`${route.padEnd(width)}  ${statuses.map((s) => (row.has(s) ? (row.get(s) === 'ok' ? 'ok' : 'ex') : '-').padEnd(4)).join(' ')}`);
    }
    for (const [name, reason] of exceptions) lines.push(`ex ${name}: ${reason}`);
    console.log(`GitHub feeds and hooks against @octokit/openapi (ok = valid, ex = named exception, - = not served):\n${lines.join('\n')}`);
  });
});
