/** The pure parts of webhook delivery repair: grouping by guid, and pacing under the content-creation limits. */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PACING,
  MAX_CARRIED_ATTEMPTS,
  awaitingRedelivery,
  carriedAttempts,
  hookRepairProblems,
  maxInAnyWindow,
  nextPacedSlot,
  parseHookTarget,
  planRepair,
  type DeliverySummary,
  type Pacing,
  type RedeliveryAttempts,
} from '../../src/processes/hook-repair/model';

let nextId = 1;
// (`_redelivery` documents the seeded history; the plan does not need it.)
const d = (guid: string, ok: boolean, at: number, _redelivery = false): DeliverySummary => ({ id: nextId++, guid, ok, deliveredAt: at });

describe('repair plan', () => {
  it('redelivers each guid without an OK delivery once, from its newest failure, and skips guids that succeeded', () => {
    const a1 = d('a', false, 100);
    const a2 = d('a', false, 200, true);
    const plan = planRepair([d('ok', true, 50), a1, a2, d('b', false, 150), d('b', true, 160, true), d('c', false, 90)]);
    expect(plan.seen).toBe(6);
    expect(plan.guids).toBe(4);
    expect(plan.skippedAlreadyOk).toBe(1);
    expect(plan.failed.map((f) => f.guid).sort()).toEqual(['a', 'c']);
    expect(plan.failed.find((f) => f.guid === 'a')!.deliveryId).toBe(a2.id);
  });
});

describe('pacing', () => {
  const pacing: Pacing = { perMinute: 3, perHour: 5, minuteMs: 60_000, hourMs: 3_600_000, marginMs: 0 };

  it('sends at once while the windows have room', () => {
    expect(nextPacedSlot([], 1_000, pacing)).toBe(1_000);
    expect(nextPacedSlot([0, 10], 1_000, pacing)).toBe(1_000);
  });

  it('waits until the oldest send of a full minute leaves the window', () => {
    expect(nextPacedSlot([0, 10, 20], 1_000, pacing)).toBe(60_000);
  });

  it('waits for the hour when the hourly budget is spent, whatever the minute says', () => {
    expect(nextPacedSlot([0, 70_000, 140_000, 210_000, 280_000], 300_000, pacing)).toBe(3_600_000);
  });

  it('never lets a simulated run exceed either limit, at the default limits too', () => {
    for (const p of [pacing, { ...DEFAULT_PACING, marginMs: 0 }]) {
      const sent: number[] = [];
      let now = 0;
      for (let i = 0; i < p.perHour * 2 + 7; i++) {
        now = nextPacedSlot(sent, now, p) + 5; // each send takes a little time
        sent.push(now);
      }
      expect(maxInAnyWindow(sent, p.minuteMs)).toBeLessThanOrEqual(p.perMinute);
      expect(maxInAnyWindow(sent, p.hourMs)).toBeLessThanOrEqual(p.perHour);
      // …and it uses the budget rather than idling: the first minute is full.
      expect(sent.filter((t) => t < p.minuteMs).length).toBe(p.perMinute);
    }
  });

  it('measures the busiest window of a series of sends', () => {
    expect(maxInAnyWindow([0, 10, 59_999, 60_010, 60_020], 60_000)).toBe(3);
    expect(maxInAnyWindow([], 60_000)).toBe(0);
  });
});

describe('hook targets', () => {
  it('takes an organization or OWNER/REPO, not both', () => {
    expect(parseHookTarget({ org: 'octo-org' })).toEqual({ org: 'octo-org' });
    expect(parseHookTarget({ repo: 'octo-org/alpha' })).toEqual({ owner: 'octo-org', repo: 'alpha' });
    expect('problem' in parseHookTarget({ repo: 'alpha' })).toBe(true);
    expect('problem' in parseHookTarget({ org: 'a', repo: 'a/b' })).toBe(true);
  });
});

describe('hook repair input and carried counts', () => {
  const base = { target: { org: 'octo-org' }, hookId: 1 };

  it('bounds pacing, the per-guid cap and per-run limits with clear messages', () => {
    expect(hookRepairProblems(base)).toEqual([]);
    expect(hookRepairProblems({ ...base, pacing: { perMinute: 81 } }).join()).toMatch(/content-creation limit of 80/);
    expect(hookRepairProblems({ ...base, pacing: { perHour: 501 } }).join()).toMatch(/content-creation limit of 500/);
    expect(hookRepairProblems({ ...base, pacing: { minuteMs: 50 } }).join()).toMatch(/minuteMs must be at least 100/);
    expect(hookRepairProblems({ ...base, maxRedeliveriesPerGuid: 0 }).join()).toMatch(/maxRedeliveriesPerGuid must be a whole number from 1 to 20/);
    expect(hookRepairProblems({ ...base, maxRedeliveriesPerRun: 5_000 }).join()).toMatch(/maxRedeliveriesPerRun/);
    expect(hookRepairProblems({ ...base, maxPagesPerRun: 1_000 }).join()).toMatch(/maxPagesPerRun/);
    expect(hookRepairProblems({ ...base, lookbackMs: 90 * 24 * 3_600_000 }).join()).toMatch(/at most 30 days/);
    expect(hookRepairProblems({ ...base, outage: { initialBackoffMs: 1 } }).join()).toMatch(/outage.initialBackoffMs/);
    expect(hookRepairProblems({ ...base, pauseAfterFailures: 20 }).join()).toMatch(/pauseAfterFailures/);
  });

  it('carries the newest counts within the retention, at most the cap', () => {
    const now = 100 * 24 * 3_600_000;
    const counts = new Map<string, RedeliveryAttempts>();
    counts.set('old', { guid: 'old', attempts: 3, lastAt: now - 8 * 24 * 3_600_000 });
    for (let i = 0; i < MAX_CARRIED_ATTEMPTS + 5; i++) counts.set(`g${i}`, { guid: `g${i}`, attempts: 1, lastAt: now - i });
    const carried = carriedAttempts(counts, now);
    expect(carried).toHaveLength(MAX_CARRIED_ATTEMPTS);
    expect(carried[0].guid).toBe('g0');
    expect(carried.some((a) => a.guid === 'old')).toBe(false);
  });
});

describe('a redelivery accepted but not listed yet (redelivery is asynchronous)', () => {
  const attempt: RedeliveryAttempts = { guid: 'g', attempts: 1, lastAt: 1_000_000, fromDeliveryId: 41 };
  const SETTLE = 300_000;

  it('is awaited while the newest listed delivery of the guid is the one it was redelivered from, within the settle time', () => {
    expect(awaitingRedelivery(attempt, 41, 1_000_000 + 1_000, SETTLE)).toBe(true);
    expect(awaitingRedelivery(attempt, 41, 1_000_000 + SETTLE - 1, SETTLE)).toBe(true);
  });

  it('is not awaited once a newer delivery of the guid is listed (its outcome), or once the settle time has passed (lost)', () => {
    expect(awaitingRedelivery(attempt, 57, 1_000_000 + 1_000, SETTLE)).toBe(false);
    expect(awaitingRedelivery(attempt, 41, 1_000_000 + SETTLE, SETTLE)).toBe(false);
  });

  it('is never awaited without a recorded attempt, or for counts carried from runs that did not record the delivery', () => {
    expect(awaitingRedelivery(undefined, 41, 1_000_000, SETTLE)).toBe(false);
    expect(awaitingRedelivery({ guid: 'g', attempts: 1, lastAt: 1_000_000 }, 41, 1_000_000, SETTLE)).toBe(false);
  });

  it('refuses a settle time outside 0..24 h', () => {
    expect(hookRepairProblems({ target: { org: 'o' }, hookId: 1, redeliverySettleMs: -1 })).toContain('redeliverySettleMs must be a number of milliseconds from 0 to 24 hours');
    expect(hookRepairProblems({ target: { org: 'o' }, hookId: 1, redeliverySettleMs: 60_000 })).toEqual([]);
  });
});
