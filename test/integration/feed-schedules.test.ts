/**
 * Feed polling on real Temporal Schedules (dev server), against the emulator with its poll interval
 * scaled down to seconds: exactly-once delivery across many runs and a worker restart, the 304 path,
 * the early-fire skip and a growing interval, gap detection after a burst beyond the window, signature
 * verification at the receiver with sink retries that neither lose nor duplicate, and Cloud Logging.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Emulator } from '@longhaul/emulator';
import { startSinkReceiver, type SinkReceiver } from '../../packages/emulator/src/sink/receiver';
import { defaultSinkFile, feedCursorWorkflowId, POLL_SAFETY_MS, type FeedPollOutcome, type SinkConfig } from '../../src/processes/feed-poll/model';
import { feedCursor, feedPollRun } from '../../src/processes/feed-poll/workflow';
import { TEST_TOKEN } from '../helpers/emulator';
import { call } from '../helpers/emulator-http';
import { testGithubApiVersion } from '../helpers/api-version';
import { useFeedStacks, type FeedStack } from '../helpers/feed-stack';
import { cleanUp, scheduleRuns, triggerAndWait } from '../helpers/schedules';
import { HANG_GUARD_MS, waitFor } from '../helpers/wait';

/** Polls per cursor run in the continue-as-new test. */
const POLLS_PER_RUN = 5;

let receivers: SinkReceiver[] = [];
// Registered before the stacks' own: runs after them (vitest runs after-hooks in reverse order), as before.
afterEach(async () => {
  for (const r of receivers) await r.close();
  receivers = [];
});
const startFeedStack = useFeedStacks();

async function receiver(secret: string): Promise<SinkReceiver> {
  const r = await startSinkReceiver({ secret });
  receivers.push(r);
  return r;
}

/** Waits until `at` (epoch ms) by the clock the workflows read: a time the product named, not a guess at how long work takes. */
const until = (what: string, at: number) => waitFor(what, () => Date.now(), (now) => now >= at, Math.max(0, at - Date.now()) + 60_000, 50);

/**
 * Waits until the feed's cursor lets the next poll through (`nextPollAt`, the last poll plus the server's interval, and
 * the cursor's safety margin): the poll after it polls, neither skipped nor waiting. (Fixed sleeps of 1.4 s stood here.)
 */
async function untilDue(s: FeedStack, feed: string): Promise<void> {
  const { nextPollAt } = await s.cursor(feed);
  await until(`the next poll of ${feed} to be due`, Date.parse(nextPollAt!) + POLL_SAFETY_MS);
}

/** A one-off `feed-poll` once the server's interval has passed (the last events after production stopped). */
async function pollOnceMore(s: FeedStack, feed: string, sink: SinkConfig): Promise<FeedPollOutcome> {
  await untilDue(s, feed);
  return s.client.workflow.execute(feedPollRun, { taskQueue: s.taskQueue, workflowId: `feed-poll-final-${Date.now()}`, args: [{ feed, sink, origin: 'manual' }] });
}
const usedQuota = (e: Emulator) => Number(e.rateLimiter.headers(TEST_TOKEN, Date.now())['x-ratelimit-used']);

describe('feed polling on Temporal Schedules', () => {
  it('delivers every event exactly once, in order, across many scheduled runs and a worker restart', async () => {
    const feed = '/repos/octo-org/alpha/events';
    process.env.LONGHAUL_SINK_SECRETS = 'it1,it2,it3';
    process.env.LONGHAUL_SINK_IT1_SECRET = 'restart-secret';
    const s = await startFeedStack({ feeds: { eventsPerMinute: 120, initialEvents: 20, pollIntervalSeconds: 1 } });
    // Slow feed answers, so the restart below most likely interrupts a poll in flight.
    s.emulator.setFaults([{ kind: 'slow', path: '/repos/:owner/:repo/events', delayMs: 600 }]);
    const r = await receiver('restart-secret');
    const scheduleId = await s.schedule({ feed, sink: { kind: 'http', url: `${r.url}/hook`, secret: 'it1' } }, 1000);

    await waitFor('five scheduled runs', () => scheduleRuns(s.client, scheduleId), (ids) => ids.length >= 5, HANG_GUARD_MS);
    await s.stopWorker();
    // Events keep appearing while no worker runs (four more, two seconds' worth); the schedule's runs wait for one.
    const producedAtStop = s.emulator.feeds.produced(feed).length;
    await waitFor('events produced while no worker runs', () => s.emulator.feeds.produced(feed).length, (n) => n >= producedAtStop + 4, HANG_GUARD_MS, 50);
    await s.startWorker();
    // The schedule keeps only its latest actions (10), so count runs not seen before rather than the list's length.
    const runsBefore = new Set(await scheduleRuns(s.client, scheduleId));
    await waitFor('five more runs', () => scheduleRuns(s.client, scheduleId), (ids) => ids.filter((id) => !runsBefore.has(id)).length >= 5, HANG_GUARD_MS);

    s.emulator.feeds.setRate(0, feed);
    const produced = s.emulator.feeds.produced(feed).map((e) => String(e.id));
    await waitFor('every produced event at the receiver', () => r.eventIds(feed).length, (n) => n >= produced.length, HANG_GUARD_MS);
    // Nothing more arrives: a whole scheduled run started after the last delivery ends without sending anything again.
    const runsSoFar = new Set(await scheduleRuns(s.client, scheduleId));
    const after = await waitFor('a scheduled run after the last delivery', () => scheduleRuns(s.client, scheduleId), (ids) => ids.some((id) => !runsSoFar.has(id)), HANG_GUARD_MS);
    await s.client.workflow.getHandle(after.filter((id) => !runsSoFar.has(id)).at(-1)!).result();

    expect(produced.length).toBeGreaterThan(30);
    expect(s.emulator.feeds.droppedUnseen(feed)).toEqual([]);
    expect(r.eventIds(feed)).toEqual(produced);
    // A batch is only ever re-sent as itself (a retry); no new batch carries an event already delivered.
    const deliveries = new Set<string>();
    for (const b of r.batches) {
      if (b.alreadyStored > 0) expect(deliveries.has(b.delivery)).toBe(true);
      deliveries.add(b.delivery);
    }
    expect(r.stats.badSignatures).toBe(0);
    const status = await s.cursor(feed);
    expect(status.counters.delivered).toBe(produced.length);
    expect(status.counters.gaps).toBe(0);
  });

  it('carries the cursor across continue-as-new: no event lost or repeated when a cursor run ends every 5 polls', async () => {
    const feed = '/users/octocat/events';
    const s = await startFeedStack({ feeds: { eventsPerMinute: 90, initialEvents: 5, pollIntervalSeconds: 1 } });
    const r = await receiver('can-secret');
    process.env.LONGHAUL_SINK_SECRETS = 'it1,it2,it3';
    process.env.LONGHAUL_SINK_IT3_SECRET = 'can-secret';
    const sink: SinkConfig = { kind: 'http', url: r.url, secret: 'it3' };
    // The cursor started before the Schedule's first run (which then uses it), ending a run every 5 polls, not
    // the default 20: the Schedule's runs come about every 2 s, so a run's end is seen in seconds.
    s.track(feed);
    const { firstExecutionRunId: firstRun } = await s.client.workflow.start(feedCursor, { workflowId: feedCursorWorkflowId(feed), taskQueue: s.taskQueue, args: [{ feed, pollsPerRun: POLLS_PER_RUN }] });
    const scheduleId = await s.schedule({ feed, sink }, 1000);
    const cursor = s.client.workflow.getHandle(feedCursorWorkflowId(feed));
    await waitFor('more than 5 polls', () => s.cursor(feed).then((st) => st.counters.polls), (n) => n > POLLS_PER_RUN + 2, 90_000, 1_000);
    await cleanUp(s.client, [scheduleId]);
    s.emulator.feeds.setRate(0, feed);
    await pollOnceMore(s, feed, sink);
    const status = await s.cursor(feed);
    expect((await cursor.describe()).runId).not.toBe(firstRun);
    expect(status.pollsThisRun).toBeLessThan(status.counters.polls);
    expect(r.eventIds(feed)).toEqual(s.emulator.feeds.produced(feed).map((e) => String(e.id)));
    expect(r.stats.resentEvents).toBe(0);
    expect(status.counters.delivered).toBe(r.events.size);
  });

  it('ends a poll cheaply on 304, skips runs that fire before the server’s interval, and respects a growing interval', async () => {
    const feed = '/repos/octo-org/beta/events';
    const s = await startFeedStack({ feeds: { eventsPerMinute: 0, initialEvents: 4, pollIntervalSeconds: 4 } });
    const scheduleId = await s.schedule({ feed, sink: { kind: 'file' } });

    const first = await triggerAndWait<FeedPollOutcome>(s.client, scheduleId);
    expect(first).toMatchObject({ kind: 'delivered', delivered: 4, pollIntervalSeconds: 4 });
    const quotaAfterFirst = usedQuota(s.emulator);

    // The second poll's answer asks for 10 s: the early run below has 10 s to come, not the 4 s it had when this
    // test failed on a loaded machine (its trigger came after the 4 s had passed).
    s.emulator.feeds.setPollInterval(10, feed);
    await untilDue(s, feed);
    const second = await triggerAndWait<FeedPollOutcome>(s.client, scheduleId);
    expect(second).toMatchObject({ kind: 'not-modified', pollIntervalSeconds: 10 });
    expect(usedQuota(s.emulator)).toBe(quotaAfterFirst);

    // Fired soon after a poll (`triggerAndWait` lets a second begin: scheduled runs are named by the second): no API
    // call, recorded as skipped.
    const third = await triggerAndWait<FeedPollOutcome>(s.client, scheduleId);
    expect(third).toMatchObject({ kind: 'skipped', reason: 'early' });
    const dueAt = Date.parse(third.kind === 'skipped' ? third.dueAt : '');
    expect(dueAt).toBeGreaterThan(Date.now());
    // A one-off `feed-poll` shares the cursor: it is early too.
    const oneOff = await s.client.workflow.execute(feedPollRun, {
      taskQueue: s.taskQueue,
      workflowId: `feed-poll-once-${Date.now()}`,
      args: [{ feed, sink: { kind: 'file' }, origin: 'manual' }],
    });
    expect(oneOff.kind).toBe('skipped');
    expect(s.emulator.feeds.book(feed)).toMatchObject({ polls: 2, notModified: 1, earlyPolls: 0 });

    // The server asks for more time: the next poll learns it, and runs before it has passed are skipped.
    s.emulator.feeds.setPollInterval(30, feed);
    await until('the 10 s interval to pass', dueAt);
    const fourth = await triggerAndWait<FeedPollOutcome>(s.client, scheduleId);
    expect(fourth).toMatchObject({ kind: 'not-modified', pollIntervalSeconds: 30 });
    // Past the first interval (4 s) since that poll, well inside the 30 s one: still skipped.
    const { lastPolledAt } = await s.cursor(feed);
    await until('4 s since the last poll', Date.parse(lastPolledAt!) + 4_000 + POLL_SAFETY_MS);
    const fifth = await triggerAndWait<FeedPollOutcome>(s.client, scheduleId);
    expect(fifth.kind).toBe('skipped');
    expect(s.emulator.feeds.book(feed)).toMatchObject({ polls: 3, earlyPolls: 0 });
    const status = await s.cursor(feed);
    expect(status.counters).toMatchObject({ polls: 3, notModified: 2, skippedEarly: 3, delivered: 4 });

    const lines = (await readFile(join(s.deps.dataDir, defaultSinkFile(feed)), 'utf8')).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { event: { id: string } }).event.id)).toEqual(s.emulator.feeds.produced(feed).map((e) => String(e.id)));
  });

  it('reports a counted gap when a burst beyond 300 events pushed undelivered events out of the window', async () => {
    const feed = '/repos/octo-org/gamma/events';
    const s = await startFeedStack({ feeds: { eventsPerMinute: 0, initialEvents: 10, pollIntervalSeconds: 1 } });
    const scheduleId = await s.schedule({ feed, sink: { kind: 'file' } });
    expect(await triggerAndWait<FeedPollOutcome>(s.client, scheduleId)).toMatchObject({ kind: 'delivered', delivered: 10, possibleGap: false });

    s.emulator.feeds.burst(feed, 350);
    await untilDue(s, feed);
    const afterBurst = await triggerAndWait<FeedPollOutcome>(s.client, scheduleId);
    expect(afterBurst).toMatchObject({ kind: 'delivered', delivered: 300, pages: 3, possibleGap: true });
    expect(afterBurst.counters.gaps).toBe(1);
    const dropped = s.emulator.feeds.droppedUnseen(feed);
    expect(dropped).toHaveLength(50);

    // Back to normal: a few new events overlap with what was delivered, no gap.
    s.emulator.feeds.burst(feed, 5);
    await untilDue(s, feed);
    expect(await triggerAndWait<FeedPollOutcome>(s.client, scheduleId)).toMatchObject({ kind: 'delivered', delivered: 5, possibleGap: false, pages: 1 });

    const lines = (await readFile(join(s.deps.dataDir, defaultSinkFile(feed)), 'utf8')).trim().split('\n');
    const written = lines.map((l) => (JSON.parse(l) as { event: { id: string } }).event.id);
    const produced = s.emulator.feeds.produced(feed).map((e) => String(e.id));
    expect(new Set(written).size).toBe(written.length);
    expect(written).toEqual(produced.filter((id) => !dropped.includes(id)));
    expect((await s.cursor(feed)).counters.gaps).toBe(1);
  });

  it('signs batches for the receiver, which refuses a wrong signature, and retries a failing sink without losing or duplicating events', async () => {
    const feed = '/users/octocat/received_events';
    const s = await startFeedStack({ feeds: { eventsPerMinute: 0, initialEvents: 12, pollIntervalSeconds: 1 } });
    const r = await receiver('the-right-secret');
    process.env.LONGHAUL_SINK_SECRETS = 'it1,it2,it3';
    process.env.LONGHAUL_SINK_IT2_SECRET = 'a-wrong-secret';
    const scheduleId = await s.schedule({ feed, sink: { kind: 'http', url: `${r.url}/events`, secret: 'it2' } });

    const refused = await triggerAndWait<FeedPollOutcome>(s.client, scheduleId);
    expect(refused).toMatchObject({ kind: 'sink-failed', pending: 12 });
    expect(refused.kind === 'sink-failed' ? refused.error : '').toMatch(/401/);
    expect(r.stats.badSignatures).toBe(1);
    expect(r.events.size).toBe(0);

    // Fixed secret; the receiver stores the batch but fails to answer once, then is down once.
    process.env.LONGHAUL_SINK_SECRETS = 'it1,it2,it3';
    process.env.LONGHAUL_SINK_IT2_SECRET = 'the-right-secret';
    r.failNext({ when: 'after-store', times: 1, status: 500 });
    r.failNext({ when: 'before-store', times: 1, status: 503 });
    s.emulator.feeds.burst(feed, 3);
    await untilDue(s, feed);
    const delivered = await triggerAndWait<FeedPollOutcome>(s.client, scheduleId);
    expect(delivered).toMatchObject({ kind: 'delivered', delivered: 15 });
    expect(r.stats.injectedFailures).toBe(2);
    expect(r.stats.resentEvents).toBe(15);
    expect(r.eventIds(feed)).toEqual(s.emulator.feeds.produced(feed).map((e) => String(e.id)));
    expect((await s.cursor(feed)).counters).toMatchObject({ sinkFailures: 1, delivered: 15 });
  });

  it('writes one Cloud Logging entry per event with labels for the feed and the event type', async () => {
    const feed = '/orgs/octo-org/events';
    const s = await startFeedStack({ feeds: { eventsPerMinute: 0, initialEvents: 7, pollIntervalSeconds: 1 } });
    const scheduleId = await s.schedule({ feed, sink: { kind: 'logging', parent: 'projects/demo-project', logId: 'github-feeds' } });
    expect(await triggerAndWait<FeedPollOutcome>(s.client, scheduleId)).toMatchObject({ kind: 'delivered', delivered: 7 });
    const produced = s.emulator.feeds.produced(feed);
    const entries = s.emulator.loggingEntries.entries('projects/demo-project/logs/github-feeds');
    expect(entries.map((e) => e.insertId)).toEqual(produced.map((e) => String(e.id)));
    // Each entry's payload is the event as the API served it under this file's REST API version (2026-03-10
    // serves events without fields 2022-11-28 has, such as an issue's `assignee`).
    const served = (await call(s.emulator.apiUrl, 'GET', feed, { headers: { 'x-github-api-version': testGithubApiVersion() } })).json as { id: string }[];
    const servedById = new Map(served.map((e) => [String(e.id), e]));
    for (const [i, entry] of entries.entries()) {
      expect(entry.labels).toEqual({ feed, event_type: produced[i].type });
      expect(entry.jsonPayload).toEqual(servedById.get(String(produced[i].id)));
      expect(entry.timestamp).toBe(produced[i].created_at);
    }
  });
});
