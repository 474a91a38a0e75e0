/**
 * The pure parts of recurring work in the large: the outage budget (settings, backoff, which failures
 * are outages), the Schedule's auto-pause count and note, and the feed spool that keeps events out of
 * history.
 */
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { accumulatedOutageBounds, outageBackoffMs, outageBoundsProblems, RECURRING_OUTAGE } from '../../src/common/outage';
import { outageCause } from '../../src/workflows/kit/outage-watch';
import { autoPauseNote, consecutiveFailures, PauseAfterFailuresSchema } from '../../src/processes/scheduled-run/model';
import { problemsOf } from '../../src/common/schema';

const pauseAfterFailures = (n: unknown) => problemsOf(PauseAfterFailuresSchema, n, 'pauseAfterFailures');
import { FailureType } from '../../src/http/retry-policy';
import { markDelivered, readSpooled, spoolPage } from '../../src/processes/feed-poll/activities/sinks/spool';
import type { FeedEvent } from '../../src/processes/feed-poll/model';

const inActivity = (cause: Error) => new ActivityFailure('activity failed', 'fetchFeedPage', '1', RetryState.NON_RETRYABLE_FAILURE, undefined, cause);

describe('outage budget', () => {
  it('defaults to six hours with waits doubling from 10 s to 3 minutes', () => {
    expect(RECURRING_OUTAGE).toEqual({ budgetMs: 6 * 3_600_000, initialBackoffMs: 10_000, maxBackoffMs: 180_000 });
    // A run's budget is accumulated outage time; the input names it `budgetMs` like every process's.
    expect(accumulatedOutageBounds(undefined)).toEqual({ accumulatedBudgetMs: 6 * 3_600_000, initialBackoffMs: 10_000, maxBackoffMs: 180_000 });
    expect(accumulatedOutageBounds({ budgetMs: 60_000 })).toEqual({ accumulatedBudgetMs: 60_000, initialBackoffMs: 10_000, maxBackoffMs: 180_000 });
    expect([1, 2, 3, 4, 5, 6, 40].map((n) => outageBackoffMs(n, RECURRING_OUTAGE))).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 180_000, 180_000]);
  });

  it('refuses settings that would hammer a down service or never end', () => {
    expect(outageBoundsProblems(undefined)).toEqual([]);
    expect(outageBoundsProblems({ budgetMs: 60_000 })).toEqual([]);
    // A max backoff between the processes' default initial backoffs (5 s, 10 s) is valid: unset sides count leniently.
    expect(outageBoundsProblems({ maxBackoffMs: 6_000 })).toEqual([]);
    expect(outageBoundsProblems({ maxBackoffMs: 2_000 }).join()).toMatch(/must be at least outage.initialBackoffMs \(5000\)/);
    expect(outageBoundsProblems({ initialBackoffMs: 10 }).join()).toMatch(/outage.initialBackoffMs must be a number of milliseconds between 1000/);
    expect(outageBoundsProblems({ budgetMs: 30 * 24 * 3_600_000 }).join()).toMatch(/outage.budgetMs must be/);
    expect(outageBoundsProblems({ initialBackoffMs: 5_000, maxBackoffMs: 1_000 }).join()).toMatch(/maxBackoffMs \(1000\) must be at least outage.initialBackoffMs \(5000\)/);
  });

  it('treats 5xx, resets, exhausted transient retries, HTML pages and timeouts as outages, and nothing permanent', () => {
    expect(outageCause(inActivity(ApplicationFailure.create({ type: FailureType.Server, message: '502' })))).toMatch(/^ServerError: 502/);
    expect(outageCause(inActivity(ApplicationFailure.create({ type: FailureType.Network, message: 'socket hang up' })))).toMatch(/NetworkError/);
    expect(outageCause(inActivity(ApplicationFailure.nonRetryable('gave up', FailureType.TransientExhausted)))).toMatch(/TransientRetriesExhausted/);
    expect(outageCause(inActivity(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE)))).toMatch(/timed out/);
    expect(outageCause(inActivity(ApplicationFailure.nonRetryable('Not Found', FailureType.NotFound)))).toBeUndefined();
    expect(outageCause(inActivity(ApplicationFailure.nonRetryable('Bad credentials', FailureType.Authentication)))).toBeUndefined();
    expect(outageCause(inActivity(ApplicationFailure.nonRetryable('proxy page', FailureType.MalformedAnswer)))).toMatch(/^MalformedAnswer/);
    // A call that would leave the API's origin, or redirects in a loop, is answered for good: not waited out.
    expect(outageCause(inActivity(ApplicationFailure.nonRetryable('elsewhere', FailureType.ForeignOrigin)))).toBeUndefined();
    expect(outageCause(inActivity(ApplicationFailure.nonRetryable('loop', FailureType.TooManyRedirects)))).toBeUndefined();
    expect(outageCause(new Error('plain'))).toBeUndefined();
  });
});

describe('schedule auto-pause', () => {
  it('counts failed runs in a row, newest first, up to the last success', () => {
    expect(consecutiveFailures([])).toBe(1);
    expect(consecutiveFailures(['FAILED', 'TIMED_OUT', 'FAILED'])).toBe(4);
    expect(consecutiveFailures(['FAILED', 'COMPLETED', 'FAILED'])).toBe(2);
    // A run terminated by hand is not a failure of the work.
    expect(consecutiveFailures(['TERMINATED', 'FAILED'])).toBe(1);
  });

  it('validates N and writes a note that says why and what to do', () => {
    expect(pauseAfterFailures(undefined)).toEqual([]);
    expect(pauseAfterFailures(5)).toEqual([]);
    expect(pauseAfterFailures(0)).toHaveLength(1);
    expect(pauseAfterFailures(11).join()).toMatch(/from 1 to 10/);
    expect(pauseAfterFailures(2.5)).toHaveLength(1);
    const note = autoPauseNote(5, `GET /orgs/o/hooks/1/deliveries → 404: Not Found ${'x'.repeat(400)}`);
    expect(note).toMatch(/^paused by longhaul after 5 consecutive failed runs; last failure: GET .* 404: Not Found x+…\. Fix the cause, then unpause \(--unpause\)\.$/);
    expect(note.length).toBeLessThan(450);
  });
});

describe('feed spool', () => {
  const ev = (id: number) => ({ id: String(id), type: 'PushEvent', payload: { commits: [{ message: 'x'.repeat(1000) }] } }) as unknown as FeedEvent;

  it('keeps pages on disk and gives them back by id in the order asked, once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spool-'));
    const feed = '/repos/o/r/events';
    expect((await spoolPage(dir, feed, { pollId: 'poll-1', page: 1 }, [ev(9), ev(8)])).bytes).toBeGreaterThan(2_000);
    // A retried fetch rewrites its page whole.
    await spoolPage(dir, feed, { pollId: 'poll-1', page: 2 }, [ev(8), ev(7)]);
    await spoolPage(dir, feed, { pollId: 'poll-1', page: 2 }, [ev(8), ev(7)]);
    const read = await readSpooled(dir, feed, { pollId: 'poll-1' }, ['7', '8', '9']);
    expect(read.done).toBe(false);
    expect(read.events.map((e) => e.id)).toEqual(['7', '8', '9']);
    await markDelivered(dir, feed, { pollId: 'poll-1' });
    expect(await readSpooled(dir, feed, { pollId: 'poll-1' }, ['7'])).toEqual({ events: [], done: true });
    // The next poll of the feed clears the earlier ones.
    await spoolPage(dir, feed, { pollId: 'poll-2', page: 1 }, [ev(10)]);
    expect(await readdir(join(dir, 'spool', 'feeds', 'repos_o_r_events'))).toEqual(['poll-2']);
  });

  it('fails as FeedSpoolMissing when an event is not in this worker’s spool, and refuses odd poll ids', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spool-'));
    await spoolPage(dir, '/events', { pollId: 'p', page: 1 }, [ev(1)]);
    const err = await readSpooled(dir, '/events', { pollId: 'p' }, ['1', '2']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'FeedSpoolMissing', nonRetryable: true });
    await expect(spoolPage(dir, '/events', { pollId: '../x', page: 1 }, [])).rejects.toMatchObject({ type: 'InvalidFeedInput' });
  });
});
