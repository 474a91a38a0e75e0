/**
 * The emulated activity feeds over real HTTP on an injected clock: every feed path, ETags and 304s
 * that do not count against the primary limit, a changeable `X-Poll-Interval` with early polls counted,
 * events over time and in bursts, the 300-event window with `Link` pagination, and private events.
 */
import { describe, expect, it } from 'vitest';
import { parseLinkHeader } from '../../../src/http/api-client';
import { FEED_TEMPLATES } from '../../../src/processes/feed-poll/model';
import { EVENT_TYPES } from '../../../packages/emulator/src/github/feed-event-payloads';
import { call, clockedEmulators, messageOf } from '../../helpers/emulator-http';

const START = Date.UTC(2026, 3, 1, 9, 0, 0);
const em = clockedEmulators(START);

type Event = { id: string; type: string; actor: { login: string }; repo: { name: string }; payload: Record<string, unknown>; public: boolean; created_at: string; org?: { login: string } };
const events = (json: unknown) => json as Event[];

describe('emulated activity feeds', () => {
  it('serves every feed path of the spec with the documented event fields', async () => {
    const e = await em.start({ feeds: { initialEvents: 3 } });
    const params: Record<string, string> = { owner: 'octo-org', repo: 'alpha', org: 'octo-org', username: 'octocat' };
    for (const { template } of FEED_TEMPLATES) {
      const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => params[name]);
      const res = await call(e.apiUrl, 'GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.etag, path).toMatch(/^W\/"[0-9a-f]{40}"$/);
      expect(res.headers['x-poll-interval'], path).toBe('60');
      const list = events(res.json);
      expect(list.length, path).toBeGreaterThan(0);
      for (const ev of list) {
        expect(Object.keys(ev)).toEqual(expect.arrayContaining(['id', 'type', 'actor', 'repo', 'payload', 'public', 'created_at']));
        expect(EVENT_TYPES).toContain(ev.type);
      }
      const orgScoped = path.startsWith('/orgs/') || path.includes('/events/orgs/');
      expect(list.every((ev) => (ev.org?.login === 'octo-org') === orgScoped), path).toBe(true);
    }
    expect(events((await call(e.apiUrl, 'GET', '/repos/octo-org/alpha/events')).json).every((ev) => ev.repo.name === 'octo-org/alpha')).toBe(true);
  });

  it('answers 404 for feeds of names that do not exist and for another user’s organization dashboard', async () => {
    const e = await em.start();
    expect((await call(e.apiUrl, 'GET', '/repos/octo-org/nope/events')).status).toBe(404);
    expect((await call(e.apiUrl, 'GET', '/orgs/no-such-org/events')).status).toBe(404);
    expect((await call(e.apiUrl, 'GET', '/users/ghost/received_events')).status).toBe(404);
    await e.close();
    const other = await em.start({ feeds: { authenticatedUser: 'someone-else' } });
    expect((await call(other.apiUrl, 'GET', '/users/octocat/events/orgs/octo-org')).status).toBe(404);
  });

  it('answers a matching If-None-Match with 304 that does not count against the primary limit', async () => {
    const e = await em.start({ feeds: { eventsPerMinute: 0 } });
    const first = await call(e.apiUrl, 'GET', '/orgs/octo-org/events?per_page=100');
    expect(first.status).toBe(200);
    const usedAfterFirst = Number(first.headers['x-ratelimit-used']);
    const again = await call(e.apiUrl, 'GET', '/orgs/octo-org/events?per_page=100', { headers: { 'if-none-match': first.headers.etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['x-poll-interval']).toBe('60');
    expect(Number(again.headers['x-ratelimit-used'])).toBe(usedAfterFirst);
    // A stale ETag is a full, counted answer.
    const stale = await call(e.apiUrl, 'GET', '/orgs/octo-org/events?per_page=100', { headers: { 'if-none-match': 'W/"stale"' } });
    expect(stale.status).toBe(200);
    expect(Number(stale.headers['x-ratelimit-used'])).toBe(usedAfterFirst + 1);
    expect(e.feeds.book('/orgs/octo-org/events').notModified).toBe(1);
  });

  it('produces events over time at the configured rate and changes the ETag when they appear', async () => {
    const e = await em.start({ feeds: { eventsPerMinute: 6, initialEvents: 2 } });
    const first = await call(e.apiUrl, 'GET', '/repos/octo-org/beta/events');
    expect(events(first.json)).toHaveLength(2);
    em.now = START + 9_999;
    expect((await call(e.apiUrl, 'GET', '/repos/octo-org/beta/events', { headers: { 'if-none-match': first.headers.etag } })).status).toBe(304);
    em.now = START + 60_000;
    const later = await call(e.apiUrl, 'GET', '/repos/octo-org/beta/events', { headers: { 'if-none-match': first.headers.etag } });
    expect(later.status).toBe(200);
    const list = events(later.json);
    expect(list).toHaveLength(8);
    // Newest first, ids increasing with time.
    expect(list.map((ev) => Number(ev.id))).toEqual([...list.map((ev) => Number(ev.id))].sort((a, b) => b - a));
    expect(list[0].created_at).toBe(new Date(START + 60_000).toISOString());
    expect(e.feeds.produced('/repos/octo-org/beta/events')).toHaveLength(8);
  });

  it('keeps at most 300 events, paginates them with Link up to per_page 100, and counts events dropped unseen', async () => {
    const e = await em.start({ feeds: { eventsPerMinute: 0, initialEvents: 10 } });
    e.feeds.burst('/repos/octo-org/alpha/events', 350);
    const ids: string[] = [];
    let next: string | undefined = `${e.apiUrl}/repos/octo-org/alpha/events?per_page=100`;
    let pages = 0;
    while (next) {
      const res = await call(e.apiUrl, 'GET', next);
      expect(res.status).toBe(200);
      ids.push(...events(res.json).map((ev) => ev.id));
      next = parseLinkHeader(res.headers.link).next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(ids).toHaveLength(300);
    expect(new Set(ids).size).toBe(300);
    expect(e.feeds.droppedUnseen('/repos/octo-org/alpha/events')).toHaveLength(60);
    expect((await call(e.apiUrl, 'GET', '/repos/octo-org/alpha/events?per_page=100&page=4')).json).toEqual([]);
    const tooBig = await call(e.apiUrl, 'GET', '/repos/octo-org/alpha/events?per_page=101');
    expect(tooBig.status).toBe(422);
    expect(messageOf(tooBig)).toMatch(/per_page/);
  });

  it('applies scheduled bursts at their time and only to their feed', async () => {
    const e = await em.start({ feeds: { eventsPerMinute: 0, initialEvents: 0, bursts: [{ atMs: 30_000, count: 320, feed: '/orgs/octo-org/events' }] } });
    e.feeds.ensure('/orgs/octo-org/events');
    e.feeds.ensure('/repos/octo-org/gamma/events');
    em.now = START + 29_999;
    expect(e.feeds.window('/orgs/octo-org/events')).toHaveLength(0);
    em.now = START + 30_000;
    expect(e.feeds.window('/orgs/octo-org/events')).toHaveLength(300);
    expect(e.feeds.produced('/orgs/octo-org/events')).toHaveLength(320);
    expect(e.feeds.window('/repos/octo-org/gamma/events')).toHaveLength(0);
  });

  it('sends the X-Poll-Interval it is told to and counts polls that arrive before the last one allowed', async () => {
    const e = await em.start({ feeds: { pollIntervalSeconds: 5 } });
    const feed = '/users/octocat/received_events';
    expect((await call(e.apiUrl, 'GET', feed)).headers['x-poll-interval']).toBe('5');
    em.now = START + 4_999;
    await call(e.apiUrl, 'GET', feed);
    expect(e.feeds.book(feed).earlyPolls).toBe(1);
    e.feeds.setPollInterval(30, feed);
    em.now = START + 10_000;
    const slower = await call(e.apiUrl, 'GET', feed);
    expect(slower.headers['x-poll-interval']).toBe('30');
    expect(e.feeds.book(feed).earlyPolls).toBe(1);
    // The interval that counts is the one the previous answer carried (30 s now).
    em.now = START + 39_999;
    await call(e.apiUrl, 'GET', feed);
    expect(e.feeds.book(feed).earlyPolls).toBe(2);
    // Later pages of the same poll are not polls.
    await call(e.apiUrl, 'GET', `${feed}?page=2`);
    expect(e.feeds.book(feed)).toMatchObject({ polls: 4, earlyPolls: 2, extraPages: 1 });
  });

  it('shows private events only to their user and never on the public variants', async () => {
    const e = await em.start({ feeds: { initialEvents: 50, eventsPerMinute: 0, privateFraction: 0.3 } });
    const own = events((await call(e.apiUrl, 'GET', '/users/octocat/events?per_page=100')).json);
    const pub = events((await call(e.apiUrl, 'GET', '/users/octocat/events/public?per_page=100')).json);
    expect(own.some((ev) => !ev.public)).toBe(true);
    expect(pub.every((ev) => ev.public)).toBe(true);
    expect(pub.map((ev) => ev.id)).toEqual(own.filter((ev) => ev.public).map((ev) => ev.id));
    await e.close();
    const asOther = await em.start({ feeds: { initialEvents: 50, eventsPerMinute: 0, privateFraction: 0.3, authenticatedUser: 'someone-else' } });
    expect(events((await call(asOther.apiUrl, 'GET', '/users/octocat/events?per_page=100')).json).every((ev) => ev.public)).toBe(true);
  });
});

describe('emulated event sizes', () => {
  const sizes = (list: unknown[]) => list.map((ev) => Buffer.byteLength(JSON.stringify(ev)));

  it('serves realistic sizes by default: mostly a few KB, with a long tail up to 60 KB', async () => {
    const e = await em.start({ feeds: { eventsPerMinute: 0, initialEvents: 0 } });
    e.feeds.burst('/repos/octo-org/alpha/events', 300);
    const all = events(e.feeds.window('/repos/octo-org/alpha/events'));
    const s = sizes(all).sort((a, b) => a - b);
    const median = s[Math.floor(s.length / 2)];
    expect(median).toBeGreaterThan(1_000);
    expect(median).toBeLessThan(5_000);
    expect(s.at(-1)).toBeGreaterThan(20_000);
    expect(s.at(-1)).toBeLessThanOrEqual(60_000);
    expect(s.filter((n) => n > 8_000).length).toBeGreaterThan(10);
    // Large events fill their type's own text field (an issue's, comment's or discussion's body, a release's notes); pushes
    // carry no commits (as the seed and GitHub's description give them), so they stay small.
    const large = all.filter((ev) => Buffer.byteLength(JSON.stringify(ev)) > 8_000);
    expect(new Set(large.map((ev) => ev.type))).toEqual(new Set(['IssuesEvent', 'IssueCommentEvent', 'ReleaseEvent', 'DiscussionEvent']));
    const textOf = (ev: Event) => ((ev.payload.comment ?? ev.payload.issue ?? ev.payload.release ?? ev.payload.discussion) as { body: string }).body;
    for (const ev of large) expect(textOf(ev).length).toBeGreaterThan(Buffer.byteLength(JSON.stringify(ev)) - 6_000);
    expect(all.filter((ev) => ev.type === 'PushEvent').every((ev) => Object.keys(ev.payload).sort().join() === 'before,head,push_id,ref,repository_id')).toBe(true);
  });

  it('serves a fixed size per event when configured, over HTTP as well', async () => {
    const e = await em.start({ feeds: { eventsPerMinute: 0, initialEvents: 0, eventBytes: 40_000 } });
    e.feeds.burst('/orgs/octo-org/events', 12);
    const res = await call(e.apiUrl, 'GET', '/orgs/octo-org/events?per_page=100');
    const list = events(res.json);
    expect(list).toHaveLength(12);
    for (const n of sizes(list)) {
      expect(n).toBeGreaterThan(39_900);
      expect(n).toBeLessThanOrEqual(40_000);
    }
  });
});
