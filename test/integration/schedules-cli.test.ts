/** The starter's schedule commands as a user runs them: a real process, the shared dev server, a real worker, the emulator. */
import { describe, expect, it, onTestFinished } from 'vitest';
import { ScheduleNotFoundError } from '@temporalio/client';
import { feedCursorWorkflowId, feedScheduleId } from '../../src/processes/feed-poll/model';
import { hookRepairScheduleId } from '../../src/processes/hook-repair/model';
import { useStack } from '../helpers/stack';
import { runStarter } from '../helpers/starter';
import { eventually } from '../helpers/wait';

// Feeds and a hook no other test file uses: schedule and cursor ids are per feed (and per hook) in the one
// namespace of the shared dev server, where test files run at the same time.
const FEED = '/users/octocat/events/public';
/** The feed whose cursor is forgotten while a scheduled run is in flight. */
const FORGOTTEN = '/networks/octo-org/gamma/events';
const HOOK_REPO = { owner: 'octo-org', repo: 'gamma' };

describe('starter schedule commands', () => {
  const stack = useStack({
    emulator: { feeds: { eventsPerMinute: 0, initialEvents: 6, pollIntervalSeconds: 1 } },
    cleanUp: { schedules: [feedScheduleId(FEED), feedScheduleId(FORGOTTEN), hookRepairScheduleId(HOOK_REPO, 1)], workflows: [feedCursorWorkflowId(FEED), feedCursorWorkflowId(FORGOTTEN)] },
  });

  it('creates a feed schedule once and updates it in place when run again, lists, pauses and deletes it', async () => {
    const created = await runStarter(['feed-schedule', '--feed', 'users/OctoCat/events/public', '--every', '1h', '--paused', '--json'], stack.taskQueue);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ scheduleId: `feed:${FEED}`, created: true, feed: FEED, everyMs: 3_600_000, sink: { kind: 'file' } });

    const updated = await runStarter(['feed-schedule', '--feed', FEED, '--every', '2h', '--sink', 'file:out/public.jsonl', '--json'], stack.taskQueue);
    expect(JSON.parse(updated.stdout)).toMatchObject({ created: false, everyMs: 7_200_000, sink: { kind: 'file', path: 'out/public.jsonl' } });
    const description = await stack.client.schedule.getHandle(feedScheduleId(FEED)).describe();
    expect(description.spec.intervals?.[0]?.every).toBe(7_200_000);

    // A one-off poll uses the schedule's sink and the feed's shared cursor.
    const poll = await runStarter(['feed-poll', '--feed', FEED, '--wait', '--json'], stack.taskQueue);
    expect(poll.code).toBe(0);
    const publicEvents = stack.emulator.feeds.produced(FEED).length;
    expect(publicEvents).toBeGreaterThan(0);
    expect(JSON.parse(poll.stdout)).toMatchObject({ kind: 'delivered', delivered: publicEvents, workflowStatus: 'COMPLETED' });

    const list = await runStarter(['feed-schedule', '--list'], stack.taskQueue);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`feed:${FEED} · every 7200 s · .* ${publicEvents} delivered`));

    expect((await runStarter(['feed-schedule', '--feed', FEED, '--pause'], stack.taskQueue)).code).toBe(0);
    expect((await stack.client.schedule.getHandle(feedScheduleId(FEED)).describe()).state.paused).toBe(true);
    // A paused schedule shows why (here: by hand; longhaul's own pause after failed runs says so the same way).
    expect((await runStarter(['feed-schedule', '--list'], stack.taskQueue)).stdout).toMatch(/PAUSED.*\n\s+note: paused from the longhaul starter/);
    const deleted = await runStarter(['feed-schedule', '--feed', FEED, '--delete', '--json'], stack.taskQueue);
    expect(JSON.parse(deleted.stdout)).toMatchObject({ action: 'delete', cursorForgotten: false });
    const again = await runStarter(['feed-schedule', '--feed', FEED, '--delete'], stack.taskQueue);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/there is no schedule feed:/);
  });

  it('ends a cursor with --forget-cursor only after the feed\u2019s run in flight has ended, so no fresh cursor starts', async () => {
    const tq = stack.taskQueue;
    // Paused: the one run below is the one the test triggers (a trigger starts a run of a paused schedule),
    // never an hourly one falling due at the top of the hour mid-test.
    expect((await runStarter(['feed-schedule', '--feed', FORGOTTEN, '--every', '1h', '--paused'], tq)).code).toBe(0);
    expect((await runStarter(['feed-poll', '--feed', FORGOTTEN, '--wait'], tq)).code).toBe(0);
    const cursor = stack.client.workflow.getHandle(feedCursorWorkflowId(FORGOTTEN));
    const { runId: cursorRunId } = await cursor.describe();

    // A scheduled run starts while no worker runs: in flight, and not yet at the cursor. Ended before
    // this run asks for its poll, the cursor would be started afresh by that request (Update-with-Start).
    await stack.stopWorker();
    let workerStopped = true;
    onTestFinished(() => (workerStopped ? stack.startWorker() : undefined));
    const schedule = stack.client.schedule.getHandle(feedScheduleId(FORGOTTEN));
    // Triggered with the default overlap policy (ALLOW_ALL, as `temporal schedule trigger` does), the run is
    // not among the schedule's running actions: the command has to find it through visibility.
    await schedule.trigger();
    const inFlight = await eventually(async () => (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId, 'the triggered run');
    expect((await stack.client.workflow.getHandle(inFlight).describe()).status.name).toBe('RUNNING');

    // Too short a wait: the schedule goes, the cursor stays, and the command says why (exit 1).
    const early = await runStarter(['feed-schedule', '--feed', FORGOTTEN, '--delete', '--forget-cursor', '--runs-timeout', '1s'], tq);
    expect(early.code, early.stderr).toBe(1);
    expect(early.stderr).toContain(`schedule ${feedScheduleId(FORGOTTEN)} deleted, but its cursor ${feedCursorWorkflowId(FORGOTTEN)} is kept: 1 poll run(s) still in flight after 1 s (${inFlight})`);
    await expect(schedule.describe()).rejects.toThrow(ScheduleNotFoundError);
    expect((await cursor.describe()).status.name).toBe('RUNNING');

    // Again, with the schedule gone: it waits for the run, which ends once a worker is back, then ends the cursor.
    let printed = '';
    const again = runStarter(['feed-schedule', '--feed', FORGOTTEN, '--delete', '--forget-cursor'], tq, (text) => (printed += text));
    await eventually(() => (printed.includes('waiting for 1 poll run(s) in flight') ? true : undefined), 'the command to wait for the run', 60_000);
    await stack.startWorker();
    workerStopped = false;
    const done = await again;
    expect({ code: done.code, stderr: done.stderr.trim() }).toEqual({ code: 0, stderr: `waiting for 1 poll run(s) in flight before ending the cursor: ${inFlight}` });
    expect(done.stdout).toContain(`there was no schedule ${feedScheduleId(FORGOTTEN)}; its cursor ${feedCursorWorkflowId(FORGOTTEN)} ended`);
    expect((await stack.client.workflow.getHandle(inFlight).describe()).status.name).toBe('COMPLETED');
    // The same cursor run ended; none started after it (a fresh one would stay open, RUNNING).
    const after = await eventually(async () => {
      const d = await stack.client.workflow.getHandle(feedCursorWorkflowId(FORGOTTEN)).describe();
      return d.status.name === 'RUNNING' ? undefined : { runId: d.runId, status: d.status.name };
    }, 'the cursor to end');
    expect(after).toEqual({ runId: cursorRunId, status: 'COMPLETED' });
  });

  it('refuses bad input with a usage error before contacting anything', async () => {
    // Each refusal is a process of its own, none depending on another: all started at once.
    const run = (args: string[]) => runStarter(args, stack.taskQueue);
    const [notAFeed, badEvery, badSink, noOrgOrRepo, overPaced, tooManyFailures, forgetAlone, secret, userinfo, secretEnv, ...outside] = await Promise.all([
      run(['feed-schedule', '--feed', '/orgs/octo-org/hooks']),
      run(['feed-schedule', '--feed', FEED, '--every', 'soon']),
      run(['feed-schedule', '--feed', FEED, '--sink', 'ftp://x']),
      run(['hook-repair-schedule', '--repo', 'alpha', '--hook-id', '1']),
      run(['hook-repair-schedule', '--org', 'octo-org', '--hook-id', '1', '--per-minute', '90']),
      run(['feed-schedule', '--feed', FEED, '--pause-after-failures', '11']),
      run(['feed-schedule', '--feed', FEED, '--pause', '--forget-cursor']),
      run(['feed-schedule', '--feed', FEED, '--sink', 'https://hooks.example.test/x?access_token=abc']),
      run(['feed-poll', '--feed', FEED, '--sink', 'https://me:pw@hooks.example.test/x']),
      run(['feed-schedule', '--feed', FEED, '--sink', 'https://hooks.example.test/x', '--sink-secret-env', 'GITHUB_TOKEN']),
      ...['/etc/longhaul.jsonl', '../../x.jsonl'].map((path) => run(['feed-schedule', '--feed', FEED, '--sink', `file:${path}`])),
    ]);
    expect(notAFeed.code).toBe(2);
    expect(notAFeed.stderr).toMatch(/not an activity feed/);
    expect([badEvery, badSink, noOrgOrRepo, overPaced, tooManyFailures].map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
    expect({ code: forgetAlone.code, stderr: forgetAlone.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining('--forget-cursor goes with --delete') });
    // A secret in the sink URL is refused, with how to pass it by reference instead.
    expect(secret.code).toBe(2);
    expect(secret.stderr).toMatch(/"access_token" parameter.*--sink-secret NAME/);
    expect(userinfo.code).toBe(2);
    expect(userinfo.stderr).toMatch(/user-info/);
    // A sink may name a configured secret, never a variable, and write only inside the data directory.
    expect({ code: secretEnv.code, stderr: secretEnv.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining('--sink-secret-env is refused: name a signing secret configured on the workers with --sink-secret NAME') });
    expect(outside).toHaveLength(2);
    for (const o of outside) {
      expect({ code: o.code, stderr: o.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining("file sink path must be a path relative to the worker's data directory (LONGHAUL_DATA_DIR)") });
    }
  });

  it('schedules a repository hook’s repair and pings the hook', async () => {
    const { id } = stack.emulator.hooks.create(HOOK_REPO, { url: 'https://receiver.example.test/h' });
    const created = await runStarter(
      ['hook-repair-schedule', '--repo', 'octo-org/gamma', '--hook-id', String(id), '--every', '30m', '--lookback', '6h', '--max-redeliveries', '2', '--pause-after-failures', '3', '--outage-budget', '2h', '--paused', '--json'],
      stack.taskQueue,
    );
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      scheduleId: hookRepairScheduleId(HOOK_REPO, id),
      created: true,
      input: { target: HOOK_REPO, hookId: id, lookbackMs: 6 * 3_600_000, maxRedeliveriesPerGuid: 2, pauseAfterFailures: 3, outage: { budgetMs: 2 * 3_600_000 } },
    });
    const ping = await runStarter(['hook-ping', '--repo', 'octo-org/gamma', '--hook-id', String(id), '--wait'], stack.taskQueue);
    expect(ping.code).toBe(0);
    expect(ping.stdout).toMatch(/answered the ping with 204/);
    expect(stack.emulator.hooks.pings(id)).toHaveLength(1);
  });
});
