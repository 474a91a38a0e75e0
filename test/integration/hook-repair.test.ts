/**
 * Webhook delivery repair on real Temporal Schedules (dev server) against the emulator: exactly the
 * failed guids are redelivered, once; the pacing holds under the content-creation limits; the
 * last-checked time (carried by the Schedule as the previous run's result) advances only when every
 * redelivery was accepted; redelivery is asynchronous (its delivery and outcome are listed later), and a guid
 * whose redelivery is not listed yet is awaited, never redelivered again; and the ping health check.
 */
import { describe, expect, it } from 'vitest';
import type { Emulator, EmulatorOptions } from '@longhaul/emulator';
import { hookRepairScheduleId, maxInAnyWindow, type HookRepairInput, type HookRepairResult } from '../../src/processes/hook-repair/model';
import type { RedeliveryResult } from '../../src/processes/hook-repair/activities';
import { githubRetryPolicy, type RetryPolicy } from '../../src/http/retry-policy';
import { listSchedules } from '../../src/temporal/schedules';
import { upsertHookRepairSchedule } from '../../src/processes/hook-repair/cli-schedule';
import { hookPing, hookRepair } from '../../src/processes/hook-repair/workflow';
import { TEST_TOKEN } from '../helpers/emulator';
import { useStackPerTest, type TestStack } from '../helpers/stack';
import { scheduleRuns, triggerAndWait } from '../helpers/schedules';
import { waitFor } from '../helpers/wait';
import { expectFailure } from '../helpers/failures';
import { QUICK_OUTAGE_BUDGET } from '../helpers/presets';
import { activityResults } from '../helpers/history';
import { recordSendsHere } from '../helpers/sent-here';

const HOUR = 3_600_000;
const startStack = useStackPerTest();

async function start(options: EmulatorOptions = {}, policy?: RetryPolicy): Promise<{ e: Emulator; w: TestStack }> {
  const stack = await startStack({ emulator: options, deps: { policy } });
  return { e: stack.emulator, w: stack };
}

/** Waits until every accepted redelivery has been made (listed with its outcome): redelivery is asynchronous. */
async function redeliveriesMade(e: Emulator): Promise<void> {
  await waitFor('the accepted redeliveries to be made', () => e.hooks.redeliveries(), (all) => all.every((r) => r.newDeliveryId !== undefined), 60_000, 100);
}

/**
 * Creates the hook's Schedule, deleted when the test's stack stops. Without `everyMs` it is paused: its runs
 * are the ones the test triggers, never an hourly one falling due at the top of the hour mid-test.
 */
async function schedule(w: TestStack, input: HookRepairInput, everyMs?: number): Promise<string> {
  const { scheduleId } = await upsertHookRepairSchedule(w.client, { taskQueue: w.taskQueue, everyMs: everyMs ?? HOUR, input, paused: everyMs === undefined });
  w.cleanUpOnStop({ schedules: [scheduleId] });
  return scheduleId;
}

describe('webhook delivery repair on a Schedule', () => {
  it('redelivers exactly the guids without an OK delivery in the window, once, and starts the next run where this one ended', async () => {
    const { e, w } = await start();
    const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook', secret: 'x' });
    const now = Date.now();
    // Seeded in time order, as delivery ids grow with time. 3 failures older than the 24-hour window …
    for (let i = 0; i < 3; i++) e.hooks.addDelivery(hookId, { at: now - 30 * HOUR + i * 1000, statusCode: 500 });
    // … 150 good deliveries (two pages at per_page=100) …
    for (let i = 0; i < 150; i++) e.hooks.addDelivery(hookId, { at: now - 20 * HOUR + i * 1000, statusCode: 200 });
    // … 6 guids that failed and were redelivered successfully already …
    const healed = Array.from({ length: 6 }, (_, i) => e.hooks.addDelivery(hookId, { at: now - 10 * HOUR + i * 1000, statusCode: 500 }));
    healed.forEach((d, i) => e.hooks.addDelivery(hookId, { at: now - 9 * HOUR + i * 1000, statusCode: 200, guid: d.guid, redelivery: true }));
    // … and 8 guids that never succeeded (3 of them failed twice).
    const failed = Array.from({ length: 8 }, (_, i) => e.hooks.addDelivery(hookId, { at: now - 5 * HOUR + i * 1000, statusCode: i % 2 ? 502 : 0 }));
    failed.slice(0, 3).forEach((d, i) => e.hooks.addDelivery(hookId, { at: now - 4 * HOUR + i * 1000, statusCode: 500, guid: d.guid, redelivery: true }));
    const failedGuids = failed.map((d) => d.guid);

    const scheduleId = await schedule(w, { target: { org: 'octo-org' }, hookId });
    const first = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(first.counts).toMatchObject({ seen: 150 + 12 + 11, guids: 150 + 6 + 8, failed: 8, redelivered: 8, skippedAlreadyOk: 6, notAccepted: 0 });
    expect(first.counts.pages).toBeGreaterThanOrEqual(2);
    expect(first.allAccepted).toBe(true);
    expect([...first.redeliveredGuids].sort()).toEqual([...failedGuids].sort());
    expect(e.hooks.redeliveries().map((r) => r.guid).sort()).toEqual([...failedGuids].sort());

    // Re-running the starter updates the Schedule in place and keeps the previous run's result, from
    // which the next run starts: once the redeliveries are made (asynchronously), nothing is left to do.
    await redeliveriesMade(e);
    expect((await upsertHookRepairSchedule(w.client, { taskQueue: w.taskQueue, everyMs: 2 * HOUR, input: { target: { org: 'octo-org' }, hookId } })).created).toBe(false);
    const second = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(Date.parse(second.windowStart)).toBeGreaterThan(now - HOUR);
    expect(second.counts).toMatchObject({ failed: 0, redelivered: 0 });
    expect(second.counts.seen).toBe(8);
    expect(second.lastCheckedAt).toBeGreaterThan(first.lastCheckedAt);
    expect(e.hooks.redeliveries()).toHaveLength(8);
  });

  it('paces redeliveries of a repository hook so that no window ever exceeds its limits', async () => {
    const { e, w } = await start({ hooks: { spam: { perMinute: 5, perHour: 12, minuteMs: 2_000, hourMs: 8_000 } } });
    const { id: hookId } = e.hooks.create({ owner: 'octo-org', repo: 'alpha' }, { url: 'https://receiver.example.test/hook' });
    for (let i = 0; i < 22; i++) e.hooks.addDelivery(hookId, { at: Date.now() - HOUR + i, statusCode: 503 });
    const scheduleId = await schedule(w, {
      target: { owner: 'octo-org', repo: 'alpha' },
      hookId,
      pacing: { perMinute: 4, perHour: 10, minuteMs: 2_000, hourMs: 8_000, marginMs: 100 },
    });
    const sent = recordSendsHere(new URL(e.apiUrl).origin);
    const result = await triggerAndWait<HookRepairResult>(w.client, scheduleId).finally(() => sent.stop());
    expect(result.counts).toMatchObject({ failed: 22, redelivered: 22, notAccepted: 0 });
    expect(e.hooks.redeliveries()).toHaveLength(22);
    expect(e.hooks.spammedCount()).toBe(0);
    // The pacing is the worker's: judged by when it released each redelivery (the `sentAt` each activity recorded
    // on its clock, as the workflow paces by them), not by when they arrived, which a loaded machine bunches.
    const run = w.client.workflow.getHandle((await scheduleRuns(w.client, scheduleId)).at(-1)!);
    const released = (await activityResults<RedeliveryResult>(run, 'redeliverHookDelivery')).map((r) => r.sentAt);
    expect(released).toHaveLength(22);
    expect(maxInAnyWindow(released, 2_000)).toBeLessThanOrEqual(4);
    expect(maxInAnyWindow(released, 8_000)).toBeLessThanOrEqual(10);
    // Those release times are when the requests went out: each redelivery's headers were written (this process's
    // undici, the same clock) after its release and before the next one's.
    const posts = sent.sends.filter((s) => s.method === 'POST' && s.path.endsWith('/attempts')).map((s) => s.at);
    expect(posts).toHaveLength(released.length);
    posts.forEach((at, i) => {
      expect(at).toBeGreaterThanOrEqual(released[i]);
      if (i + 1 < released.length) expect(at).toBeLessThanOrEqual(released[i + 1]);
    });
  });

  it('keeps the last-checked time when the server refuses redeliveries as spammed, and the next run finishes the job', async () => {
    const { e, w } = await start({ hooks: { spam: { perMinute: 100, perHour: 5, minuteMs: 60_000, hourMs: HOUR } } });
    const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guids = Array.from({ length: 9 }, (_, i) => e.hooks.addDelivery(hookId, { at: Date.now() - 2 * HOUR + i, statusCode: 500 }).guid);
    // The workflow believes it may send more than this caller has left (another client used the budget).
    const scheduleId = await schedule(w, { target: { org: 'octo-org' }, hookId, lookbackMs: 3 * HOUR, pacing: { perMinute: 50, perHour: 400, minuteMs: 500 } });

    const first = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(first.allAccepted).toBe(false);
    expect(first.counts).toMatchObject({ failed: 9, redelivered: 5, notAccepted: 4 });
    expect(first.lastCheckedAt).toBe(Date.parse(first.windowStart));
    expect(e.hooks.spammedCount()).toBe(3);

    e.hooks.options.spam.perHour = 100;
    await redeliveriesMade(e);
    const second = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(second.counts).toMatchObject({ failed: 4, redelivered: 4, skippedAlreadyOk: 5, notAccepted: 0 });
    expect(second.allAccepted).toBe(true);
    expect(second.lastCheckedAt).toBe(Date.parse(second.runStartedAt));
    // Every failed guid was redelivered exactly once over the two runs.
    expect(e.hooks.redeliveries().map((r) => r.guid).sort()).toEqual([...guids].sort());
  });

  it('pings a hook and refuses an invalid hook before calling the API', async () => {
    const { e, w } = await start();
    const { id: hookId } = e.hooks.create({ owner: 'octo-org', repo: 'beta' }, { url: 'https://receiver.example.test/hook' });
    const ping = await w.client.workflow.execute(hookPing, { taskQueue: w.taskQueue, workflowId: `ping-${Date.now()}`, args: [{ target: { owner: 'octo-org', repo: 'beta' }, hookId }] });
    expect(ping).toMatchObject({ hook: `repos/octo-org/beta/hooks/${hookId}`, status: 204 });
    expect(e.hooks.pings(hookId)).toHaveLength(1);

    const requests = e.stats.requests;
    await expectFailure(
      w.client.workflow.execute(hookRepair, { taskQueue: w.taskQueue, workflowId: `repair-bad-${Date.now()}`, args: [{ target: { org: 'octo-org' }, hookId: -1 }] }),
      'InvalidHookInput',
    );
    expect(e.stats.requests).toBe(requests);
    expect(hookRepairScheduleId({ org: 'Octo-Org' }, 7)).toBe('hook-repair:orgs/octo-org/hooks/7');
  });

  it('redelivers a guid whose target keeps failing at most 3 times over all runs, then reports it as given up', async () => {
    // Every delivery to this target fails, redeliveries included.
    const { e, w } = await start({ hooks: { outcome: () => 500 } });
    const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: 'https://broken.example.test/hook' });
    const failing = [0, 1].map((i) => e.hooks.addDelivery(hookId, { at: Date.now() - HOUR + i, statusCode: 500 }).guid);
    e.hooks.addDelivery(hookId, { at: Date.now() - HOUR + 5, statusCode: 200 });
    const scheduleId = await schedule(w, { target: { org: 'octo-org' }, hookId });

    const results: HookRepairResult[] = [];
    for (let run = 1; run <= 5; run++) {
      results.push(await triggerAndWait<HookRepairResult>(w.client, scheduleId));
      await redeliveriesMade(e);
    }
    expect(results.map((r) => r.counts.redelivered)).toEqual([2, 2, 2, 0, 0]);
    expect(results.map((r) => r.counts.gaveUp)).toEqual([0, 0, 0, 2, 2]);
    expect([...results[3].gaveUpGuids].sort()).toEqual([...failing].sort());
    expect(results[3].redeliveryAttempts.map((a) => a.attempts)).toEqual([3, 3]);
    // The count travelled from run to run: each guid was redelivered exactly three times in all.
    const perGuid = new Map<string, number>();
    for (const r of e.hooks.redeliveries()) perGuid.set(r.guid, (perGuid.get(r.guid) ?? 0) + 1);
    expect(Object.fromEntries(perGuid)).toEqual(Object.fromEntries(failing.map((g) => [g, 3])));
    expect(results[4].allAccepted).toBe(true);
  });

  it('waits out an outage of the deliveries API (502s, then a reset of a redelivery) and redelivers each failed guid once', async () => {
    const { e, w } = await start({}, { ...githubRetryPolicy, maxTransientAttempts: 1 });
    const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guids = [0, 1, 2].map((i) => e.hooks.addDelivery(hookId, { at: Date.now() - HOUR + i, statusCode: 502 }).guid);
    e.setFaults([
      { method: 'GET', path: '/deliveries', kind: 'status', status: 502, times: 3 },
      { method: 'POST', path: '/attempts', kind: 'reset', times: 1 },
    ]);
    const scheduleId = await schedule(w, { target: { org: 'octo-org' }, hookId, outage: QUICK_OUTAGE_BUDGET });
    const result = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(result.counts).toMatchObject({ failed: 3, redelivered: 3, notAccepted: 0 });
    expect(result.outage?.waits).toBe(4);
    expect(e.hooks.redeliveries().map((r) => r.guid).sort()).toEqual([...guids].sort());
  });

  it('never redelivers a guid twice when the answer to a redelivery the server made is lost (reset after processing)', async () => {
    const { e, w } = await start();
    const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guids = [0, 1, 2].map((i) => e.hooks.addDelivery(hookId, { at: Date.now() - HOUR + i, statusCode: 502 }).guid);
    // The first redelivery is made, then its connection reset: the activity cannot know whether it happened.
    e.setFaults([{ method: 'POST', path: '/attempts', kind: 'reset', afterProcessing: true, times: 1 }]);
    const scheduleId = await schedule(w, { target: { org: 'octo-org' }, hookId, redeliverySettleMs: 3_000 });
    const result = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(result.counts).toMatchObject({ failed: 3, redelivered: 3, notAccepted: 0 });
    expect(e.hooks.redeliveries().map((r) => r.guid).sort()).toEqual([...guids].sort());
  });

  it('sends a redelivery again at once after a rate-limited answer (refused before the server acted), without waiting for it to settle', async () => {
    const { e, w } = await start();
    const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guids = [0, 1].map((i) => e.hooks.addDelivery(hookId, { at: Date.now() - HOUR + i, statusCode: 502 }).guid);
    e.setFaults([{ method: 'POST', path: '/attempts', kind: 'status', status: 429, retryAfterSeconds: 1, times: 1 }]);
    // Looking for the refused redelivery would wait out the default settle time (5 minutes), past the test's timeout.
    const scheduleId = await schedule(w, { target: { org: 'octo-org' }, hookId });
    const result = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(result.counts).toMatchObject({ failed: 2, redelivered: 2, notAccepted: 0 });
    expect(e.hooks.redeliveries().map((r) => r.guid).sort()).toEqual([...guids].sort());
  });

  it('pauses the Schedule of a deleted hook after N failed runs in a row, with a note saying why', async () => {
    const { e, w } = await start();
    const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    await fetch(`${e.apiUrl}/orgs/octo-org/hooks/${hookId}`, { method: 'DELETE', headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    const scheduleId = await schedule(w, { target: { org: 'octo-org' }, hookId, pauseAfterFailures: 3 }, 1_000);
    const [listing] = await waitFor('the schedule to pause itself', () => listSchedules(w.client, scheduleId), (l) => l[0]?.paused === true, 90_000, 500);
    expect(listing.note).toMatch(/paused by longhaul after 3 consecutive failed runs; last failure: .*Not Found/);
    const runs = await scheduleRuns(w.client, scheduleId);
    const statuses = await Promise.all(runs.map((id) => w.client.workflow.getHandle(id).describe().then((d) => d.status.name)));
    expect(statuses.length).toBeGreaterThanOrEqual(3);
    expect(statuses.every((st) => st === 'FAILED')).toBe(true);
    // Paused: no further runs.
    expect((await w.client.schedule.getHandle(scheduleId).describe()).state.paused).toBe(true);
  });

  it('bounds a run: past maxRedeliveriesPerRun the rest is deferred, the window stays, and later runs finish the job', async () => {
    const { e, w } = await start();
    const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guids = Array.from({ length: 5 }, (_, i) => e.hooks.addDelivery(hookId, { at: Date.now() - HOUR + i, statusCode: 500 }).guid);
    const scheduleId = await schedule(w, { target: { org: 'octo-org' }, hookId, maxRedeliveriesPerRun: 2 });
    const first = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(first.counts).toMatchObject({ failed: 5, redelivered: 2, deferred: 3 });
    expect(first.stoppedEarly).toMatch(/maxRedeliveriesPerRun 2/);
    expect(first.lastCheckedAt).toBe(Date.parse(first.windowStart));
    await redeliveriesMade(e);
    const second = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(second.counts).toMatchObject({ failed: 3, redelivered: 2, deferred: 1, skippedAlreadyOk: 2 });
    await redeliveriesMade(e);
    const third = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(third.counts).toMatchObject({ failed: 1, redelivered: 1, deferred: 0 });
    expect(third.lastCheckedAt).toBe(Date.parse(third.runStartedAt));
    expect(e.hooks.redeliveries().map((r) => r.guid).sort()).toEqual([...guids].sort());
  });

  it('awaits a redelivery that is accepted but not yet listed: never sent twice, the window kept until its outcome is seen', async () => {
    // Redeliveries are made 10 minutes (emulator clock) after they are accepted; the test moves that clock.
    let ahead = 0;
    const { e, w } = await start({ clock: () => Date.now() + ahead, hooks: { redeliveryDelayMs: 10 * 60_000 } });
    const { id: hookId } = e.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guids = Array.from({ length: 5 }, (_, i) => e.hooks.addDelivery(hookId, { at: Date.now() - HOUR + i, statusCode: 500 }).guid);
    const scheduleId = await schedule(w, { target: { org: 'octo-org' }, hookId, maxRedeliveriesPerRun: 2 });

    const first = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(first.counts).toMatchObject({ failed: 5, redelivered: 2, deferred: 3, awaitingOutcome: 0 });
    expect(e.hooks.deliveries(hookId)).toHaveLength(5);
    // The two accepted redeliveries are not listed yet: the next run waits for them and takes two others.
    const second = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(second.counts).toMatchObject({ failed: 5, awaitingOutcome: 2, redelivered: 2, deferred: 1 });
    expect(second.lastCheckedAt).toBe(first.lastCheckedAt);
    expect(new Set(e.hooks.redeliveries().map((r) => r.guid)).size).toBe(4);

    ahead = 11 * 60_000;
    await redeliveriesMade(e);
    const third = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(third.counts).toMatchObject({ failed: 1, skippedAlreadyOk: 4, awaitingOutcome: 0, redelivered: 1, deferred: 0 });
    // Every guid redelivered exactly once; the window moves on once no outcome is outstanding.
    expect(e.hooks.redeliveries().map((r) => r.guid).sort()).toEqual([...guids].sort());
    ahead = 22 * 60_000;
    await redeliveriesMade(e);
    const fourth = await triggerAndWait<HookRepairResult>(w.client, scheduleId);
    expect(fourth.counts).toMatchObject({ failed: 0, awaitingOutcome: 0, redelivered: 0 });
    expect(fourth.lastCheckedAt).toBe(Date.parse(fourth.runStartedAt));
  });
});
