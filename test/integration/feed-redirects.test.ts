/**
 * A feed poll that is redirected where the API client does not go (issue 28): to another origin, or in a loop.
 * Both are answers, not outages: the run fails at once with the failure's own type instead of waiting out its
 * outage budget, and nothing is sent to the other origin.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { FailureType, FAILURES } from '../../src/common/failures';
import type { FeedPollOutcome } from '../../src/processes/feed-poll/model';
import { useFeedStacks } from '../helpers/feed-stack';
import { scheduleRuns, triggerAndWait } from '../helpers/schedules';
import { timersStarted } from '../helpers/history';
import { causeChain, expectFailure } from '../helpers/failures';
import { githubRetryPolicy } from '../../src/http/retry-policy';
import { QUICK_OUTAGE_BUDGET } from '../helpers/presets';

const startFeedStack = useFeedStacks();
/** One failure is final inside the fetch activity, so an outage would show in the run at once (and be waited out). */
const noRetryPolicy = { ...githubRetryPolicy, maxTransientAttempts: 1 };
/** Long enough that a wait would show: a run that waited its outage out would fail after 30 s, not at once. */
const OUTAGE = { ...QUICK_OUTAGE_BUDGET, budgetMs: 30_000 };

/** The other origin: a real server that counts what reaches it and answers 502, an outage if it were the API's. */
let foreign: { server: Server; url: string; requests: string[] } | undefined;
async function startForeignOrigin(): Promise<NonNullable<typeof foreign>> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? 'no authorization'}`);
    res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  foreign = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
  return foreign;
}
afterEach(async () => {
  await new Promise((resolve) => foreign?.server.close(resolve) ?? resolve(undefined));
  foreign = undefined;
});

/** An organization of this file's own: feed Schedules and cursors are named by the feed across the dev server. */
function redirectFixture() {
  const fixture = defaultGithubFixture();
  fixture.accounts.push({ id: 1201, login: 'redirect-org', type: 'Organization' });
  return fixture;
}

describe('feed polls redirected where the API client does not go', () => {
  it('fails the run at once with ForeignOriginRefusedError when the feed redirects to another origin, sending nothing there', async () => {
    const feed = '/orgs/redirect-org/events';
    const other = await startForeignOrigin();
    const s = await startFeedStack({ fixture: redirectFixture(), feeds: { eventsPerMinute: 0, initialEvents: 3, pollIntervalSeconds: 1 } }, noRetryPolicy);
    s.emulator.setFaults([{ path: '/orgs/:org/events', kind: 'redirect', location: `${other.url}/orgs/redirect-org/events?per_page=100` }]);
    const scheduleId = await s.schedule({ feed, sink: { kind: 'file' }, outage: OUTAGE });

    const failure = await expectFailure(triggerAndWait<FeedPollOutcome>(s.client, scheduleId), FailureType.ForeignOrigin);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(`redirects to ${other.url}`);

    const [runId] = await scheduleRuns(s.client, scheduleId);
    const run = s.client.workflow.getHandle(runId);
    const chain = await run.result().catch((err: unknown) => causeChain(err));
    expect(JSON.stringify(chain)).not.toContain(FAILURES.outage.OutageBudgetExhausted.type);
    // Not waited out: the run took no outage wait, the cursor counted no unavailable poll, and the API was asked once.
    expect(await timersStarted(run)).toEqual([]);
    const cursor = await s.cursor(feed);
    expect(cursor.counters).toMatchObject({ unavailable: 0, polls: 0, delivered: 0 });
    expect(s.emulator.stats.faultsInjected).toBe(1);
    expect(other.requests).toEqual([]);
  });

  it('fails the run at once with TooManyRedirectsError when the feed redirects in a loop', async () => {
    const feed = '/repos/redirect-org/loop/events';
    const fixture = redirectFixture();
    const alpha = fixture.repositories.find((r) => r.owner === 'octo-org' && r.name === 'alpha')!;
    fixture.repositories.push({ ...alpha, id: 2201, owner: 'redirect-org', name: 'loop' });
    const s = await startFeedStack({ fixture, feeds: { eventsPerMinute: 0, initialEvents: 3, pollIntervalSeconds: 1 } }, noRetryPolicy);
    // No location: the request's own URL, again and again.
    s.emulator.setFaults([{ path: '/repos/:owner/:repo/events', kind: 'redirect', status: 307 }]);
    const scheduleId = await s.schedule({ feed, sink: { kind: 'file' }, outage: OUTAGE });

    const failure = await expectFailure(triggerAndWait<FeedPollOutcome>(s.client, scheduleId), FailureType.TooManyRedirects);
    expect(failure.nonRetryable).toBe(true);

    const [runId] = await scheduleRuns(s.client, scheduleId);
    expect(await timersStarted(s.client.workflow.getHandle(runId))).toEqual([]);
    expect((await s.cursor(feed)).counters).toMatchObject({ unavailable: 0, polls: 0 });
    // One poll: the first request and the core's five hops, then no retry.
    expect(s.emulator.stats.faultsInjected).toBe(6);
  });
});
