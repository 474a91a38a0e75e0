/**
 * The fleet-wide budget's decisions (`src/processes/rate-governor/model.ts`), on an injected clock and random source:
 * what the `rateGovernor` workflow grants, refuses and remembers for every worker of a credential.
 */
import { describe, expect, it } from 'vitest';
import {
  acquire,
  acquireRequestProblems,
  MUTATION_SLOT_TOLERANCE_MS,
  newGovernorState,
  observe,
  reportLimit,
  reserveOf,
  snapshot,
  type GovernorState,
} from '../../src/processes/rate-governor/model';
import {
  gateCheckAheadMs,
  MAX_MUTATION_SLOT_LEAD_MS,
  MUTATION_SEND_MARGIN_MS,
  MUTATION_SLOT_LEAD_MS,
  nextSlotLead,
  slotLeadFor,
  slotStillValid,
} from '../../src/processes/rate-governor/mutation-slots';

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
  it('gives mutations slots the spacing plus send margin apart within one worker, plus the tolerance across workers', () => {
    const s = known();
    const a = acquire(s, { workerId: 'w1', kind: 'mutation', count: 2 }, T0, noJitter);
    const b = acquire(s, { workerId: 'w2', kind: 'mutation', count: 1 }, T0 + 10, noJitter);
    const c = acquire(s, { workerId: 'w2', kind: 'mutation', count: 1 }, T0 + 20, noJitter);
    expect(a).toMatchObject({ spacingMs: 1_000 });
    const [a1, a2] = a.slotTimes!;
    expect(a2 - a1).toBe(1_000 + MUTATION_SEND_MARGIN_MS);
    expect(b.slotTimes![0] - a2).toBe(1_000 + MUTATION_SLOT_TOLERANCE_MS + MUTATION_SEND_MARGIN_MS);
    // The holder is remembered across asks: w2's second ask follows its own slot.
    expect(c.slotTimes![0] - b.slotTimes![0]).toBe(1_000 + MUTATION_SEND_MARGIN_MS);
  });

  it('refuses mutation slots further out than the longest slot wait instead of holding them', () => {
    // One worker's slots 1.15 s apart from 250 ms ahead: three fit within 3.5 s.
    const s = known(59, { maxSlotWaitMs: 3_500 });
    const grant = acquire(s, { workerId: 'w1', kind: 'mutation', count: 5 }, T0, noJitter);
    expect(grant.granted).toBe(3);
    expect(grant.retryInMs).toBeGreaterThan(0);
  });

  it("grants no slot past the asking attempts' time left, and leaves the queue where it was", () => {
    // Slots from 250 ms ahead, 1.15 s apart: within 2.5 s only two, however long the governor would hold.
    const s = known(59, { maxSlotWaitMs: 30_000 });
    const grant = acquire(s, { workerId: 'w1', kind: 'mutation', count: 5, maxWaitMs: 2_500 }, T0, noJitter);
    expect(grant.slotTimes).toEqual([T0 + 250, T0 + 250 + 1_000 + MUTATION_SEND_MARGIN_MS]);
    expect(grant.retryInMs).toBeGreaterThanOrEqual(0);
    // The next ask continues from the last slot granted, not from one that was refused.
    const next = acquire(s, { workerId: 'w1', kind: 'mutation', count: 1 }, T0, noJitter);
    expect(next.slotTimes).toEqual([grant.slotTimes![1] + 1_000 + MUTATION_SEND_MARGIN_MS]);
    expect(acquireRequestProblems({ workerId: 'w1', kind: 'mutation', count: 1, maxWaitMs: Number.NaN })).toEqual(['maxWaitMs must be a non-negative number']);
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

/**
 * The fleet bench's stall (6 migrations + 20 feeds on a loaded machine): a worker's mutation asks against
 * the governor, each answer arriving `delayMs` after the governor dated it (its workflow task's start),
 * while feed reads keep arriving every 100 ms. A slot further out is re-checked (a gate Query, as slow as
 * the answers) shortly before it. A worker sends at its slot or up to the tolerance later, and otherwise
 * lets the slot go and asks again at once (the worker link's protocol).
 */
function mutationsUnderSlowAnswers(opts: { delays: number[]; mutationsEach: number; adaptive: boolean; maxAsks: number }) {
  const s = newGovernorState('token-a');
  observe(s, { limit: 5_000, remaining: 5_000, resetInMs: 3_600_000, ageMs: 0 }, T0);
  const workers = opts.delays.map((delayMs, i) => ({ id: `w${i + 1}`, delayMs, askAt: T0 + i * 10, lead: MUTATION_SLOT_LEAD_MS, left: opts.mutationsEach, missed: 0 }));
  const sends: number[] = [];
  let readAt = T0;
  let readsGranted = 0;
  for (let asks = 0; asks < opts.maxAsks; asks++) {
    const live = workers.filter((w) => w.left > 0);
    if (live.length === 0) break;
    const w = live.reduce((a, b) => (b.askAt < a.askAt ? b : a));
    for (; readAt <= w.askAt; readAt += 100) readsGranted += acquire(s, { workerId: 'feeds', kind: 'read', count: 1 }, readAt, noJitter).granted;
    const grant = acquire(s, { workerId: w.id, kind: 'mutation', count: 1, ...(opts.adaptive ? { leadMs: w.lead } : {}) }, w.askAt, noJitter);
    if (grant.granted === 0) {
      // Slots queued further out than the longest slot wait: ask again later.
      w.askAt += grant.retryInMs!;
      continue;
    }
    const slot = grant.slotTimes![0];
    const received = w.askAt + w.delayMs;
    const lateMs = received - grant.grantedAt!;
    if (opts.adaptive) w.lead = nextSlotLead(w.lead, lateMs, false);
    let ready = received;
    const ahead = gateCheckAheadMs(w.lead);
    if (slot - ready > ahead + 100) {
      ready = slot - ahead + w.delayMs;
      if (opts.adaptive) w.lead = nextSlotLead(w.lead, w.delayMs, false);
    }
    const sendAt = Math.max(ready, slot);
    if (slotStillValid(slot, sendAt)) {
      sends.push(sendAt);
      w.left--;
      w.askAt = sendAt + 50; // the next migration's start asks right after
    } else {
      w.missed++;
      if (opts.adaptive) w.lead = nextSlotLead(w.lead, lateMs, true);
      w.askAt = received;
    }
  }
  return { sends: sends.sort((a, b) => a - b), readsGranted, missed: workers.map((w) => w.missed), spanMs: readAt - T0 };
}

describe('rate governor mutation slots under slow answers', () => {
  it('starves mutations while reads flow when answers arrive later than the fixed lead plus the tolerance (the bench stall)', () => {
    // 800 ms from the governor's task to the worker: more than 250 ms lead + 300 ms tolerance.
    const run = mutationsUnderSlowAnswers({ delays: [800, 900, 1_000], mutationsEach: 2, adaptive: false, maxAsks: 300 });
    // Near slots arrive after their tolerance; far ones (queued behind the dropped slots) are re-checked
    // 400 ms before and that check is as slow: not one mutation goes out over minutes, every slot is thrown away.
    expect(run.sends).toHaveLength(0);
    expect(run.missed.reduce((a, b) => a + b, 0)).toBeGreaterThan(200);
    expect(run.spanMs).toBeGreaterThan(120_000);
    expect(run.readsGranted).toBeGreaterThan(1_000);
  });

  it('gets every mutation through once workers ask as far ahead as their answers are late, still spaced by more than the configured gap', () => {
    const run = mutationsUnderSlowAnswers({ delays: [800, 900, 2_500], mutationsEach: 2, adaptive: true, maxAsks: 300 });
    expect(run.sends).toHaveLength(6);
    // Each worker misses at most its first slot before its lead covers its answers' delay.
    for (const m of run.missed) expect(m).toBeLessThanOrEqual(1);
    for (let i = 1; i < run.sends.length; i++) expect(run.sends[i] - run.sends[i - 1]).toBeGreaterThanOrEqual(1_000);
    expect(run.readsGranted).toBeGreaterThan(0);
  });

  it('keeps a worker whose answers grow slower catching up instead of missing for ever', () => {
    let lead = MUTATION_SLOT_LEAD_MS;
    const delays = [400, 900, 1_800, 3_500, 3_500];
    let misses = 0;
    for (const delay of delays) {
      // The slot the governor grants lies `lead` ahead of its clock; the answer arrives `delay` after it.
      if (!slotStillValid(T0 + lead, T0 + delay)) {
        misses++;
        lead = nextSlotLead(lead, delay, true);
      } else lead = nextSlotLead(lead, delay, false);
    }
    expect(misses).toBeLessThanOrEqual(3);
    expect(slotStillValid(T0 + lead, T0 + 3_500)).toBe(true);
    // Fast answers again: the lead decays back towards the least one, never below it.
    for (let i = 0; i < 40; i++) lead = nextSlotLead(lead, 10, false);
    expect(lead).toBe(MUTATION_SLOT_LEAD_MS + 10);
    expect(nextSlotLead(MAX_MUTATION_SLOT_LEAD_MS, 60_000, true)).toBe(MAX_MUTATION_SLOT_LEAD_MS);
  });

  it('grants the first slot as far ahead as the asker needs, within bounds, without narrowing the spacing', () => {
    expect(slotLeadFor(undefined, 30_000)).toBe(MUTATION_SLOT_LEAD_MS);
    expect(slotLeadFor(50, 30_000)).toBe(MUTATION_SLOT_LEAD_MS);
    expect(slotLeadFor(60_000, 30_000)).toBe(MAX_MUTATION_SLOT_LEAD_MS);
    expect(slotLeadFor(60_000, 3_000)).toBe(1_500);
    const s = known();
    const a = acquire(s, { workerId: 'w1', kind: 'mutation', count: 1, leadMs: 2_000 }, T0, noJitter);
    expect(a).toMatchObject({ slotTimes: [T0 + 2_000], grantedAt: T0 });
    const b = acquire(s, { workerId: 'w2', kind: 'mutation', count: 1 }, T0 + 10, noJitter);
    expect(b.slotTimes![0] - a.slotTimes![0]).toBeGreaterThanOrEqual(1_000 + MUTATION_SLOT_TOLERANCE_MS + MUTATION_SEND_MARGIN_MS);
  });

  it('refuses an acquire request with a bad lead before it reaches the governor', () => {
    expect(acquireRequestProblems({ workerId: 'w1', kind: 'mutation', count: 1, leadMs: -5 })).toEqual(['leadMs must be a non-negative number']);
    expect(acquireRequestProblems({ workerId: 'w1', kind: 'mutation', count: 1, leadMs: 800 })).toEqual([]);
  });
});

describe('rate governor: mutations before reads on a spent budget', () => {
  /** The bench's feeds: a crowd of refused reads returns at every reset, before the one refused mutation. */
  function windowsUntilMutation(s: GovernorState, windows: number): number | undefined {
    const reads = acquire(s, { workerId: 'feeds', kind: 'read', count: 100 }, T0, noJitter);
    expect(reads.granted).toBe(56);
    const refused = acquire(s, { workerId: 'w1', kind: 'mutation', count: 1 }, T0 + 100, noJitter);
    expect(refused).toMatchObject({ granted: 0 });
    let resetAt = T0 + 100 + refused.retryInMs!;
    for (let n = 1; n <= windows; n++) {
      // The window's reset is renewed by every answer (10 s windows, margin 1 s).
      observe(s, { limit: 60, remaining: 60, resetInMs: 10_000, ageMs: 0 }, resetAt);
      acquire(s, { workerId: 'feeds', kind: 'read', count: 100 }, resetAt + 10, noJitter);
      acquire(s, { workerId: 'feeds', kind: 'read', count: 100 }, resetAt + 300, noJitter);
      const grant = acquire(s, { workerId: 'w1', kind: 'mutation', count: 1 }, resetAt + 800, noJitter);
      if (grant.granted === 1) return n;
      resetAt = resetAt + 800 + grant.retryInMs!;
    }
    return undefined;
  }

  it('leaves a refused mutation its share of the next window although the reads ask first', () => {
    const s = known();
    expect(windowsUntilMutation(s, 10)).toBe(1);
    // Its hold is gone once it was granted: the reads have the rest of the window again.
    expect(s.mutationsWaiting).toEqual({});
  });

  it('retries reads held back for a mutation soon rather than at the reset, and drops the hold of a mutation that never comes back', () => {
    const s = known();
    acquire(s, { workerId: 'feeds', kind: 'read', count: 56 }, T0, noJitter);
    const refused = acquire(s, { workerId: 'w1', kind: 'mutation', count: 2 }, T0 + 100, noJitter);
    expect(refused.granted).toBe(0);
    const reset = T0 + 11_000;
    const held = acquire(s, { workerId: 'feeds', kind: 'read', count: 100 }, reset, noJitter);
    expect(held.granted).toBe(55);
    expect(held.retryInMs).toBe(1_000);
    expect(held.reason).toContain('2 waiting mutation');
    // w1 died: after its retry time, the jitter and the grace, the held permits go to reads.
    const later = reset + 1_500 + 5_001;
    expect(acquire(s, { workerId: 'feeds', kind: 'read', count: 100 }, later, noJitter).granted).toBe(2);
  });

  it('holds nothing for mutations that wait only for a slot further out than the longest slot wait', () => {
    // One worker's slots 1.15 s apart from 250 ms ahead: three fit within 3.5 s.
    const s = known(59, { maxSlotWaitMs: 3_500 });
    const grant = acquire(s, { workerId: 'w1', kind: 'mutation', count: 5 }, T0, noJitter);
    expect(grant.granted).toBe(3);
    expect(s.mutationsWaiting).toEqual({});
    expect(acquire(s, { workerId: 'feeds', kind: 'read', count: 100 }, T0 + 10, noJitter).granted).toBe(53);
  });
});
