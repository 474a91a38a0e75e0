import { describe, expect, it } from 'vitest';
import { withNextQuietPoll } from '../../src/cli/lifecycle';

describe('status: the next poll of a quiet stretch', () => {
  const now = Date.parse('2026-11-24T12:00:00.000Z');
  const waiting = { phase: 'waiting', polls: 3, nextPollInMs: 30_000 };

  it("takes the next poll from the quiet poll activity's next attempt (the workflow's figure dates from the stretch's start)", () => {
    const pending = [{ activity: 'quietGetMigration', attempt: 4, nextAttemptAt: '2026-11-24T12:00:07.400Z' }];
    expect(withNextQuietPoll(waiting, pending, now)).toEqual({ ...waiting, nextPollInMs: 7_400 });
    // An attempt already due (the poll is being made) reads as 0, never negative.
    expect(withNextQuietPoll(waiting, [{ activity: 'quietGetImport', nextAttemptAt: '2026-11-24T11:59:59.000Z' }], now)).toEqual({ ...waiting, nextPollInMs: 0 });
  });

  it("keeps the workflow's figure when no quiet poll waits for an attempt", () => {
    // A quiet poll in the middle of an attempt, another activity's retry, no activity at all.
    expect(withNextQuietPoll(waiting, [{ activity: 'quietGetMigration' }], now)).toBe(waiting);
    expect(withNextQuietPoll(waiting, [{ activity: 'startMigration', nextAttemptAt: '2026-11-24T12:00:05.000Z' }], now)).toBe(waiting);
    expect(withNextQuietPoll(waiting, [], now)).toBe(waiting);
  });

  it('leaves statuses without a next poll (and no status) as they are', () => {
    const feed = { phase: 'polling', delivered: 12 };
    const pending = [{ activity: 'quietGetMigration', nextAttemptAt: '2026-11-24T12:00:07.000Z' }];
    expect(withNextQuietPoll(feed, pending, now)).toBe(feed);
    expect(withNextQuietPoll(undefined, pending, now)).toBeUndefined();
  });
});
