/**
 * Organization and repository webhooks with their deliveries (spec 001): CRUD with strict validation,
 * masked secrets, deliveries listed newest first with an opaque `cursor` in `Link`, redelivery
 * (`POST …/deliveries/{id}/attempts`, 202) that is asynchronous as GitHub's is: the new delivery
 * (`redelivery: true`) and its outcome appear `redeliveryDelayMs` later on the emulator clock, ping
 * (204, a `ping` delivery) and push test (204).
 *
 * Content-creating hook requests (redelivery attempts, pings, tests, hook creation) are limited per
 * caller; past the limit the endpoint answers 422 "has been spammed", as the real service does.
 * Delivery outcomes are simulated (`outcome`), so tests decide which deliveries fail.
 */
import { randomUUID } from 'node:crypto';
import type { Router, RouteContext, RouteResult } from '../router';
import { refill, type Durable, type EmulatorContext } from '../module';
import { githubFixture } from './service';
import { EmulatorHttpError } from '../http-error';
import * as v from 'valibot';
import { flag, given, jsonObject, requestBody, text, texts, validateBody } from '../validation';
import { accountOr404, repositoryOr404 } from './lookup';
import { paginate } from './pagination';
import { parseConfig } from './hook-config';
import { deliveryDetail, deliveryObject, statusText, type EmulatedDelivery, type Hook, type RedeliveryRecord } from './hook-deliveries';

export type { EmulatedDelivery, RedeliveryRecord } from './hook-deliveries';

export interface SpamLimits {
  perMinute: number;
  perHour: number;
  /** Window lengths (a minute and an hour on the real service; shorter in tests). @format milliseconds */
  minuteMs: number;
  hourMs: number;
}

export interface HookOptions {
  /** Content-creation limits per caller before hook endpoints answer 422 "spammed" (spec: 80/min, 500/h). */
  spam: SpamLimits;
  /** The HTTP status the target answers a new delivery with (0 = could not connect). Default 200. */
  outcome?: (d: { hookId: number; guid: string; event: string; redelivery: boolean }) => number;
  /**
   * How long after an accepted redelivery request (202) its delivery, with its outcome, is listed: GitHub
   * queues redeliveries, so a client cannot see the outcome in the answer. @format milliseconds
   */
  redeliveryDelayMs: number;
}

export const defaultHookOptions: HookOptions = {
  spam: { perMinute: 80, perHour: 500, minuteMs: 60_000, hourMs: 60 * 60_000 },
  redeliveryDelayMs: 3_000,
};

export type HookScope = { org: string } | { owner: string; repo: string };


export function registerHookRoutes(router: Router, ctx: EmulatorContext, options: HookOptions) {
  const fixture = githubFixture(ctx);
  const hooks = new Map<number, Hook>();
  const deliveries: EmulatedDelivery[] = [];
  const redeliveries: RedeliveryRecord[] = [];
  /** Accepted redeliveries not yet made, in request order (so due in order). */
  const queued: { record: RedeliveryRecord; original: EmulatedDelivery; dueAt: number }[] = [];
  const contentTimes = new Map<string, number[]>();
  let nextHookId = 1;
  let nextDeliveryId = 90_000_001;
  let spammed = 0;

  const org = (login: string) => accountOr404(fixture, login, 'Organization');
  const repo = (owner: string, name: string) => repositoryOr404(fixture, owner, name);
  const scopeOf = (params: Record<string, string>): Hook['scope'] =>
    params.org !== undefined ? { kind: 'org', org: org(params.org) } : { kind: 'repo', repo: repo(params.owner, params.repo) };
  const sameScope = (h: Hook, s: Hook['scope']) =>
    h.scope.kind === s.kind && (s.kind === 'org' ? h.scope.kind === 'org' && h.scope.org.id === s.org.id : h.scope.kind === 'repo' && h.scope.repo.id === s.repo.id);
  const basePath = (s: Hook['scope']) => (s.kind === 'org' ? `/orgs/${s.org.login}/hooks` : `/repos/${s.repo.owner}/${s.repo.name}/hooks`);

  const findHook = (params: Record<string, string>): Hook => {
    const scope = scopeOf(params);
    const h = /^\d+$/.test(params.hook_id) ? hooks.get(Number(params.hook_id)) : undefined;
    if (!h || !sameScope(h, scope)) throw new EmulatorHttpError(404, 'Not Found');
    return h;
  };

  /** The content-creation rule: past the limits, the endpoint "has been spammed" (422). */
  const admitContent = (caller: string, now: number) => {
    const { perMinute, perHour, minuteMs, hourMs } = options.spam;
    const times = (contentTimes.get(caller) ?? []).filter((t) => now - t < hourMs);
    contentTimes.set(caller, times);
    const lastMinute = times.filter((t) => now - t < minuteMs).length;
    if (lastMinute >= perMinute || times.length >= perHour) {
      spammed++;
      throw new EmulatorHttpError(422, 'Validation Failed', {
        errors: [{ resource: 'Hook', code: 'custom', message: 'This endpoint has been spammed. Please wait before trying again.' }],
      });
    }
    times.push(now);
  };

  const configObject = (h: Hook) => ({
    content_type: h.config.content_type,
    insecure_ssl: h.config.insecure_ssl,
    url: h.config.url,
    ...(h.config.secret !== undefined ? { secret: '********' } : {}),
  });

  const lastResponse = (h: Hook) => {
    deliverDue();
    const last = deliveries.filter((d) => d.hookId === h.id).at(-1);
    if (!last) return { code: null, status: 'unused', message: null };
    const ok = last.statusCode >= 200 && last.statusCode < 300;
    return { code: last.statusCode || null, status: ok ? 'active' : 'failed', message: statusText(last.statusCode) };
  };

  const hookObject = (h: Hook) => {
    const url = `${ctx.apiUrl()}${basePath(h.scope)}/${h.id}`;
    const common = {
      id: h.id,
      url,
      ping_url: `${url}/pings`,
      deliveries_url: `${url}/deliveries`,
      name: 'web',
      events: h.events,
      active: h.active,
      config: configObject(h),
      updated_at: new Date(h.updatedAt).toISOString(),
      created_at: new Date(h.createdAt).toISOString(),
    };
    return h.scope.kind === 'org'
      ? { ...common, type: 'Organization' }
      : { ...common, type: 'Repository', test_url: `${url}/tests`, last_response: lastResponse(h) };
  };

  /** Makes every queued redelivery due by now (lazily, from the emulator clock: no timers). */
  const deliverDue = () => {
    const now = ctx.clock();
    while (queued.length > 0 && queued[0].dueAt <= now) {
      const { record: r, original, dueAt } = queued.shift()!;
      const h = hooks.get(r.hookId);
      if (!h) continue;
      r.newDeliveryId = record(h, { guid: original.guid, event: original.event, action: original.action, redelivery: true, at: dueAt, payload: original.payload }).id;
    }
  };

  const record = (h: Hook, init: { guid?: string; event: string; action?: string | null; redelivery?: boolean; at: number; statusCode?: number; payload?: Record<string, unknown> }) => {
    const guid = init.guid ?? randomUUID();
    const redelivery = init.redelivery ?? false;
    const d: EmulatedDelivery = {
      id: nextDeliveryId++,
      guid,
      hookId: h.id,
      at: init.at,
      redelivery,
      durationMs: 120,
      statusCode: init.statusCode ?? options.outcome?.({ hookId: h.id, guid, event: init.event, redelivery }) ?? 200,
      event: init.event,
      action: init.action ?? null,
      payload: init.payload ?? { action: init.action ?? undefined, hook_id: h.id },
    };
    deliveries.push(d);
    return d;
  };

  const createHook = (scope: Hook['scope'], body: unknown, now: number, caller: string): Hook => {
    const isOrg = scope.kind === 'org';
    const input = validateBody(
      body,
      requestBody({ name: isOrg ? given(text()) : v.optional(text()), config: given(jsonObject()), events: v.optional(texts()), active: v.optional(flag()) }),
    );
    if (input.name !== undefined && input.name !== 'web') throw new EmulatorHttpError(422, 'Validation Failed', { errors: [{ resource: 'Hook', code: 'custom', field: 'name', message: 'Name must be "web"' }] });
    const config = parseConfig(input.config, true, isOrg ? ['username', 'password'] : []);
    admitContent(caller, now);
    const h: Hook = {
      id: nextHookId++,
      scope,
      events: input.events ?? ['push'],
      active: input.active ?? true,
      config: { url: config.url!, content_type: config.content_type ?? 'form', insecure_ssl: config.insecure_ssl ?? '0', secret: config.secret },
      createdAt: now,
      updatedAt: now,
    };
    hooks.set(h.id, h);
    return h;
  };

  const listHooks = ({ params, query }: RouteContext): RouteResult => {
    const scope = scopeOf(params);
    const all = [...hooks.values()].filter((h) => sameScope(h, scope));
    const page = paginate(all, query, `${ctx.apiUrl()}${basePath(scope)}`);
    return { status: 200, headers: page.headers, body: page.items.map(hookObject) };
  };

  const updateHook = ({ params, body, now }: RouteContext): RouteResult => {
    const h = findHook(params);
    const isOrg = h.scope.kind === 'org';
    const edit = { config: v.optional(jsonObject()), events: v.optional(texts()), active: v.optional(flag()), name: v.optional(text()) };
    // GitHub ignores a repository hook's `name` on edit (PyGithub's `Hook.edit` always sends it).
    const repoEdit = requestBody({ ...edit, add_events: v.optional(texts()), remove_events: v.optional(texts()) });
    const input: v.InferOutput<typeof repoEdit> = validateBody(body, isOrg ? requestBody(edit) : repoEdit);
    if (input.config !== undefined) {
      const config = parseConfig(input.config, isOrg);
      // An update without the secret removes it (spec rule 3).
      h.config = { url: config.url ?? h.config.url, content_type: config.content_type ?? h.config.content_type, insecure_ssl: config.insecure_ssl ?? h.config.insecure_ssl, secret: config.secret };
    }
    if (input.events !== undefined) h.events = input.events;
    for (const e of input.add_events ?? []) if (!h.events.includes(e)) h.events.push(e);
    const removed = input.remove_events;
    if (removed !== undefined) h.events = h.events.filter((e) => !removed.includes(e));
    if (input.active !== undefined) h.active = input.active;
    h.updatedAt = now;
    return { status: 200, body: hookObject(h) };
  };

  const cursorFor = (id: number) => `v1_${Buffer.from(String(id)).toString('base64url')}`;
  const parseCursor = (value: string): number => {
    const m = /^v1_([A-Za-z0-9_-]+)$/.exec(value);
    const id = m ? Number(Buffer.from(m[1], 'base64url').toString('utf8')) : NaN;
    if (!Number.isInteger(id)) throw new EmulatorHttpError(400, 'Bad Request: invalid cursor');
    return id;
  };

  const listDeliveries = ({ params, query }: RouteContext): RouteResult => {
    const h = findHook(params);
    deliverDue();
    const perPage = Number(query.get('per_page') ?? 30);
    const cursor = query.get('cursor');
    const before = cursor === null ? Infinity : parseCursor(cursor);
    const mine = deliveries.filter((d) => d.hookId === h.id && d.id < before).sort((a, b) => b.id - a.id);
    const items = mine.slice(0, perPage);
    const headers: Record<string, string> = {};
    if (mine.length > perPage) {
      const next = new URLSearchParams({ per_page: String(perPage), cursor: cursorFor(items[items.length - 1].id) });
      headers.link = `<${ctx.apiUrl()}${basePath(h.scope)}/${h.id}/deliveries?${next.toString()}>; rel="next"`;
    }
    return { status: 200, headers, body: items.map((d) => deliveryObject(d, h)) };
  };

  const findDelivery = (h: Hook, idText: string): EmulatedDelivery => {
    deliverDue();
    const d = /^\d+$/.test(idText) ? deliveries.find((x) => x.id === Number(idText) && x.hookId === h.id) : undefined;
    if (!d) throw new EmulatorHttpError(404, 'Not Found');
    return d;
  };

  const redeliver = ({ params, now, token }: RouteContext): RouteResult => {
    const h = findHook(params);
    const original = findDelivery(h, params.delivery_id);
    admitContent(token ?? '', now);
    const r: RedeliveryRecord = { hookId: h.id, deliveryId: original.id, guid: original.guid, at: now, caller: token ?? '' };
    redeliveries.push(r);
    queued.push({ record: r, original, dueAt: now + options.redeliveryDelayMs });
    deliverDue();
    return { status: 202, body: {} };
  };

  const ping = ({ params, now, token }: RouteContext): RouteResult => {
    const h = findHook(params);
    admitContent(token ?? '', now);
    record(h, { event: 'ping', at: now, payload: { zen: 'Keep it logically awesome.', hook_id: h.id } });
    return { status: 204 };
  };

  for (const prefix of ['/orgs/:org/hooks', '/repos/:owner/:repo/hooks']) {
    router.get(prefix, listHooks);
    router.post(prefix, ({ params, body, now, token }) => ({ status: 201, body: hookObject(createHook(scopeOf(params), body, now, token ?? '')) }));
    router.get(`${prefix}/:hook_id`, ({ params }) => ({ status: 200, body: hookObject(findHook(params)) }));
    router.patch(`${prefix}/:hook_id`, updateHook);
    router.delete(`${prefix}/:hook_id`, ({ params }) => {
      hooks.delete(findHook(params).id);
      return { status: 204 };
    });
    router.get(`${prefix}/:hook_id/config`, ({ params }) => ({ status: 200, body: configObject(findHook(params)) }));
    router.patch(`${prefix}/:hook_id/config`, ({ params, body, now }) => {
      const h = findHook(params);
      const config = parseConfig(body ?? {}, false);
      h.config = { ...h.config, ...config };
      h.updatedAt = now;
      return { status: 200, body: configObject(h) };
    });
    router.get(`${prefix}/:hook_id/deliveries`, listDeliveries);
    router.get(`${prefix}/:hook_id/deliveries/:delivery_id`, ({ params }) => {
      const h = findHook(params);
      return { status: 200, body: deliveryDetail(findDelivery(h, params.delivery_id), h) };
    });
    router.post(`${prefix}/:hook_id/deliveries/:delivery_id/attempts`, redeliver);
    router.post(`${prefix}/:hook_id/pings`, ping);
  }
  router.post('/repos/:owner/:repo/hooks/:hook_id/tests', ({ params, now, token }) => {
    const h = findHook(params);
    admitContent(token ?? '', now);
    // Only hooks subscribed to push get a test delivery; the answer is 204 either way.
    if (h.events.includes('push') || h.events.includes('*')) record(h, { event: 'push', at: now });
    return { status: 204 };
  });

  return {
    options,
    /** Creates a hook directly (no rate limits), for tests and the demo. */
    create(scope: HookScope, init: { url: string; secret?: string; events?: string[]; active?: boolean; contentType?: string }): { id: number } {
      const s: Hook['scope'] = 'org' in scope ? { kind: 'org', org: org(scope.org) } : { kind: 'repo', repo: repo(scope.owner, scope.repo) };
      const now = ctx.clock();
      const h: Hook = {
        id: nextHookId++,
        scope: s,
        events: init.events ?? ['*'],
        active: init.active ?? true,
        config: { url: init.url, content_type: init.contentType ?? 'json', insecure_ssl: '0', secret: init.secret },
        createdAt: now,
        updatedAt: now,
      };
      hooks.set(h.id, h);
      return { id: h.id };
    },
    /** Records a past delivery of a hook (`statusCode` 2xx = OK; anything else failed). */
    addDelivery(hookId: number, init: { at: number; statusCode: number; event?: string; action?: string; guid?: string; redelivery?: boolean }): EmulatedDelivery {
      const h = hooks.get(hookId);
      if (!h) throw new Error(`no hook ${hookId}`);
      return record(h, { event: init.event ?? 'issues', action: init.action ?? 'opened', guid: init.guid, redelivery: init.redelivery, at: init.at, statusCode: init.statusCode });
    },
    /** The hook's deliveries made by now (queued redeliveries appear when due). */
    deliveries(hookId: number): EmulatedDelivery[] {
      deliverDue();
      return deliveries.filter((d) => d.hookId === hookId);
    },
    /** Every accepted redelivery attempt, in order. */
    redeliveries(): RedeliveryRecord[] {
      deliverDue();
      return [...redeliveries];
    },
    /** How many content-creating requests were answered 422 "spammed". */
    spammedCount(): number {
      return spammed;
    },
    pings(hookId: number): EmulatedDelivery[] {
      deliverDue();
      return deliveries.filter((d) => d.hookId === hookId && d.event === 'ping');
    },
    durable: {
      // `queued`: redeliveries accepted but not yet made (they share their records with `redeliveries`).
      snapshot: () => ({ hooks, deliveries, redeliveries, queued, contentTimes, nextHookId, nextDeliveryId, spammed }),
      restore(saved) {
        refill(hooks, saved.hooks);
        refill(deliveries, saved.deliveries);
        refill(redeliveries, saved.redeliveries);
        refill(queued, saved.queued ?? []);
        refill(contentTimes, saved.contentTimes);
        ({ nextHookId, nextDeliveryId, spammed } = saved);
      },
    } satisfies Durable<{
      hooks: typeof hooks;
      deliveries: typeof deliveries;
      redeliveries: typeof redeliveries;
      queued: typeof queued;
      contentTimes: typeof contentTimes;
      nextHookId: number;
      nextDeliveryId: number;
      spammed: number;
    }>,
  };
}
