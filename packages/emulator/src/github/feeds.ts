/**
 * Activity-event feeds (spec 001): every feed path, events appearing over time at a configurable rate
 * (plus bursts, also beyond the 300-event window), at most 300 events and 30 days per feed, `page`/
 * `per_page` pagination with `Link`, an `ETag` per response with 304 for `If-None-Match` (a 304 does not
 * count against the primary rate limit), and an `X-Poll-Interval` that can change while clients poll.
 *
 * Events are materialised lazily from the emulator clock (no timers), so an injected clock is exact.
 * The emulator also keeps the books a benchmark needs: events produced, events that left the window
 * before any response carried them, and polls that arrived before the interval the server asked for.
 */
import type { Router, RouteContext, RouteResult } from '../router';
import { refillAll, type Durable, type EmulatorContext } from '../module';
import { AUTHENTICATED_USER, apiVersionOf, githubFixture } from './service';
import { EmulatorHttpError } from '../http-error';
import { NOT_MODIFIED_NOT_COUNTED, etagMatches, weakEtag } from '../conditional';
import type { Account, Repository } from './fixture';
import { accountOr404, movedPermanently, renamedRepository, repositoryOr404 } from './lookup';
import { paginate } from './pagination';
import { sizedEvent, targetEventBytes, type EventSizeOption } from './feed-event-sizes';
import { buildPayload, eventForApiVersion } from './feed-event-payloads';

export interface FeedBurst {
  /** When, relative to the emulator's start. @format milliseconds */
  atMs: number;
  /** How many events appear at once (more than 300 pushes earlier events out of the window). */
  count: number;
  /** The feed (canonical path, e.g. `/repos/octo-org/alpha/events`); every feed when omitted. */
  feed?: string;
}

export interface FeedOptions {
  /** New events per minute on each feed (0 = none). */
  eventsPerMinute: number;
  /** Events a feed already holds when it is first read. */
  initialEvents: number;
  /** The `X-Poll-Interval` sent, in seconds (GitHub sends 60; benchmarks scale it down). */
  pollIntervalSeconds: number;
  /** Events a feed holds at most (spec: 300). */
  windowSize: number;
  /** Events older than this leave the feed (spec: 30 days). @format milliseconds */
  maxAgeMs: number;
  bursts: FeedBurst[];
  /** The user every accepted token authenticates as (private events, `/users/{u}/events/orgs/{org}`). */
  authenticatedUser: string;
  /** Share of events on user feeds that are private (shown only to that user). */
  privateFraction: number;
  /**
   * Bytes of JSON per event: `'realistic'` (default: most 1–4 KB, a long tail up to 60 KB, as real issues,
   * comments and releases are) or a fixed size for every event.
   */
  eventBytes: EventSizeOption;
}

export const defaultFeedOptions: FeedOptions = {
  eventsPerMinute: 2,
  initialEvents: 5,
  pollIntervalSeconds: 60,
  windowSize: 300,
  maxAgeMs: 30 * 24 * 60 * 60 * 1000,
  bursts: [],
  authenticatedUser: 'octocat',
  privateFraction: 0.2,
  eventBytes: 'realistic',
};

interface StoredEvent {
  event: Record<string, unknown> & { id: string; public: boolean; created_at: string };
  at: number;
  /** Carried by at least one response body. */
  served: boolean;
}

interface Stream {
  key: string;
  createdAt: number;
  rate: number;
  /** Time from which `rateCount` rate events have been produced. */
  rateOrigin: number;
  rateCount: number;
  appliedBursts: Set<number>;
  events: StoredEvent[];
  /** Whether events may be private (user feeds). */
  mayBePrivate: boolean;
  scope: { user?: Account; org?: Account; repo?: Repository };
}

/** The books kept per polled feed path (and caller). */
export interface FeedPollBook {
  /** Page-1 requests (a poll), including 304s. */
  polls: number;
  notModified: number;
  /** Polls that arrived before the previous response's `X-Poll-Interval` had passed since the previous poll. */
  earlyPolls: number;
  /** Requests for pages after the first. */
  extraPages: number;
}

export function registerFeedRoutes(router: Router, ctx: EmulatorContext, options: FeedOptions) {
  const fixture = githubFixture(ctx);
  // The one user every token authenticates as, for the whole GitHub family (`GET /user` answers it).
  ctx.shared(AUTHENTICATED_USER, () => options.authenticatedUser);
  let startedAt = ctx.clock();
  const streams = new Map<string, Stream>();
  const intervalOverrides = new Map<string, number>();
  const books = new Map<string, FeedPollBook>();
  const lastPoll = new Map<string, { at: number; intervalSeconds: number }>();
  let nextEventId = 40_000_000_001;
  let globalRate = options.eventsPerMinute;
  const rateOverrides = new Map<string, number>();

  const account = (login: string, type: Account['type']) => accountOr404(fixture, login, type);
  const repository = (owner: string, name: string) => repositoryOr404(fixture, owner, name);

  /** `/users/u/events/public` reads the same events as `/users/u/events`, filtered. */
  const streamKeyOf = (path: string) => path.replace(/\/public$/, '');

  const actorObject = (a: Account) => ({
    id: a.id,
    login: a.login,
    display_login: a.login,
    gravatar_id: '',
    url: `${ctx.apiUrl()}/users/${a.login}`,
    avatar_url: `https://avatars.example.test/u/${a.id}?`,
  });
  const orgObject = (a: Account) => ({
    id: a.id,
    login: a.login,
    gravatar_id: '',
    url: `${ctx.apiUrl()}/orgs/${a.login}`,
    avatar_url: `https://avatars.example.test/u/${a.id}?`,
  });

  const makeEvent = (s: Stream, at: number): StoredEvent => {
    const id = nextEventId++;
    const users = fixture.accounts.filter((a) => a.type === 'User');
    const actor = s.scope.user ?? users[id % users.length];
    const candidates = s.scope.repo
      ? [s.scope.repo]
      : s.scope.org
        ? fixture.repositories.filter((r) => r.owner.toLowerCase() === s.scope.org!.login.toLowerCase())
        : fixture.repositories;
    const repo = candidates[id % candidates.length] ?? fixture.repositories[0];
    // Deterministic privacy by id, so tests can predict what a caller sees.
    const isPrivate = s.mayBePrivate && ((id * 37) % 100) / 100 < options.privateFraction;
    const event: StoredEvent['event'] = {
      id: String(id),
      type: '',
      actor: actorObject(actor),
      // The event schema's minimal repository: id, owner/name, API address.
      repo: { id: repo.id, name: `${repo.owner}/${repo.name}`, url: `${ctx.apiUrl()}/repos/${repo.owner}/${repo.name}` },
      payload: {},
      public: !isPrivate,
      created_at: new Date(at).toISOString(),
    };
    if (s.scope.org) event.org = orgObject(s.scope.org);
    const sized = sizedEvent(id, targetEventBytes(id, options.eventBytes), (type) => buildPayload(type, { id, apiUrl: ctx.apiUrl(), repo, actor, at }), (p, t) =>
      Buffer.byteLength(JSON.stringify({ ...event, type: t, payload: p })),
    );
    event.type = sized.type;
    event.payload = sized.payload;
    return { event, at, served: false };
  };

  const rateOf = (key: string) => rateOverrides.get(key) ?? globalRate;

  /** Produces every event due by `now`, in time order (rate events and bursts interleaved). */
  const advance = (s: Stream, now: number) => {
    for (;;) {
      const nextRate = s.rate > 0 ? s.rateOrigin + ((s.rateCount + 1) * 60_000) / s.rate : Infinity;
      let burstIndex = -1;
      let burstAt = Infinity;
      options.bursts.forEach((b, i) => {
        const at = startedAt + b.atMs;
        if (s.appliedBursts.has(i) || at < s.createdAt || at >= burstAt) return;
        if (b.feed !== undefined && streamKeyOf(b.feed.toLowerCase()) !== s.key) return;
        burstIndex = i;
        burstAt = at;
      });
      const t = Math.min(nextRate, burstAt);
      if (t > now) return;
      if (burstAt <= nextRate) {
        s.appliedBursts.add(burstIndex);
        for (let i = 0; i < options.bursts[burstIndex].count; i++) s.events.push(makeEvent(s, burstAt));
      } else {
        s.rateCount++;
        s.events.push(makeEvent(s, Math.floor(nextRate)));
      }
    }
  };

  const streamFor = (key: string, scope: Stream['scope'], mayBePrivate: boolean): Stream => {
    let s = streams.get(key);
    if (!s) {
      const now = ctx.clock();
      s = { key, createdAt: now, rate: rateOf(key), rateOrigin: now, rateCount: 0, appliedBursts: new Set(), events: [], mayBePrivate, scope };
      for (let i = options.initialEvents; i > 0; i--) s.events.push(makeEvent(s, now - i * 1000));
      streams.set(key, s);
    }
    return s;
  };

  /** The events currently in the feed, oldest first: the newest `windowSize` of the last `maxAgeMs`. */
  const windowOf = (s: Stream, now: number): StoredEvent[] => {
    const recent = s.events.filter((e) => e.at >= now - options.maxAgeMs && e.at <= now);
    return recent.slice(Math.max(0, recent.length - options.windowSize));
  };

  const intervalFor = (path: string) => intervalOverrides.get(path) ?? options.pollIntervalSeconds;

  const bookFor = (key: string): FeedPollBook => {
    let b = books.get(key);
    if (!b) {
      b = { polls: 0, notModified: 0, earlyPolls: 0, extraPages: 0 };
      books.set(key, b);
    }
    return b;
  };

  interface View {
    path: string;
    stream: Stream;
    /** Whether a stored event is shown to this caller on this path. */
    visible: (e: StoredEvent) => boolean;
  }

  const serve = (view: View, rc: RouteContext): RouteResult => {
    const { now, query } = rc;
    advance(view.stream, now);
    const visible = windowOf(view.stream, now).filter(view.visible).reverse();
    const page = paginate(visible, query, `${ctx.apiUrl()}${view.path}`);
    const pageNumber = Math.max(1, Number(query.get('page') ?? 1) || 1);
    const perPage = Number(query.get('per_page') ?? 30);
    const etag = weakEtag(`${view.path}|${pageNumber}|${perPage}|${page.items.map((e) => e.event.id).join(',')}`);
    const interval = intervalFor(view.path);
    const book = bookFor(view.path);
    if (pageNumber === 1) {
      book.polls++;
      const key = `${rc.token ?? ''} ${view.path}`;
      const last = lastPoll.get(key);
      if (last && now < last.at + last.intervalSeconds * 1000) book.earlyPolls++;
      lastPoll.set(key, { at: now, intervalSeconds: interval });
    } else {
      book.extraPages++;
    }
    const headers: Record<string, string> = { etag, 'x-poll-interval': String(interval), 'cache-control': 'private, max-age=60, s-maxage=60', vary: 'Accept, Authorization' };
    if (etagMatches(rc.headers['if-none-match'], etag)) {
      book.notModified++;
      return { status: 304, headers };
    }
    for (const e of page.items) e.served = true;
    const version = apiVersionOf(rc);
    return { status: 200, headers: { ...headers, ...page.headers }, body: page.items.map((e) => eventForApiVersion(e.event, version)) };
  };

  const caller = () => options.authenticatedUser.toLowerCase();
  const all = () => true;
  const publicOnly = (e: StoredEvent) => e.event.public;
  const notCounted = NOT_MODIFIED_NOT_COUNTED;

  /** Resolves a canonical feed path to its view (404 when its names do not exist), as the routes do. */
  const viewOf = (path: string): View => {
    const p = path.toLowerCase().replace(/\/+$/, '');
    let m: RegExpExecArray | null;
    if (p === '/events') return { path: p, stream: streamFor(p, {}, false), visible: publicOnly };
    if ((m = /^\/networks\/([^/]+)\/([^/]+)\/events$/.exec(p))) {
      const repo = repository(m[1], m[2]);
      return { path: p, stream: streamFor(p, { repo }, false), visible: all };
    }
    if ((m = /^\/orgs\/([^/]+)\/events$/.exec(p))) return { path: p, stream: streamFor(p, { org: account(m[1], 'Organization') }, false), visible: all };
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/events$/.exec(p))) {
      const repo = repository(m[1], m[2]);
      return { path: p, stream: streamFor(p, { repo }, false), visible: all };
    }
    if ((m = /^\/users\/([^/]+)\/events\/orgs\/([^/]+)$/.exec(p))) {
      const user = account(m[1], 'User');
      const org = account(m[2], 'Organization');
      // The user's organization dashboard: only that user may read it.
      if (user.login.toLowerCase() !== caller()) throw new EmulatorHttpError(404, 'Not Found');
      return { path: p, stream: streamFor(p, { user, org }, true), visible: all };
    }
    if ((m = /^\/users\/([^/]+)\/(events|received_events)(\/public)?$/.exec(p))) {
      const user = account(m[1], 'User');
      const stream = streamFor(streamKeyOf(p), { user }, true);
      const self = user.login.toLowerCase() === caller();
      return { path: p, stream, visible: m[3] || !self ? publicOnly : all };
    }
    throw new EmulatorHttpError(404, 'Not Found');
  };

  const route = (rc: RouteContext) => serve(viewOf(rc.path), rc);
  // A renamed repository's network feed answers 301, as the description documents (GitHub names no target:
  // the same feed under the current name, where clients that follow it read on).
  router.get(
    '/networks/:owner/:repo/events',
    (rc) => {
      const renamed = renamedRepository(fixture, rc.params.owner, rc.params.repo);
      const query = rc.query.toString();
      if (renamed) throw movedPermanently(`${ctx.apiUrl()}/networks/${renamed.owner}/${renamed.name}/events${query ? `?${query}` : ''}`);
      return route(rc);
    },
    notCounted,
  );
  for (const pattern of [
    '/events',
    '/orgs/:org/events',
    '/repos/:owner/:repo/events',
    '/users/:username/events',
    '/users/:username/events/orgs/:org',
    '/users/:username/events/public',
    '/users/:username/received_events',
    '/users/:username/received_events/public',
  ]) {
    router.get(pattern, route, notCounted);
  }

  const sum = (pick: (b: FeedPollBook) => number) => [...books.values()].reduce((n, b) => n + pick(b), 0);

  return {
    options,
    /** Creates the feed now (its events start appearing from this moment). */
    ensure(feed: string): void {
      viewOf(feed);
    },
    /** Every event the feed has produced that this feed shows the authenticated user, oldest first. */
    produced(feed: string): Record<string, unknown>[] {
      const view = viewOf(feed);
      advance(view.stream, ctx.clock());
      return view.stream.events.filter(view.visible).map((e) => e.event);
    },
    /** The events currently in the feed, newest first (as page 1… would list them). */
    window(feed: string): Record<string, unknown>[] {
      const view = viewOf(feed);
      const now = ctx.clock();
      advance(view.stream, now);
      return windowOf(view.stream, now).filter(view.visible).reverse().map((e) => e.event);
    },
    /** Events that left the feed before any response carried them: no client could have delivered them. */
    droppedUnseen(feed: string): string[] {
      const view = viewOf(feed);
      const now = ctx.clock();
      advance(view.stream, now);
      const inWindow = new Set(windowOf(view.stream, now));
      return view.stream.events.filter((e) => view.visible(e) && !e.served && !inWindow.has(e)).map((e) => e.event.id);
    },
    /** Adds `count` events to the feed now. */
    burst(feed: string, count: number): void {
      const view = viewOf(feed);
      const now = ctx.clock();
      advance(view.stream, now);
      for (let i = 0; i < count; i++) view.stream.events.push(makeEvent(view.stream, now));
    },
    /** Changes the production rate (events per minute) of one feed, or of every feed. */
    setRate(perMinute: number, feed?: string): void {
      const now = ctx.clock();
      const targets = feed === undefined ? [...streams.values()] : [viewOf(feed).stream];
      if (feed === undefined) {
        globalRate = perMinute;
        rateOverrides.clear();
      } else rateOverrides.set(targets[0].key, perMinute);
      for (const s of targets) {
        advance(s, now);
        s.rate = perMinute;
        s.rateOrigin = now;
        s.rateCount = 0;
      }
    },
    /** Changes the `X-Poll-Interval` of one feed path, or of every feed. */
    setPollInterval(seconds: number, feed?: string): void {
      if (feed === undefined) {
        options.pollIntervalSeconds = seconds;
        intervalOverrides.clear();
      } else intervalOverrides.set(viewOf(feed).path, seconds);
    },
    /** The books of one feed path. */
    book(feed: string): FeedPollBook {
      return { ...bookFor(viewOf(feed).path) };
    },
    /** Totals over every feed. */
    totals(): FeedPollBook & { feeds: number } {
      return { feeds: books.size, polls: sum((b) => b.polls), notModified: sum((b) => b.notModified), earlyPolls: sum((b) => b.earlyPolls), extraPages: sum((b) => b.extraPages) };
    },
    // The events a page can still show (and which were served) survive, so a poller's cursor still finds its
    // place; older ones are no client's any more, and keeping them would grow the state file without end.
    durable: {
      snapshot: () => ({ startedAt, nextEventId, globalRate, intervalOverrides, books, lastPoll, rateOverrides, streams: new Map([...streams].map(([k, s]) => [k, { ...s, events: s.events.slice(-options.windowSize) }])) }),
      restore(saved: { startedAt: number; nextEventId: number; globalRate: number } & Record<string, Map<string, never>>) {
        refillAll({ streams, intervalOverrides, books, lastPoll, rateOverrides }, saved);
        ({ startedAt, nextEventId, globalRate } = saved);
      },
    } satisfies Durable,
  };
}
