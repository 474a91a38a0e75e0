/**
 * One rate budget for a fleet of worker PROCESSES (spawned as `npm run worker` does, not in-process):
 * a limit one worker learns stops the other, a worker that joins the work during a known wait sends nothing until it
 * ends, and a 422 "spammed" on one hook closes content creation for every hook. Each worker is judged by what
 * it knew: its `limit-learned` log lines against the requests it sent (`fleet-news.ts`), both on its own clock,
 * so a slow machine delays the news but cannot fail the test; how long the news took is printed.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { EmulatorOptions } from '@longhaul/emulator';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { governorWorkflowId, limitsQuery } from '../../src/processes/rate-governor/model';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { hookRepair } from '../../src/processes/hook-repair/workflow';
import { TEST_TOKEN } from '../helpers/emulator';
import { useFleetTeardown } from '../helpers/fleet';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { waitFor } from '../helpers/wait';
import { everySendRecorded, limitsLearned, newsDelays, sentRequests, sentWhileKnownLimited } from '../helpers/fleet-news';
import { FAST_POLL } from '../helpers/presets';
import type { PollBounds } from '../../src/common/poll-schedule';

const fleet = useFleetTeardown();

async function setUp(options: EmulatorOptions, repos: number) {
  const fixture = defaultGithubFixture();
  for (let i = 0; i < repos; i++) fixture.repositories.push({ id: 7000 + i, name: `repo-${i}`, owner: 'octo-org', private: false, workflowsEnabled: false });
  const emulator = await fleet.emulator({ fixture, ...options });
  const client = await fleet.client();
  const credential = `fleet-${randomUUID().slice(0, 8)}`;
  const env = (taskQueue: string, extra: Record<string, string> = {}) => ({
    LONGHAUL_TASK_QUEUE: taskQueue,
    LONGHAUL_GITHUB_CREDENTIAL: credential,
    GITHUB_API_URL: emulator.apiUrl,
    GITHUB_TOKEN: TEST_TOKEN,
    LONGHAUL_DATA_DIR: `/tmp/longhaul-fleet-test-${credential}`,
    LONGHAUL_LOG_FORMAT: 'json',
    ...extra,
  });
  return { e: emulator, c: client, credential, env };
}

async function startMigration(c: Client, taskQueue: string, repositories: string[], poll: PollBounds = FAST_POLL) {
  const handle = await c.workflow.start(orgMigration, {
    taskQueue,
    workflowId: `fleet-migration-${randomUUID()}`,
    args: [{ org: 'octo-org', repositories, lockRepositories: true, poll }],
  });
  return fleet.track(handle);
}

/** The identities (`pid@host`) of the workers that ran a workflow's activities. */
async function activityWorkers(handle: WorkflowHandle): Promise<Set<string>> {
  const { events } = await handle.fetchHistory();
  return new Set((events ?? []).map((e) => e.activityTaskStartedEventAttributes?.identity).filter((id): id is string => Boolean(id)));
}

const pidOf = (w: WorkerProcess) => `${w.pid}@`;

/** Worker processes that record what they send (`sent-requests.cjs`). */
const RECORD = { recordSends: true };

describe('one rate budget for the whole fleet', () => {
  it('stops every worker process once one of them is told it is limited', async () => {
    const { e, c, env } = await setUp(
      { migrations: { exportMs: [1_000, 4_000], archiveBytes: 4_096 }, rateLimit: { secondary: { pointsPerWindow: 8, windowMs: 2_000, retryAfter: true, status: 403 } } },
      16,
    );
    const taskQueue = `fleet-${randomUUID()}`;
    const workers = await Promise.all([startWorkerProcess(env(taskQueue), RECORD), startWorkerProcess(env(taskQueue), RECORD)]);
    const runs = [];
    for (let w = 0; w < 8; w++) runs.push(await startMigration(c, taskQueue, [`repo-${2 * w}`, `repo-${2 * w + 1}`]));
    const results = await Promise.all(runs.map((h) => h.result()));

    expect(results.map((r) => r.unlockedRepositories.length)).toEqual(Array(8).fill(2));
    // The limit was really in play, and both processes did the work…
    expect(e.stats.rateLimited.secondary).toBeGreaterThan(0);
    const identities = [...(await Promise.all(runs.map(activityWorkers)))].flatMap((s) => [...s]);
    for (const w of workers) expect(identities.some((id) => id.startsWith(pidOf(w)))).toBe(true);
    // …yet no worker sent a request after it had learned of a wait that was still in force…
    const origin = new URL(e.apiUrl).origin;
    await everySendRecorded(workers, origin, () => e.stats.requests);
    for (const w of workers) expect(sentWhileKnownLimited(w, origin), `worker ${w.pid}`).toEqual([]);
    // …and a wait announced to one worker reached the other through the governor (never, without the fleet's sharing).
    const delays = newsDelays(workers);
    expect(delays.filter((d) => d.source === 'governor').length).toBeGreaterThan(0);
    // How long the news took depends on the machine: reported, not asserted (bench:fleet measures it).
    const ms = delays.map((d) => d.delayMs).sort((a, b) => a - b);
    console.log(
      `fleet news: ${ms.length} wait(s) reached the other worker (${delays.filter((d) => d.source === 'governor').length} through the governor), ` +
        `after ${ms[0]}–${ms.at(-1)} ms (median ${ms[Math.floor(ms.length / 2)]} ms); sent by the API's clock while limited, beyond 250 ms: ${e.stats.requestsWhileLimited}`,
    );
  });

  it('keeps a worker that joins the work during a known wait from sending anything until the wait ends', async () => {
    const windowMs = 20_000;
    const { e, c, env } = await setUp({ migrations: { exportMs: [1_000, 1_000], archiveBytes: 4_096 }, rateLimit: { limit: 5, windowMs } }, 3);
    // Reserve 0: the fleet spends the window to `remaining: 0`, the answer that starts the known wait.
    const queueA = `fleet-a-${randomUUID()}`;
    const queueB = `fleet-b-${randomUUID()}`;
    // Both processes are up before the wait, so that the wait has to outlast only a workflow start, not a process's.
    const [a, b] = await Promise.all([startWorkerProcess(env(queueA, { LONGHAUL_RATE_RESERVE: '0' }), RECORD), startWorkerProcess(env(queueB, { LONGHAUL_RATE_RESERVE: '0' }), RECORD)]);
    const slowPoll = { initialIntervalMs: 1_500, maxIntervalMs: 3_000 };
    const first = await startMigration(c, queueA, ['repo-0', 'repo-1'], slowPoll);
    const window = () => Object.values(e.rateLimiter.fleetStats())[0]?.windows ?? [];
    await waitFor('worker A to spend the first window', () => (window()[0]?.used ?? 0) >= 5, Boolean, 120_000, 100);
    const waitEnds = window()[0].startMs + windowMs;

    // Worker B (on its own task queue, which had no work yet) is given some while the wait is known…
    const second = await startMigration(c, queueB, ['repo-2'], slowPoll);
    await Promise.all([first.result(), second.result()]);

    // …was held back by the governor (it asked before the wait ended)…
    expect(b.output()).toContain('"governor-wait"');
    // …and sent nothing before it ended: the first window got exactly its 5 requests, no limited answer, B's first
    // request went out after the reset the API announced, and the next window opened only after the reset.
    const windows = window();
    expect(windows[0]).toMatchObject({ used: 5, limitedAnswers: 0 });
    const origin = new URL(e.apiUrl).origin;
    await everySendRecorded([a, b], origin, () => e.stats.requests);
    expect(sentRequests(b, origin)[0].at).toBeGreaterThanOrEqual(windows[0].endMs);
    expect(windows[1].startMs).toBeGreaterThanOrEqual(waitEnds);
    expect(windows.reduce((n, w) => n + w.limitedAnswers, 0)).toBe(0);
    expect([...(await activityWorkers(second))].every((id) => id.startsWith(pidOf(b)))).toBe(true);
    expect([...(await activityWorkers(first))].every((id) => id.startsWith(pidOf(a)))).toBe(true);
  });

  it('closes content creation for every hook on every worker after one 422 "spammed"', async () => {
    const { e, c, env, credential } = await setUp({ hooks: { spam: { perMinute: 2, perHour: 500, minuteMs: 60_000, hourMs: 3_600_000 } } }, 0);
    const taskQueue = `fleet-${randomUUID()}`;
    // The governor's own allowance is set above the emulator's so that the emulator answers "spammed".
    const extra = { LONGHAUL_CONTENT_PER_MINUTE: '100', LONGHAUL_SPAMMED_WAIT_MS: '60000' };
    const workers = await Promise.all([startWorkerProcess(env(taskQueue, extra), RECORD), startWorkerProcess(env(taskQueue, extra), RECORD)]);
    const now = Date.now();
    const repairs: WorkflowHandle[] = [];
    for (let h = 0; h < 3; h++) {
      const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: `https://receiver.example.test/hook-${h}` });
      for (let i = 0; i < 3; i++) e.hooks.addDelivery(hookId, { at: now - 60_000 + i * 1000, statusCode: 500 });
      const handle = await c.workflow.start(hookRepair, { taskQueue, workflowId: `fleet-hook-${h}-${randomUUID()}`, args: [{ target: { org: 'octo-org' }, hookId }] });
      repairs.push(fleet.track(handle));
    }
    const governor = c.workflow.getHandle(governorWorkflowId(credential));
    await waitFor('a "spammed" answer', () => e.hooks.spammedCount() > 0, Boolean, 120_000, 100);
    // Six redeliveries are still wanted after the first three: each asks for a content slot, and the governor's
    // word (a refusal, or a closed gate re-read before a slot) reaches a worker.
    const learnedFromGovernor = () => workers.flatMap((w) => limitsLearned(w)).filter((l) => l.kind === 'content' && l.source === 'governor');
    await waitFor('a worker told by the governor that content creation is closed', learnedFromGovernor, (l) => l.length > 0, 120_000, 100);
    expect((await governor.query(limitsQuery)).contentBlockedUntil).toBeDefined();

    // Judged by what each worker knew: none sent a redelivery after it had learned that content creation was
    // closed (from its own "spammed" answer or the governor's word) while the closure lasted. A redelivery sent
    // by a worker the news had not reached yet is no fault (how long the news took depends on the machine).
    // The repairs would go on for the closure's minute: ended here, so that what was sent stops changing.
    await Promise.all(repairs.map((h) => h.terminate('the test has seen what it needs')));
    const origin = new URL(e.apiUrl).origin;
    const recorded = () => workers.reduce((n, w) => n + sentRequests(w, origin).length, 0);
    await waitFor('every request the emulator saw in its sender\'s record, and nothing more in flight', () => recorded() - e.stats.requests, (d) => d === 0, 60_000, 50);
    const isRedelivery = (sent: { method: string; path: string }) => sent.method === 'POST' && /\/deliveries\/[^/]+\/attempts$/.test(sent.path);
    for (const w of workers) expect(sentWhileKnownLimited(w, origin, isRedelivery), `worker ${w.pid}`).toEqual([]);
    const attempts = e.stats.byRoute['POST /orgs/:org/hooks/:hook_id/deliveries/:delivery_id/attempts'];
    expect(e.hooks.redeliveries()).toHaveLength(2);
    expect(attempts).toBe(2 + e.hooks.spammedCount());
    const sentRedeliveries = workers.flatMap((w) => sentRequests(w, origin).filter(isRedelivery));
    expect(sentRedeliveries).toHaveLength(attempts);
    console.log(`fleet content closure: ${attempts} redeliveries sent, ${e.hooks.spammedCount()} answered "spammed"`);
  });
});
