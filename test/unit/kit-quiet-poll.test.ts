/**
 * Quiet polls: which poll of the schedule an attempt makes, when the next one is due, and what counts as
 * "unchanged" — the pure rules both the workflow and the activity rely on.
 */
import { describe, expect, it } from 'vitest';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { HONEST_POLL_SHAPE, pollScheduleMs, type ResolvedPollBounds } from '../../src/common/poll-schedule';
import { nextQuietDelayMs, QuietPoll, quietPollAt, quietPollEnded, type QuietSchedule } from '../../src/common/quiet-poll-schedule';
import { serverNowMs, unchangedAnswer } from '../../src/activities/quiet-poll';

const HOUR = 60 * 60 * 1000;
const HONEST: ResolvedPollBounds = { ...HONEST_POLL_SHAPE, timeoutMs: 24 * HOUR };
const T0 = 1_700_000_000_000;

/** A quiet stretch handed over at the schedule's first poll (30 s into the wait). */
const fromStart: QuietSchedule = { n: 1, dueAtMs: T0 + 30_000, sinceMs: T0, startedAtMs: T0, bounds: HONEST };

describe('quietPollAt', () => {
  it('walks the same schedule as the poller: attempt k makes the k-th poll from the one handed over', () => {
    const times = pollScheduleMs(HONEST, HOUR);
    for (let attempt = 1; attempt <= times.length; attempt++) {
      expect(quietPollAt(fromStart, attempt)).toEqual({ n: attempt, dueAtMs: T0 + times[attempt - 1] });
    }
  });

  it('starts from the poll handed over, not from the start of the wait', () => {
    const handed = { ...fromStart, n: 11, dueAtMs: T0 + 330_000 };
    expect(quietPollAt(handed, 1)).toEqual({ n: 11, dueAtMs: T0 + 330_000 });
    expect(quietPollAt(handed, 2)).toEqual({ n: 12, dueAtMs: T0 + 330_000 + 33_000 });
  });
});

describe('nextQuietDelayMs', () => {
  it('is the time until the next poll of the schedule when the poll answered on time', () => {
    const at = quietPollAt(fromStart, 12);
    const next = quietPollAt(fromStart, 13);
    expect(nextQuietDelayMs(fromStart, at, at.dueAtMs + 200)).toBe(next.dueAtMs - at.dueAtMs - 200);
  });

  it('waits a whole interval from now after falling behind, instead of polling back to back', () => {
    const at = quietPollAt(fromStart, 3);
    const late = at.dueAtMs + 10 * 60_000;
    const delay = nextQuietDelayMs(fromStart, at, late);
    expect(delay).toBe(Math.floor(0.1 * (late - T0)));
  });

  it('is undefined when the next poll would fall past the time bound', () => {
    const bounded = { ...fromStart, bounds: { ...HONEST, timeoutMs: 95_000 } };
    expect(nextQuietDelayMs(bounded, quietPollAt(bounded, 2), T0 + 60_000)).toBe(30_000);
    expect(nextQuietDelayMs(bounded, quietPollAt(bounded, 3), T0 + 90_000)).toBeUndefined();
  });
});

describe('unchangedAnswer', () => {
  const last = { id: 7, state: 'exporting' };
  it('a 304 is unchanged; so is the same observation under the same validator', () => {
    expect(unchangedAnswer({ notModified: true, etag: 'W/"a"' }, last, 'W/"a"')).toBe(true);
    expect(unchangedAnswer({ id: 7, state: 'exporting', etag: 'W/"a"' }, last, 'W/"a"')).toBe(true);
    expect(unchangedAnswer({ id: 7, state: 'exporting' }, last, undefined)).toBe(true);
  });

  it('a new state, a new validator or no observation to compare with is a change the workflow must see', () => {
    expect(unchangedAnswer({ id: 7, state: 'exported', etag: 'W/"b"' }, last, 'W/"a"')).toBe(false);
    // Same fields, new ETag: the workflow records the new validator so later polls can be answered 304.
    expect(unchangedAnswer({ id: 7, state: 'exporting', etag: 'W/"b"' }, last, 'W/"a"')).toBe(false);
    expect(unchangedAnswer({ id: 7, state: 'exporting' }, undefined, undefined)).toBe(false);
  });
});

describe('quietPollEnded', () => {
  it('unwraps the poll failure and the polls made before it from the activity failure', () => {
    const cause = ApplicationFailure.create({ type: 'ServerError', message: '502' });
    const ended = ApplicationFailure.create({ type: QuietPoll.Ended, nonRetryable: true, message: 'poll 4 failed', details: [{ polls: 3, n: 4, dueAtMs: 42 }], cause });
    const err = new ActivityFailure('failed', 'quietGetMigration', '1', RetryState.NON_RETRYABLE_FAILURE, undefined, ended);
    expect(quietPollEnded(err)).toEqual({ polls: 3, n: 4, dueAtMs: 42, cause });
    expect(quietPollEnded(new ActivityFailure('failed', 'getMigration', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, undefined, cause))).toBeUndefined();
  });
});

describe('serverNowMs', () => {
  it("is the worker's clock, or the poll's due time plus the attempt's run time when the server's clock is ahead", () => {
    // Production: the worker's clock is at or past the due time.
    expect(serverNowMs(T0, T0 + 5, T0 + 205)).toBe(T0 + 205);
    // Time-skipping: the server is an hour ahead; the attempt started when its retry timer fired (the due time).
    expect(serverNowMs(T0 + HOUR, T0, T0 + 200)).toBe(T0 + HOUR + 200);
  });
});
