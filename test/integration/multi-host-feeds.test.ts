/**
 * Feeds and hook repair on a fleet of two worker PROCESSES with separate data directories (nothing shared on
 * disk, as on two machines), against the dev server and the emulator, with one worker SIGKILLed mid-way (issue
 * 26, item 4). The emulator holds one request of the run until the test has killed the worker that matters, so
 * the crash always lands at the same step.
 *
 * - A feed poll of 250 events (3 pages): the worker that fetched page 1 (whose spool holds its events) dies while
 *   page 2 is in flight; the other finishes. Every event reaches the sink exactly once, the pass that delivered
 *   (fetch and delivery) ran on one worker, and the feed is fetched once more, not in a loop. Then the killed
 *   worker is started again on its data directory. (Before the poll's later steps
 *   went to the worker that fetched page 1, the delivery read another worker's empty spool: `FeedSpoolMissing`.)
 * - A hook repair of 5 failed deliveries on the same pair: the worker whose redelivery the server has made, but
 *   whose answer is still on the way, dies; the other finishes. Every failed delivery is redelivered exactly once.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { startSinkReceiver } from '../../packages/emulator/src/sink/receiver';
import { describeFeedOutcome, feedCursorWorkflowId, type FeedPollOutcome } from '../../src/processes/feed-poll/model';
import type { HookRepairResult } from '../../src/processes/hook-repair/model';
import { feedPollRun } from '../../src/processes/feed-poll/workflow';
import { hookRepair } from '../../src/processes/hook-repair/workflow';
import { requestsTo } from '../helpers/emulator';
import { useFleetTeardown } from '../helpers/fleet';
import { activityWorkers, hostOf, runningActivities, startHosts, githubHostEnv } from '../helpers/multi-host';
import { waitFor } from '../helpers/wait';

const fleet = useFleetTeardown();

const ORG = 'multihost-org';
const FEED = `/repos/${ORG}/alpha/events`;
const FEED_ROUTE = '/repos/:owner/:repo/events';
const SECRET = 'multihost';
/** Long enough for the test to kill the worker while the request is held; short enough not to slow a run that survives. */
const HOLD_MS = 20_000;
/**
 * The repair's call timeout: the redelivery lost with the killed worker is tried again (and found made) once it has
 * passed, 10 s instead of the default minute that was most of this file's time.
 */
const CALL_TIMEOUT_MS = 10_000;

describe('a fleet of two hosts with separate data directories', () => {
  it('delivers every feed event once and redelivers every failed hook delivery once, with a worker SIGKILLed mid-way in each', async () => {
    const fixture = defaultGithubFixture();
    fixture.accounts.push({ id: 2601, login: ORG, type: 'Organization' });
    fixture.repositories.push({ id: 2602, name: 'alpha', owner: ORG, private: false, workflowsEnabled: false });
    const e = await fleet.emulator({
      fixture,
      feeds: { eventsPerMinute: 0, initialEvents: 0, pollIntervalSeconds: 1 },
      faults: [
        // Page 2 of the first poll (the feed's second request) is held before it is answered.
        { method: 'GET', path: FEED, kind: 'slow', delayMs: HOLD_MS, every: 2, times: 1 },
        // The second redelivery is made, but its answer is held.
        { method: 'POST', path: '/attempts', kind: 'slow', delayMs: HOLD_MS, afterProcessing: true, every: 2, times: 1 },
      ],
    });
    const secret = `sink-${randomUUID()}`;
    const receiver = await startSinkReceiver({ secret });
    fleet.closeLater(() => receiver.close());
    const client = await fleet.client();
    const taskQueue = `multi-host-${randomUUID()}`;
    const hosts = await startHosts(fleet, 2, {
      taskQueue,
      env: {
        ...githubHostEnv(e.apiUrl, 'hosts'),
        LONGHAUL_SINK_SECRETS: SECRET,
        LONGHAUL_SINK_MULTIHOST_SECRET: secret,
      },
    });

    // The feed: 250 new events, three pages.
    e.feeds.ensure(FEED);
    e.feeds.burst(FEED, 250);
    const cursor = fleet.track(client.workflow.getHandle(feedCursorWorkflowId(FEED)));
    const poll = fleet.track(
      await client.workflow.start(feedPollRun, {
        taskQueue,
        workflowId: `multi-host-feed-${randomUUID()}`,
        args: [{ feed: FEED, sink: { kind: 'http', url: `${receiver.url}/events`, secret: SECRET }, origin: 'manual' }],
      }),
    );
    await waitFor('page 2 of the poll to reach the emulator (and be held)', () => requestsTo(e, 'GET', FEED_ROUTE), (n) => n >= 2, 120_000, 50);
    const [firstFetch] = (await activityWorkers(cursor)).filter((a) => a.activity === 'fetchFeedPage');
    const fetcher = hostOf(hosts, firstFetch?.identity);
    expect(fetcher, `the worker that fetched page 1 (${firstFetch?.identity})`).toBeDefined();
    await fetcher!.kill();

    // The other host finishes the poll (restarted before, the killed host would find page 1 in its own spool).
    const outcome = await poll.result();
    expect(outcome, describeFeedOutcome(outcome).join('\n')).toMatchObject({ kind: 'delivered', delivered: 250, pages: 3, workerRestarts: 1 } satisfies Partial<FeedPollOutcome>);
    const produced = e.feeds.produced(FEED).map((ev) => String(ev.id));
    expect(receiver.eventIds(FEED)).toEqual(produced);
    expect(receiver.stats.resentEvents).toBe(0);
    // Page 1 twice (the lost pass and the one that delivered), then nothing: no refetch loop.
    expect(e.feeds.book(FEED).polls).toBe(2);
    expect(requestsTo(e, 'GET', FEED_ROUTE)).toBeLessThanOrEqual(6);
    // The pass that delivered ran on one host from its first fetch to its delivery.
    const ran = await activityWorkers(cursor);
    const lastPass = ran.slice(-4);
    expect(lastPass.map((a) => a.activity)).toEqual(['fetchFeedPage', 'fetchFeedPage', 'fetchFeedPage', 'deliverFeedEvents']);
    const passHosts = lastPass.map((a) => hostOf(hosts, a.identity)?.name);
    expect(passHosts.every((name) => name !== undefined)).toBe(true);
    expect(new Set(passHosts).size).toBe(1);

    // The hook repair, on the same pair: the killed host restarted on its data directory, and the other.
    await fetcher!.restart();
    const { id: hookId } = e.hooks.create({ org: ORG }, { url: 'https://receiver.example.test/hook' });
    const now = Date.now();
    const failed = Array.from({ length: 5 }, (_, i) => e.hooks.addDelivery(hookId, { at: now - 60_000 + i * 1000, statusCode: 502 }));
    const repair = fleet.track(await client.workflow.start(hookRepair, { taskQueue, workflowId: `multi-host-hook-${randomUUID()}`, args: [{ target: { org: ORG }, hookId, apiCallTimeoutMs: CALL_TIMEOUT_MS }] }));
    await waitFor('the second redelivery to be made (its answer held)', () => e.hooks.redeliveries().length, (n) => n >= 2, 120_000, 50);
    const held = await waitFor(
      'the worker running the held redelivery',
      async () => (await runningActivities(repair)).find((a) => a.activity === 'redeliverHookDelivery' && a.identity !== undefined),
      (a) => a !== undefined,
      30_000,
      50,
    );
    const sender = hostOf(hosts, held!.identity);
    expect(sender, `the worker running the held redelivery (${held!.identity})`).toBeDefined();
    await sender!.kill();

    const repaired: HookRepairResult = await repair.result();
    expect(repaired.counts).toMatchObject({ failed: 5, redelivered: 5, notAccepted: 0 });
    const redelivered = e.hooks.redeliveries().map((r) => r.guid);
    expect(redelivered).toHaveLength(5);
    expect([...redelivered].sort()).toEqual(failed.map((d) => d.guid).sort());
    console.log(
      `[multi-host] feed: ${outcome.kind === 'delivered' ? outcome.delivered : 0} events delivered once after ${outcome.workerRestarts ?? 0} restart(s); ` +
        `${e.feeds.book(FEED).polls} page-1 requests, ${requestsTo(e, 'GET', FEED_ROUTE)} feed requests in all; ` +
        `hook: ${redelivered.length} redeliveries for ${failed.length} failed guids (${fetcher!.name} killed and restarted, then ${sender!.name} killed)`,
    );
  });
});
