/**
 * Conformance of the emulated feeds and webhooks with GitHub's own client: `@octokit/rest` (its named methods,
 * its `paginate`) against the emulator for the flows longhaul uses — every feed kind it polls, conditionally
 * (If-None-Match → 304), and webhook repair's calls (deliveries listed through the `cursor` in `Link`, one
 * delivery read, a redelivery whose delivery appears later, a ping) — each body validated against GitHub's
 * official description (`@octokit/openapi`).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Octokit, type RestEndpointMethodTypes } from '@octokit/rest';
import { FEED_TEMPLATES } from '../../src/processes/feed-poll/model';
import { TEST_TOKEN } from '../helpers/emulator';
import { clockedEmulators } from '../helpers/emulator-http';
import { checkGithubAnswer } from '../helpers/github-openapi';
import { checkEventPage, PAYLOAD_ONE_OF_EXCEPTION } from '../helpers/github-event-schemas';

const START = Date.UTC(2026, 3, 4, 9, 0, 0);
const em = clockedEmulators(START);
const covered: string[] = [];
const exceptions = new Set<string>();

function client(baseUrl: string): Octokit {
  return new Octokit({ baseUrl, auth: TEST_TOKEN, userAgent: 'longhaul-conformance', log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });
}

/** The status of a call that @octokit/rest reports by throwing (a 304 is a RequestError to it). */
async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    return ((await call) as { status: number }).status;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

function expectSchema(method: string, path: string, status: number, body: unknown) {
  const r = checkGithubAnswer(method, path, status, body);
  expect(r.errors, `${method} ${path} ${status}`).toEqual([]);
  covered.push(`${method} ${r.template} ${status}`);
}

type Activity = Octokit['rest']['activity'];
/** The @octokit/rest method for each feed kind longhaul polls, called with the feed's parameters. */
const FEED_METHODS: Record<string, (a: Activity, p: { owner: string; repo: string; org: string; username: string }) => Promise<{ status: number; data: unknown; headers: Record<string, unknown> }>> = {
  '/events': (a) => a.listPublicEvents({ per_page: 100 }),
  '/networks/{owner}/{repo}/events': (a, p) => a.listPublicEventsForRepoNetwork({ owner: p.owner, repo: p.repo, per_page: 100 }),
  '/orgs/{org}/events': (a, p) => a.listPublicOrgEvents({ org: p.org, per_page: 100 }),
  '/repos/{owner}/{repo}/events': (a, p) => a.listRepoEvents({ owner: p.owner, repo: p.repo, per_page: 100 }),
  '/users/{username}/events': (a, p) => a.listEventsForAuthenticatedUser({ username: p.username, per_page: 100 }),
  '/users/{username}/events/orgs/{org}': (a, p) => a.listOrgEventsForAuthenticatedUser({ username: p.username, org: p.org, per_page: 100 }),
  '/users/{username}/events/public': (a, p) => a.listPublicEventsForUser({ username: p.username, per_page: 100 }),
  '/users/{username}/received_events': (a, p) => a.listReceivedEventsForUser({ username: p.username, per_page: 100 }),
  '/users/{username}/received_events/public': (a, p) => a.listReceivedPublicEventsForUser({ username: p.username, per_page: 100 }),
};

describe('@octokit/rest against the emulated feeds and webhooks', () => {
  it('lists every feed kind longhaul polls, schema-exact, and gets 304 for an unchanged feed with If-None-Match', async () => {
    const e = await em.start({ feeds: { initialEvents: 0, eventsPerMinute: 0 } });
    const octokit = client(e.apiUrl);
    const p = { owner: 'octo-org', repo: 'alpha', org: 'octo-org', username: 'octocat' };
    for (const { template } of FEED_TEMPLATES) {
      const method = FEED_METHODS[template];
      expect(method, template).toBeDefined();
      const path = template.replace(/\{(\w+)\}/g, (_m, name: keyof typeof p) => p[name]);
      e.feeds.burst(path, 40);
      const res = await method(octokit.rest.activity, p);
      expect(res.status, template).toBe(200);
      const { problems, usedException } = checkEventPage(path, res.data as { id: string; type: string; payload: Record<string, unknown> }[]);
      expect(problems, template).toEqual([]);
      if (usedException) exceptions.add(PAYLOAD_ONE_OF_EXCEPTION);
      covered.push(`GET ${template} 200`);
      // A conditional poll of the unchanged feed: @octokit/rest reports the 304 as a RequestError.
      const etag = String(res.headers.etag);
      const conditional = octokit.request(`GET ${path}`, { per_page: 100, headers: { 'if-none-match': etag } });
      expect(await statusOf(conditional), template).toBe(304);
      covered.push(`GET ${template} 304`);
    }
  });

  it('drives webhook repair’s calls: deliveries through the cursor, one delivery, a redelivery that appears later, a ping', async () => {
    const delayMs = 4_000;
    const e = await em.start({ hooks: { redeliveryDelayMs: delayMs } });
    const octokit = client(e.apiUrl);
    const created = await octokit.rest.orgs.createWebhook({ org: 'octo-org', name: 'web', config: { url: 'https://receiver.example.test/hook', content_type: 'json', secret: 'x' }, events: ['issues'] });
    expectSchema('POST', '/orgs/octo-org/hooks', created.status, created.data);
    const hookId = created.data.id;
    for (let i = 0; i < 25; i++) e.hooks.addDelivery(hookId, { at: START - (25 - i) * 1000, statusCode: i % 6 === 0 ? 502 : 200 });

    // Cursor pagination: every page validated, 25 deliveries over 3 pages of 10, newest first.
    type Delivery = RestEndpointMethodTypes['orgs']['listWebhookDeliveries']['response']['data'][number];
    const seen: Delivery[] = [];
    let pages = 0;
    for await (const page of octokit.paginate.iterator(octokit.rest.orgs.listWebhookDeliveries, { org: 'octo-org', hook_id: hookId, per_page: 10 })) {
      expectSchema('GET', `/orgs/octo-org/hooks/${hookId}/deliveries`, page.status, page.data);
      if (pages > 0) expect(page.url).toMatch(/cursor=v1_/);
      seen.push(...page.data);
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(25);
    expect(seen.map((d) => d.id)).toEqual([...seen.map((d) => d.id)].sort((a, b) => b - a));

    const failed = seen.find((d) => d.status !== 'OK')!;
    const one = await octokit.rest.orgs.getWebhookDelivery({ org: 'octo-org', hook_id: hookId, delivery_id: failed.id });
    expectSchema('GET', `/orgs/octo-org/hooks/${hookId}/deliveries/${failed.id}`, one.status, one.data);
    expect(one.data).toMatchObject({ guid: failed.guid, redelivery: false, status_code: 502 });

    const redelivered = await octokit.rest.orgs.redeliverWebhookDelivery({ org: 'octo-org', hook_id: hookId, delivery_id: failed.id });
    expectSchema('POST', `/orgs/octo-org/hooks/${hookId}/deliveries/${failed.id}/attempts`, redelivered.status, redelivered.data);
    expect(redelivered.status).toBe(202);
    const newest = async () => (await octokit.rest.orgs.listWebhookDeliveries({ org: 'octo-org', hook_id: hookId, per_page: 1 })).data[0];
    // Asynchronous: not listed at once, listed once the delay has passed on the emulator clock.
    expect((await newest()).redelivery).toBe(false);
    em.now = START + delayMs;
    const made = await newest();
    expect(made).toMatchObject({ guid: failed.guid, redelivery: true, status: 'OK', delivered_at: new Date(START + delayMs).toISOString() });
    const detail = await octokit.rest.orgs.getWebhookDelivery({ org: 'octo-org', hook_id: hookId, delivery_id: made.id });
    expectSchema('GET', `/orgs/octo-org/hooks/${hookId}/deliveries/${made.id}`, detail.status, detail.data);

    const ping = await octokit.rest.orgs.pingWebhook({ org: 'octo-org', hook_id: hookId });
    expectSchema('POST', `/orgs/octo-org/hooks/${hookId}/pings`, ping.status, ping.data);
    const repoHook = await octokit.rest.repos.createWebhook({ owner: 'octo-org', repo: 'alpha', config: { url: 'https://receiver.example.test/r' } });
    expectSchema('POST', '/repos/octo-org/alpha/hooks', repoHook.status, repoHook.data);
    const repoDeliveries = await octokit.rest.repos.listWebhookDeliveries({ owner: 'octo-org', repo: 'alpha', hook_id: repoHook.data.id });
    expectSchema('GET', `/repos/octo-org/alpha/hooks/${repoHook.data.id}/deliveries`, repoDeliveries.status, repoDeliveries.data);
    const test = await octokit.rest.repos.testPushWebhook({ owner: 'octo-org', repo: 'alpha', hook_id: repoHook.data.id });
    expectSchema('POST', `/repos/octo-org/alpha/hooks/${repoHook.data.id}/tests`, test.status, test.data);
  });

  afterAll(() => {
    console.log(
      `@octokit/rest feeds and webhooks against the emulator, validated with @octokit/openapi — covered:\n  ${[...new Set(covered)].join('\n  ')}` +
        (exceptions.size ? `\nexceptions:\n  ${[...exceptions].join('\n  ')}` : ''),
    );
  });
});
