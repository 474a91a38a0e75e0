/**
 * The pure decisions of feed polling: which feeds exist, when a run may poll, how pages are deduped and
 * where new events end, when the 300-event window may have dropped events, which ids to remember, and
 * the starter's sink syntax.
 */
import { describe, expect, it } from 'vitest';
import {
  FEED_WINDOW,
  POLL_SAFETY_MS,
  defaultEarlyWaitMs,
  earlyWaitOf,
  feedRunProblems,
  emptyScan,
  mergeKnownIds,
  parseFeed,
  parseSinkSpec,
  pollDecision,
  possibleGap,
  scanPage,
  sinkProblems,
  sinkTrustRefusal,
} from '../../src/processes/feed-poll/model';

describe('feed paths', () => {
  it('accepts every feed of the spec in any case and canonicalises it', () => {
    expect(parseFeed('repos/Octo-Org/Alpha/events')).toEqual({ kind: 'repo', path: '/repos/octo-org/alpha/events', params: { owner: 'octo-org', repo: 'alpha' } });
    expect(parseFeed('/events')).toMatchObject({ kind: 'public', path: '/events' });
    expect(parseFeed('/users/octocat/events/orgs/octo-org/')).toMatchObject({ kind: 'user-org', path: '/users/octocat/events/orgs/octo-org' });
    expect(parseFeed('/users/octocat/received_events/public')).toMatchObject({ kind: 'received-public' });
    expect(parseFeed('/networks/octo-org/alpha/events')).toMatchObject({ kind: 'network' });
  });

  it('rejects paths that are not feeds, naming the expected forms', () => {
    for (const bad of ['', '/repos/octo-org/events', '/orgs/octo-org/hooks', '/users/../events', '/users/a b/events']) {
      const parsed = parseFeed(bad);
      expect('problem' in parsed, bad).toBe(true);
    }
  });
});

describe('poll decision', () => {
  const cursor = { lastPolledAt: 1_000_000, pollIntervalSeconds: 60 };
  const due = 1_000_000 + 60_000 + POLL_SAFETY_MS;

  it('polls when it never polled or the interval (plus a safety margin) has passed', () => {
    expect(pollDecision({ pollIntervalSeconds: 60 }, 0)).toEqual({ kind: 'poll' });
    expect(pollDecision(cursor, due)).toEqual({ kind: 'poll' });
  });

  it('waits for the interval when it is due within the early wait, and skips when it is further away', () => {
    expect(pollDecision(cursor, due - 4_000, 5_000)).toEqual({ kind: 'wait', delayMs: 4_000, dueAt: due });
    expect(pollDecision(cursor, due - 6_000, 5_000)).toEqual({ kind: 'skip', dueAt: due });
    expect(pollDecision(cursor, 1_000_001, 0)).toEqual({ kind: 'skip', dueAt: due });
  });

  it('grants half the interval as early wait, at most ten seconds', () => {
    expect(defaultEarlyWaitMs(4)).toBe(2_000);
    expect(defaultEarlyWaitMs(60)).toBe(10_000);
  });

  it('reads the early wait as earlyWaitMs or as graceMs, its former name that stored Schedules carry, never both', () => {
    expect(earlyWaitOf({ earlyWaitMs: 3_000 })).toBe(3_000);
    expect(earlyWaitOf({ graceMs: 4_000 })).toBe(4_000);
    expect(earlyWaitOf({})).toBeUndefined();
    const run = { feed: '/repos/o/r/events', sink: { kind: 'file' as const } };
    expect(feedRunProblems({ ...run, earlyWaitMs: 3_000 })).toEqual([]);
    expect(feedRunProblems({ ...run, graceMs: 3_000 })).toEqual([]);
    expect(feedRunProblems({ ...run, earlyWaitMs: -1 })).toEqual(['earlyWaitMs must be a non-negative number']);
    expect(feedRunProblems({ ...run, earlyWaitMs: 3_000, graceMs: 3_000 })).toEqual(['give earlyWaitMs or graceMs (its former name), not both']);
  });
});

describe('window scan', () => {
  it('collects events until it meets a delivered id, deduping ids repeated across pages', () => {
    const known = new Set(['5', '4']);
    const scan = scanPage(emptyScan(), ['9', '8', '7'], known);
    expect(scan.overlap).toBe(false);
    // The feed moved while paging: page 2 starts with an event page 1 already had.
    scanPage(scan, ['7', '6', '5', '4'], known);
    expect(scan.fresh).toEqual(['9', '8', '7', '6']);
    expect(scan.windowIds).toEqual(['9', '8', '7', '6', '5', '4']);
    expect(scan.overlap).toBe(true);
    expect(scan.repeatedAcrossPages).toBe(1);
  });

  it('flags a possible gap only when the whole window is new after earlier deliveries and the window is full or stale', () => {
    const base = { knownCount: 10, overlap: false, freshCount: FEED_WINDOW, windowCount: FEED_WINDOW };
    expect(possibleGap(base)).toBe(true);
    expect(possibleGap({ ...base, overlap: true })).toBe(false);
    expect(possibleGap({ ...base, knownCount: 0 })).toBe(false);
    // Not full: nothing was pushed out by the cap…
    expect(possibleGap({ ...base, freshCount: 40, windowCount: 40 })).toBe(false);
    // …unless the last poll is older than the feed's 30 days.
    expect(possibleGap({ ...base, freshCount: 40, windowCount: 40, sinceLastPollMs: 31 * 24 * 3600_000 })).toBe(true);
  });

  it('remembers the newest window first and never more ids than a feed can hold', () => {
    expect(mergeKnownIds(['9', '8', '5'], ['5', '4', '3'])).toEqual(['9', '8', '5', '4', '3']);
    const many = Array.from({ length: 400 }, (_, i) => String(1000 - i));
    const merged = mergeKnownIds(many.slice(0, 10), many.slice(5));
    expect(merged).toHaveLength(FEED_WINDOW);
    expect(merged[0]).toBe('1000');
    expect(new Set(merged).size).toBe(FEED_WINDOW);
  });
});

describe('sink configuration', () => {
  it('parses the starter’s --sink forms', () => {
    expect(parseSinkSpec('file')).toEqual({ kind: 'file' });
    expect(parseSinkSpec('file:out/x.jsonl')).toEqual({ kind: 'file', path: 'out/x.jsonl' });
    expect(parseSinkSpec('https://hooks.example.test/in', 'hooks')).toEqual({ kind: 'http', url: 'https://hooks.example.test/in', secret: 'hooks' });
    expect(parseSinkSpec('logging:projects/p1/logs/feeds')).toEqual({ kind: 'logging', parent: 'projects/p1', logId: 'feeds' });
    expect(parseSinkSpec('logging:projects/p1')).toEqual({ kind: 'logging', parent: 'projects/p1' });
    expect('problem' in parseSinkSpec('ftp://x')).toBe(true);
  });

  it('refuses URLs that carry credentials and log parents of the wrong form', () => {
    expect(sinkProblems({ kind: 'http', url: 'https://user:pw@example.test/' })).toEqual([expect.stringMatching(/credentials/)]);
    expect(sinkProblems({ kind: 'http', url: 'https://example.test/', secretEnv: 'lower' })).toHaveLength(1);
    expect(sinkProblems({ kind: 'http', url: 'https://example.test/', secret: 'env:GITHUB_TOKEN' })).toHaveLength(1);
    expect(sinkProblems({ kind: 'logging', parent: 'projects/p/logs/x' })).toHaveLength(1);
    expect(sinkProblems({ kind: 'file' })).toEqual([]);
  });

  it('refuses a file path outside the data directory and a secretEnv other than the default secret’s variable, typed', () => {
    for (const path of ['/etc/passwd', '../../outside.jsonl', 'feeds/../../x', '~/x', 'C:\\x']) {
      expect(sinkTrustRefusal({ kind: 'file', path })).toMatchObject({ type: 'PathOutsideDataDir', nonRetryable: true });
      expect(sinkProblems({ kind: 'file', path })[0]).toMatch(/^file sink path must be a path relative to the worker's data directory \(LONGHAUL_DATA_DIR\)/);
    }
    expect(sinkTrustRefusal({ kind: 'file', path: 'feeds/a..b/x.jsonl' })).toBeUndefined();
    const refused = sinkTrustRefusal({ kind: 'http', url: 'https://hooks.example.test/in', secretEnv: 'AWS_SECRET_ACCESS_KEY' }, '/events');
    expect(refused).toMatchObject({ type: 'CredentialReferenceRefused', nonRetryable: true });
    expect(refused!.message).toContain('longhaul feed-schedule --feed /events --sink https://hooks.example.test/in --sink-secret NAME');
    expect(refused!.message).not.toContain('AWS_SECRET_ACCESS_KEY');
    // The default secret's own variable maps to the default secret: Schedules that spelled out the default keep working.
    expect(sinkTrustRefusal({ kind: 'http', url: 'https://hooks.example.test/in', secretEnv: 'LONGHAUL_SINK_SECRET' })).toBeUndefined();
  });
});
