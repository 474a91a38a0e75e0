import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFeedActivities } from '../../src/processes/feed-poll/activities/feeds';
import type { ActivityDeps } from '../../src/activities/context';
import type { ApiClient } from '../../src/http/api-client';
import { pollDecision } from '../../src/processes/feed-poll/model';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a feed page’s timing', () => {
  it('records when the answer arrived, so a wait on the rate budget inside the call never makes the next poll early', async () => {
    dir = await mkdtemp(join(tmpdir(), 'longhaul-feed-timing-'));
    let now = 1_000_000;
    // The call waits 5 s on the fleet's budget before the request leaves, then the server answers 304.
    const github = {
      request: async () => {
        now += 5_000;
        return { status: 304, headers: { 'x-poll-interval': '6' }, body: undefined, url: '', notModified: true };
      },
    } as unknown as ApiClient;
    const deps = { github, dataDir: dir, clock: () => now } as unknown as ActivityDeps;
    const page = await createFeedActivities(deps).fetchFeedPage({ feed: '/events', etag: 'W/"x"' } as Parameters<ReturnType<typeof createFeedActivities>['fetchFeedPage']>[0]);
    expect(page.sentAt).toBe(1_000_000);
    expect(page.answeredAt).toBe(1_005_000);
    // The server counted the interval from no earlier than the request's arrival (≥ sentAt + 5 s): timed from
    // sentAt the next poll would be due 5 s early; timed from the answer it is not.
    const due = (polledAt: number, at: number) => pollDecision({ lastPolledAt: polledAt, pollIntervalSeconds: 6 }, at, 0);
    expect(due(page.sentAt, 1_005_000 + 6_000).kind).toBe('poll');
    expect(due(page.answeredAt!, 1_005_000 + 6_000).kind).not.toBe('poll');
  });
});
