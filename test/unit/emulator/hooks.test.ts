/**
 * The emulated webhooks over real HTTP on an injected clock: validation and masked secrets, deliveries
 * with `cursor` pagination in `Link`, redelivery as a new `redelivery: true` delivery made later (asynchronous), ping and test, and
 * the 422 "spammed" answer past the content-creation limits.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseLinkHeader } from '../../../src/http/api-client';
import { verifySignature } from '../../../src/http/signature';
import { call, clockedEmulators, messageOf } from '../../helpers/emulator-http';

const START = Date.UTC(2026, 3, 2, 9, 0, 0);
const em = clockedEmulators(START);

type Delivery = { id: number; guid: string; redelivery: boolean; status: string; status_code: number; event: string; delivered_at: string };

describe('emulated webhooks', () => {
  it('validates hook creation strictly and never shows the secret', async () => {
    const e = await em.start();
    const noName = await call(e.apiUrl, 'POST', '/orgs/octo-org/hooks', { body: { config: { url: 'https://example.test/hook' } } });
    expect(noName.status).toBe(422);
    expect(messageOf(noName)).toMatch(/"name" wasn't supplied/);
    const noUrl = await call(e.apiUrl, 'POST', '/orgs/octo-org/hooks', { body: { name: 'web', config: { content_type: 'json' } } });
    expect(noUrl.status).toBe(422);
    const unknownKey = await call(e.apiUrl, 'POST', '/repos/octo-org/alpha/hooks', { body: { config: { url: 'https://example.test/h', colour: 'red' } } });
    expect(unknownKey.status).toBe(422);
    const created = await call(e.apiUrl, 'POST', '/orgs/octo-org/hooks', {
      body: { name: 'web', config: { url: 'https://example.test/hook', content_type: 'json', secret: 's3cret' }, events: ['issues'] },
    });
    expect(created.status).toBe(201);
    const hook = created.json as { id: number; type: string; config: Record<string, unknown>; events: string[]; active: boolean };
    expect(hook).toMatchObject({ type: 'Organization', events: ['issues'], active: true });
    expect(hook.config.secret).toBe('********');
    expect(created.text).not.toContain('s3cret');
    // A whole-hook update without the secret removes it (spec rule 3).
    const updated = await call(e.apiUrl, 'PATCH', `/orgs/octo-org/hooks/${hook.id}`, { body: { config: { url: 'https://example.test/other' } } });
    expect((updated.json as { config: Record<string, unknown> }).config.secret).toBeUndefined();
    const repoHook = await call(e.apiUrl, 'POST', '/repos/octo-org/alpha/hooks', { body: { config: { url: 'https://example.test/r' } } });
    expect(repoHook.json).toMatchObject({ type: 'Repository', events: ['push'], last_response: { code: null, status: 'unused', message: null } });
    expect((await call(e.apiUrl, 'GET', `/repos/octo-org/beta/hooks/${(repoHook.json as { id: number }).id}`)).status).toBe(404);
  });

  it('accepts a repository hook edit carrying the name GitHub ignores there, and still refuses a key it does not know', async () => {
    const e = await em.start();
    const { id } = (await call(e.apiUrl, 'POST', '/repos/octo-org/alpha/hooks', { body: { name: 'web', config: { url: 'https://example.test/r' } } })).json as { id: number };
    // PyGithub's Hook.edit always sends `name`.
    const edited = await call(e.apiUrl, 'PATCH', `/repos/octo-org/alpha/hooks/${id}`, { body: { name: 'web', config: { url: 'https://example.test/s' }, events: ['push', 'issues'] } });
    expect(edited.status).toBe(200);
    expect(edited.json).toMatchObject({ name: 'web', events: ['push', 'issues'], config: { url: 'https://example.test/s' } });
    const unknown = await call(e.apiUrl, 'PATCH', `/repos/octo-org/alpha/hooks/${id}`, { body: { colour: 'red' } });
    expect(unknown.status).toBe(422);
    expect(messageOf(unknown)).toContain('"colour" is not a permitted key');
  });

  it('lists deliveries newest first, page by page through the cursor in Link', async () => {
    const e = await em.start();
    const { id } = e.hooks.create({ org: 'octo-org' }, { url: 'https://example.test/h', secret: 'k' });
    for (let i = 0; i < 25; i++) e.hooks.addDelivery(id, { at: START - (25 - i) * 1000, statusCode: i % 5 === 0 ? 500 : 200 });
    const seen: Delivery[] = [];
    let next: string | undefined = `/orgs/octo-org/hooks/${id}/deliveries?per_page=10`;
    let pages = 0;
    while (next) {
      const res = await call(e.apiUrl, 'GET', next);
      expect(res.status).toBe(200);
      seen.push(...(res.json as Delivery[]));
      next = parseLinkHeader(res.headers.link).next;
      if (next) expect(new URL(next).searchParams.get('cursor')).toMatch(/^v1_/);
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(25);
    expect(seen.map((d) => d.id)).toEqual([...seen.map((d) => d.id)].sort((a, b) => b - a));
    expect(seen.filter((d) => d.status !== 'OK').map((d) => d.status)).toEqual(Array(5).fill('Invalid HTTP Response: 500'));
    expect((await call(e.apiUrl, 'GET', `/orgs/octo-org/hooks/${id}/deliveries?cursor=garbage`)).status).toBe(400);
  });

  it('redelivers asynchronously: the 202 comes first, the redelivery and its outcome appear redeliveryDelayMs later', async () => {
    const e = await em.start({ hooks: { redeliveryDelayMs: 5_000, outcome: ({ redelivery }) => (redelivery ? 504 : 200) } });
    const { id } = e.hooks.create({ owner: 'octo-org', repo: 'alpha' }, { url: 'https://example.test/h', secret: 'hook-secret' });
    const failed = e.hooks.addDelivery(id, { at: START - 60_000, statusCode: 502 });
    const res = await call(e.apiUrl, 'POST', `/repos/octo-org/alpha/hooks/${id}/deliveries/${failed.id}/attempts`);
    expect(res.status).toBe(202);
    expect(e.hooks.redeliveries()).toEqual([expect.objectContaining({ hookId: id, deliveryId: failed.id, guid: failed.guid, at: START })]);
    expect(e.hooks.redeliveries()[0].newDeliveryId).toBeUndefined();
    const list = async () => (await call(e.apiUrl, 'GET', `/repos/octo-org/alpha/hooks/${id}/deliveries`)).json as Delivery[];
    em.now = START + 4_999;
    expect(await list()).toHaveLength(1);
    em.now = START + 5_000;
    const after = await list();
    expect(after).toHaveLength(2);
    expect(after[0]).toMatchObject({ guid: failed.guid, redelivery: true, status: 'Invalid HTTP Response: 504', status_code: 504, delivered_at: new Date(START + 5_000).toISOString() });
    expect(after[1]).toMatchObject({ guid: failed.guid, redelivery: false, status_code: 502 });
    expect(e.hooks.redeliveries()[0].newDeliveryId).toBe(after[0].id);
  });

  it('redelivers as a new delivery of the same guid marked redelivery, and records the signed request', async () => {
    const e = await em.start({ hooks: { redeliveryDelayMs: 0 } });
    const { id } = e.hooks.create({ owner: 'octo-org', repo: 'alpha' }, { url: 'https://example.test/h', secret: 'hook-secret' });
    const failed = e.hooks.addDelivery(id, { at: START - 60_000, statusCode: 502 });
    const res = await call(e.apiUrl, 'POST', `/repos/octo-org/alpha/hooks/${id}/deliveries/${failed.id}/attempts`);
    expect(res.status).toBe(202);
    const list = (await call(e.apiUrl, 'GET', `/repos/octo-org/alpha/hooks/${id}/deliveries`)).json as Delivery[];
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ guid: failed.guid, redelivery: true, status: 'OK', status_code: 200, delivered_at: new Date(START).toISOString() });
    expect(list[1]).toMatchObject({ guid: failed.guid, redelivery: false, status_code: 502 });
    const detail = (await call(e.apiUrl, 'GET', `/repos/octo-org/alpha/hooks/${id}/deliveries/${failed.id}`)).json as {
      request: { headers: Record<string, string>; payload: unknown };
    };
    expect(verifySignature('hook-secret', JSON.stringify(detail.request.payload), detail.request.headers['X-Hub-Signature-256'])).toBe(true);
    // The older header spec 001 lists beside it: the HMAC-SHA1 of the same body.
    expect(detail.request.headers['X-Hub-Signature']).toBe(`sha1=${createHmac('sha1', 'hook-secret').update(JSON.stringify(detail.request.payload)).digest('hex')}`);
    expect((await call(e.apiUrl, 'POST', `/repos/octo-org/alpha/hooks/${id}/deliveries/999/attempts`)).status).toBe(404);
  });

  it('answers ping and test with 204 and records a ping delivery', async () => {
    const e = await em.start();
    const { id } = e.hooks.create({ owner: 'octo-org', repo: 'alpha' }, { url: 'https://example.test/h', events: ['issues'] });
    expect((await call(e.apiUrl, 'POST', `/repos/octo-org/alpha/hooks/${id}/pings`)).status).toBe(204);
    expect(e.hooks.pings(id)).toHaveLength(1);
    // Not subscribed to push: 204 and no test delivery.
    expect((await call(e.apiUrl, 'POST', `/repos/octo-org/alpha/hooks/${id}/tests`)).status).toBe(204);
    expect(e.hooks.deliveries(id)).toHaveLength(1);
    expect((await call(e.apiUrl, 'POST', '/orgs/octo-org/hooks/424242/pings')).status).toBe(404);
  });

  it('answers 422 "spammed" past the per-minute and per-hour content-creation limits', async () => {
    const e = await em.start({ hooks: { spam: { perMinute: 3, perHour: 5, minuteMs: 60_000, hourMs: 3_600_000 } } });
    const { id } = e.hooks.create({ org: 'octo-org' }, { url: 'https://example.test/h' });
    const d = e.hooks.addDelivery(id, { at: START - 1000, statusCode: 500 });
    const attempt = () => call(e.apiUrl, 'POST', `/orgs/octo-org/hooks/${id}/deliveries/${d.id}/attempts`);
    for (let i = 0; i < 3; i++) expect((await attempt()).status).toBe(202);
    const spammed = await attempt();
    expect(spammed.status).toBe(422);
    expect(spammed.text).toMatch(/spammed/);
    em.now = START + 60_000;
    expect((await attempt()).status).toBe(202);
    expect((await attempt()).status).toBe(202);
    // Five in the hour: the hourly limit holds even though the minute is fresh.
    em.now = START + 120_000;
    expect((await attempt()).status).toBe(422);
    expect(e.hooks.spammedCount()).toBe(2);
    expect(e.hooks.redeliveries()).toHaveLength(5);
  });
});
