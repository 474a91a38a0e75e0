/**
 * The outbound policy on the real stack (issue 35, item 2), through the Temporal client: an archive 302, an HTTP
 * sink URL and a `Link` that point at `0.0.0.0:<port of the test's own listener>` are refused with
 * `OutboundAddressRefused` before any connection: the listener, bound on 0.0.0.0 so that it WOULD see one, sees
 * none. A refused migration still unlocks its repositories. Link-local and private refusals are proven without
 * connecting (test/unit/outbound-policy.test.ts); nothing here leaves loopback.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { temporal } from '@temporalio/proto';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { FailureType } from '../../src/common/failures';
import type { FeedPollOutcome } from '../../src/processes/feed-poll/model';
import { feedCursorWorkflowId } from '../../src/processes/feed-poll/model';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { githubRetryPolicy } from '../../src/http/retry-policy';
import { useFeedStacks } from '../helpers/feed-stack';
import { scheduleRuns, triggerAndWait } from '../helpers/schedules';
import { expectFailure } from '../helpers/failures';
import { fetchHistory } from '../helpers/history';
import { FAST_POLL, QUICK_OUTAGE_BUDGET } from '../helpers/presets';

const startStack = useFeedStacks();
/** One failure is final inside an activity: a refusal that were taken for an outage would show at once. */
const noRetryPolicy = { ...githubRetryPolicy, maxTransientAttempts: 1 };
const OUTAGE = { ...QUICK_OUTAGE_BUDGET, budgetMs: 30_000 };

/** A listener of the test's own on every interface: it counts every connection that reaches it. */
let listener: { server: Server; port: number; connections: number } | undefined;
async function listenOnAllInterfaces(): Promise<NonNullable<typeof listener>> {
  const state = { connections: 0 } as NonNullable<typeof listener>;
  state.server = createServer((socket) => {
    state.connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => state.server.listen(0, '0.0.0.0', resolve));
  state.port = (state.server.address() as AddressInfo).port;
  listener = state;
  return state;
}
afterEach(async () => {
  await new Promise((resolve) => (listener ? listener.server.close(resolve) : resolve(undefined)));
  listener = undefined;
  delete process.env.LONGHAUL_SINK_SECRET;
});

/** The failure types of every failed activity attempt in a workflow's history. */
async function activityFailureTypes(client: Parameters<typeof fetchHistory>[0], workflowId: string): Promise<string[]> {
  const history = await fetchHistory(client, workflowId);
  return (history.events ?? [])
    .map((e: temporal.api.history.v1.IHistoryEvent) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type)
    .filter((t): t is string => typeof t === 'string');
}

function outboundFixture() {
  const fixture = defaultGithubFixture();
  fixture.accounts.push({ id: 1301, login: 'outbound-org', type: 'Organization' });
  return fixture;
}

describe('the outbound policy on the real stack', () => {
  it("refuses the archive 302 to http://0.0.0.0:<port>: OutboundAddressRefused, no connection, the repositories unlocked", async () => {
    const own = await listenOnAllInterfaces();
    const s = await startStack({ migrations: { exportMs: 200 } });
    s.emulator.setFaults([{ method: 'GET', path: '/orgs/:org/migrations/:id/archive', kind: 'redirect', location: `http://0.0.0.0:${own.port}/archive.tar.gz?X-Signature=abc` }]);
    const repositories = ['alpha', 'beta'];
    const run = s.client.workflow.execute(orgMigration, {
      taskQueue: s.taskQueue,
      workflowId: `outbound-archive-${Date.now()}`,
      args: [{ org: 'octo-org', repositories, lockRepositories: true, poll: FAST_POLL }],
    });

    const failure = await expectFailure(run, FailureType.OutboundRefused);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('rule unspecified');
    expect(failure.message).not.toContain('X-Signature');
    expect(own.connections).toBe(0);
    for (const repo of repositories) expect(s.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
  });

  it('refuses an HTTP sink at http://0.0.0.0:<port> before connecting: the batch stays pending, nothing reaches the listener', async () => {
    const own = await listenOnAllInterfaces();
    process.env.LONGHAUL_SINK_SECRET = 'sink-secret';
    const feed = '/orgs/outbound-org/events';
    const s = await startStack({ fixture: outboundFixture(), feeds: { eventsPerMinute: 0, initialEvents: 3, pollIntervalSeconds: 1 } }, noRetryPolicy);
    const scheduleId = await s.schedule({ feed, sink: { kind: 'http', url: `http://0.0.0.0:${own.port}/in` }, outage: OUTAGE });

    const outcome = await triggerAndWait<FeedPollOutcome>(s.client, scheduleId);
    expect(outcome).toMatchObject({ kind: 'sink-failed', pending: 3 });
    expect(outcome.kind === 'sink-failed' ? outcome.error : '').toContain('refused by the outbound policy, rule unspecified');
    const [runId] = await scheduleRuns(s.client, scheduleId);
    const types = [...(await activityFailureTypes(s.client, runId)), ...(await activityFailureTypes(s.client, feedCursorWorkflowId(feed)))];
    expect(types).toEqual([FailureType.OutboundRefused]);
    expect(own.connections).toBe(0);
  });

  it('refuses a Link to http://0.0.0.0:<port>: the run fails with OutboundAddressRefused at once, nothing reaches the listener', async () => {
    const own = await listenOnAllInterfaces();
    const feed = '/orgs/outbound-org/events';
    const s = await startStack({ fixture: outboundFixture(), feeds: { eventsPerMinute: 0, initialEvents: 3, pollIntervalSeconds: 1 } }, noRetryPolicy);
    s.emulator.setFaults([{ path: '/orgs/:org/events', kind: 'link', link: `http://0.0.0.0:${own.port}/orgs/outbound-org/events?page=2` }]);
    const scheduleId = await s.schedule({ feed, sink: { kind: 'file' }, outage: OUTAGE });

    const failure = await expectFailure(triggerAndWait<FeedPollOutcome>(s.client, scheduleId), FailureType.OutboundRefused);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('rule unspecified');
    expect(s.emulator.stats.faultsInjected).toBe(1);
    expect(own.connections).toBe(0);
  });
});
