/**
 * The fleet-wide budget's decisions (`common/rate-governor.ts`), on an injected clock and random source:
 * what the `rateGovernor` workflow grants, refuses and remembers for every worker of a credential.
 */
import { describe, expect, it } from 'vitest';
import {
  acquire,
  MUTATION_SLOT_TOLERANCE_MS,
  newGovernorState,
  observe,
  reportLimit,
  reserveOf,
  snapshot,
  type GovernorState,
} from '../../src/common/rate-governor';

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const noJitter = () => 0;

/** A governor that has seen one response: limit 60, `remaining` left, window resetting in 10 s. */
function known(remaining = 59, config = {}): GovernorState {
  const s = newGovernorState('token-a', config);
  observe(s, { limit: 60, remaining, resetInMs: 10_000, ageMs: 0 }, T0);
  return s;
}

describe('rate governor budget', () => {
  it('grants every request of a windowless API (Google) while the gate is open, and none once a 429 was reported', () => {
    const s = newGovernorState('google', { windowless: true });
    expect(acquire(s, { workerId: 'w1', kind: 'read', count: 30 }, T0, noJitter)).toMatchObject({ granted: 30 });
    expect(acquire(s, { workerId: 'w2', kind: 'read', count: 30 }, T0 + 5, noJitter).granted).toBe(30);
    reportLimit(s, { kind: 'secondary', waitMs: 8_000, ageMs: 100, message: 'RESOURCE_EXHAUSTED', workerId: 'w1' }, T0 + 200);
    const refused = acquire(s, { workerId: 'w2', kind: 'read', count: 4 }, T0 + 300, noJitter);
    expect(refused).toMatchObject({ granted: 0, retryInMs: T0 + 100 + 8_000 - (T0 + 300) });
    expect(refused.reason).toContain('RESOURCE_EXHAUSTED');
    expect(acquire(s, { workerId: 'w2', kind: 'read', count: 4 }, T0 + 8_100, noJitter).granted).toBe(4);
  });

  it('lets one probe out while the limit is unknown and asks for its headers, then grants from the learned budget', () => {
    const s = newGovernorState('token-a');
    const first = acquire(s, { workerId: 'w1', kind: 'read', count: 3 }, T0, noJitter);
    expect(first).toMatchObject({ granted: 1, observe: true });
    expect(first.retryInMs).toBeGreaterThan(0);
    expect(acquire(s, { workerId: 'w2', kind: 'read', count: 1 }, T0 + 10, noJitter).granted).toBe(0);

    const next = acquire(s, { workerId: 'w2', kind: 'read', count: 100, observation: { limit: 60, remaining: 59, resetInMs: 10_000, ageMs: 0 } }, T0 + 20, noJitter);
    // 5 % of 60 is kept back for requests that cross the reset.
    expect(reserveOf(s)).toBe(3);
    expect(next.granted).toBe(56);
    // The rest wait for the reset the response told (plus the margin).
    expect(next.retryInMs).toBe(10_000 + 1_000);
  });

  it('refuses once the window budget is spent, with a jittered retry after the reset', () => {
    const s = known();
    expect(acquire(s, { workerId: 'w1', kind: 'read', count: 56 }, T0, noJitter).granted).toBe(56);
    const refused = acquire(s, { workerId: 'w2', kind: 'read', count: 4 }, T0 + 100, () => 0.5);
    expect(refused.granted).toBe(0);
    expect(refused.retryInMs).toBe(11_000 - 100 + 750);
    expect(snapshot(s, T0 + 100)).toMatchObject({ gate: 'closed', queued: 4, budget: 0 });
  });

  it('opens the next window after the reset with the whole budget, less slots already promised to it', () => {
    const s = known();
    acquire(s, { workerId: 'w1', kind: 'read', count: 56 }, T0, noJitter);
    s.debt = 2;
    const after = acquire(s, { workerId: 'w1', kind: 'read', count: 100 }, T0 + 11_000, noJitter);
    expect(after.granted).toBe(60 - 3 - 2);
  });

  it('never raises the budget from a response, but lowers it when another consumer spent the token', () => {
    const s = known();
    acquire(s, { workerId: 'w1', kind: 'read', count: 10 }, T0, noJitter);
    observe(s, { limit: 60, remaining: 58, resetInMs: 9_000, ageMs: 0 }, T0 + 1_000);
    expect(s.budget).toBe(46);
    observe(s, { limit: 60, remaining: 20, resetInMs: 8_000, ageMs: 0 }, T0 + 2_000);
    expect(s.budget).toBe(17);
  });

  it('closes the gate for every worker when one reports a limited answer, until the wait has passed', () => {
    const s = known();
    reportLimit(s, { kind: 'secondary', waitMs: 30_000, ageMs: 200, message: 'secondary rate limit', workerId: 'w1' }, T0 + 1_000);
    const other = acquire(s, { workerId: 'w2', kind: 'read', count: 1 }, T0 + 1_100, noJitter);
    expect(other.granted).toBe(0);
    expect(other.retryInMs).toBe(T0 + 800 + 30_000 - (T0 + 1_100));
    expect(snapshot(s, T0 + 1_100)).toMatchObject({ gate: 'closed', blockedUntil: T0 + 30_800 });
    expect(acquire(s, { workerId: 'w2', kind: 'read', count: 1 }, T0 + 30_800, noJitter).granted).toBe(1);
  });

  it('spends the whole window on a primary limit report', () => {
    const s = known();
    reportLimit(s, { kind: 'primary', waitMs: 5_000, ageMs: 0, message: 'API rate limit exceeded', workerId: 'w1' }, T0);
    expect(acquire(s, { workerId: 'w2', kind: 'read', count: 1 }, T0 + 6_000, noJitter).granted).toBe(0);
  });
});

describe('rate governor pacing', () => {
  it('gives mutations slots at least the configured spacing apart across workers', () => {
    const s = known();
    const a = acquire(s, { workerId: 'w1', kind: 'mutation', count: 2 }, T0, noJitter);
    const b = acquire(s, { workerId: 'w2', kind: 'mutation', count: 1 }, T0 + 10, noJitter);
    const slots = [...a.slotTimes!, ...b.slotTimes!];
    expect(slots).toHaveLength(3);
    for (let i = 1; i < slots.length; i++) expect(slots[i] - slots[i - 1]).toBeGreaterThanOrEqual(1_000 + MUTATION_SLOT_TOLERANCE_MS);
  });

  it('refuses mutation slots further out than the longest slot wait instead of holding them', () => {
    const s = known(59, { maxSlotWaitMs: 3_000 });
    const grant = acquire(s, { workerId: 'w1', kind: 'mutation', count: 5 }, T0, noJitter);
    expect(grant.granted).toBe(3);
    expect(grant.retryInMs).toBeGreaterThan(0);
  });

  it('keeps content creation under the per-minute allowance for all hooks together', () => {
    const s = known(59, { contentPerMinute: 3, mutationSpacingMs: 0, maxSlotWaitMs: 120_000 });
    const slots = acquire(s, { workerId: 'w1', kind: 'content', count: 5 }, T0, noJitter).slotTimes!;
    expect(slots).toHaveLength(5);
    // The fourth waits until the first leaves the minute.
    expect(slots[3] - slots[0]).toBeGreaterThanOrEqual(60_000);
  });

  it('closes content creation only, for every worker, after a 422 "spammed"', () => {
    const s = known();
    reportLimit(s, { kind: 'content', waitMs: 60_000, ageMs: 0, message: 'This endpoint has been spammed.', workerId: 'w1' }, T0);
    expect(acquire(s, { workerId: 'w2', kind: 'content', count: 1 }, T0 + 1, noJitter)).toMatchObject({ granted: 0, retryInMs: 59_999 });
    expect(acquire(s, { workerId: 'w2', kind: 'mutation', count: 1 }, T0 + 2, noJitter).granted).toBe(1);
    expect(acquire(s, { workerId: 'w2', kind: 'read', count: 1 }, T0 + 3, noJitter).granted).toBe(1);
    expect(snapshot(s, T0 + 3).contentBlockedUntil).toBe(T0 + 60_000);
  });

  it('splits the fleet-wide concurrency cap over the workers that asked recently', () => {
    const s = known(59, { maxConcurrent: 50, workerTtlMs: 30_000 });
    expect(acquire(s, { workerId: 'w1', kind: 'read', count: 1 }, T0, noJitter).concurrency).toBe(50);
    acquire(s, { workerId: 'w2', kind: 'read', count: 1 }, T0, noJitter);
    expect(acquire(s, { workerId: 'w3', kind: 'read', count: 1 }, T0, noJitter).concurrency).toBe(16);
    // w1 and w2 went quiet (or were killed): w3 gets the whole cap again.
    expect(acquire(s, { workerId: 'w3', kind: 'read', count: 1 }, T0 + 40_000, noJitter).concurrency).toBe(50);
  });
});

describe('rate governor refunds', () => {
  it('gives back permits of requests the server did not count (304), only to the window they came from', () => {
    const s = known();
    const grant = acquire(s, { workerId: 'w1', kind: 'read', count: 56 }, T0, noJitter);
    expect(acquire(s, { workerId: 'w1', kind: 'read', count: 1, refunds: [{ window: grant.window, count: 2 }] }, T0 + 10, noJitter).granted).toBe(1);
    // A refund from a window that has since reset is dropped.
    const next = acquire(s, { workerId: 'w1', kind: 'read', count: 100, refunds: [{ window: grant.window, count: 5 }] }, T0 + 11_000, noJitter);
    expect(next.granted).toBe(57);
  });
});
