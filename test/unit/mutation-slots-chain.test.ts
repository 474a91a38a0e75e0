/**
 * One worker's mutation slots granted back to back (`slotSpacingMs` without the tolerance) stay a full
 * spacing apart at the API because the worker releases each no earlier than `chainedReleaseAt` its previous one:
 * the rule itself on random fleets, and the governor link keeping it on an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { acquire, newGovernorState, observe } from '../../src/processes/rate-governor/model';
import { chainedReleaseAt, MUTATION_SEND_MARGIN_MS, MUTATION_SLOT_TOLERANCE_MS, slotSpacingMs, slotStillValid } from '../../src/processes/rate-governor/mutation-slots';
import { linkOnClock } from '../helpers/governor-link';
import type { AcquireGrant } from '../../src/processes/rate-governor/model';

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);

/** A small deterministic random source (mulberry32), so a failing fleet can be replayed. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('chained mutation slots', () => {
  it('spaces slots by the spacing and send margin after the same holder, plus the tolerance after another', () => {
    expect(slotSpacingMs(1_000, true)).toBe(1_000 + MUTATION_SEND_MARGIN_MS);
    expect(slotSpacingMs(1_000, false)).toBe(1_000 + MUTATION_SEND_MARGIN_MS + MUTATION_SLOT_TOLERANCE_MS);
    expect(chainedReleaseAt(5_000, 1_000)).toBe(6_000 + MUTATION_SEND_MARGIN_MS);
    // No spacing configured (LONGHAUL_MUTATION_SPACING_MS=0): no margins either.
    expect(slotSpacingMs(0, false)).toBe(0);
    expect(chainedReleaseAt(5_000, 0)).toBe(5_000);
    // …and no slot to miss: 2,000 starts at once would otherwise miss theirs on a busy worker for nothing.
    expect(slotStillValid(5_000, 60_000, 0)).toBe(true);
    expect(slotStillValid(5_000, 5_000 + MUTATION_SLOT_TOLERANCE_MS + 1, 1_000)).toBe(false);
  });

  it('keeps every two mutations of a random fleet at least the spacing apart at the API, however late within the rules each goes out', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const random = seeded(seed);
      const s = newGovernorState('token-a', { maxSlotWaitMs: 600_000 });
      observe(s, { limit: 5_000, remaining: 5_000, resetInMs: 3_600_000, ageMs: 0 }, T0);
      const lastRelease: Record<string, number> = {};
      const arrivals: number[] = [];
      let now = T0;
      for (let ask = 0; ask < 40; ask++) {
        const worker = `w${Math.floor(random() * 3)}`;
        const grant = acquire(s, { workerId: worker, kind: 'mutation', count: 1 + Math.floor(random() * 3) }, now, () => 0);
        for (const slot of grant.slotTimes!) {
          // The worker wakes up to the tolerance late, then keeps its own chain; past the tolerance it lets the slot go.
          const wake = slot + random() * MUTATION_SLOT_TOLERANCE_MS * 1.2;
          const release = Math.max(wake, chainedReleaseAt(lastRelease[worker] ?? -Infinity, 1_000));
          if (!slotStillValid(slot, release)) continue;
          lastRelease[worker] = release;
          // Between release and the API lie the HTTP core's own steps: up to the send margin.
          arrivals.push(release + random() * MUTATION_SEND_MARGIN_MS);
        }
        now += random() * 2_000;
      }
      arrivals.sort((x, y) => x - y);
      expect(arrivals.length).toBeGreaterThan(40);
      for (let i = 1; i < arrivals.length; i++) expect(arrivals[i] - arrivals[i - 1], `seed ${seed}`).toBeGreaterThanOrEqual(1_000);
    }
  });
});

describe('the governor link on chained slots', () => {
  const call = { method: 'POST', url: 'https://api.github.com/orgs/octo-org/migrations' };

  /** A link on an injected clock whose sleeps overshoot by `late()` (a loaded event loop); grants come from `grants`. */
  const linkOn = (grants: ((now: number) => AcquireGrant)[], late: () => number) => linkOnClock(T0, grants, { late });

  const slotGrant = (slotAt: (now: number) => number) => (now: number): AcquireGrant => ({ granted: 1, slotTimes: [slotAt(now)], grantedAt: now, spacingMs: 1_000, concurrency: 4, window: 1 });

  it('sends its next slot no earlier than spacing + margin after its previous mutation went out late', async () => {
    let lateness = 200;
    const first = T0 + 300;
    const second = first + slotSpacingMs(1_000, true);
    const { link, clock } = linkOn([slotGrant(() => first), slotGrant(() => second)], () => lateness);
    (await link.acquire('mutation', call)).done();
    const firstOut = clock.now;
    expect(firstOut).toBe(first + 200);
    lateness = 0;
    clock.now = first + 900;
    (await link.acquire('mutation', call)).done();
    // Its own slot came 1,150 ms after the first; the first went out 200 ms late, so the second waits for it.
    expect(clock.now).toBe(firstOut + 1_000 + MUTATION_SEND_MARGIN_MS);
    expect(slotStillValid(second, clock.now)).toBe(true);
  });

  it('lets a slot go and asks again when it wakes past the tolerance', async () => {
    // Only the first sleep overshoots.
    const lateness = [MUTATION_SLOT_TOLERANCE_MS + 50];
    const { link, clock, asks } = linkOn([slotGrant((now) => now + 300), slotGrant((now) => now + 300)], () => lateness.shift() ?? 0);
    (await link.acquire('mutation', call)).done();
    expect(asks).toHaveLength(2);
    expect(clock.now).toBe(asks[1] + 300);
  });
});
