/**
 * A governor link on an injected clock, for unit tests: each `acquire` Update takes the next of `grants`, the
 * gate check before a far slot finds the gate open, and sleeps advance the clock, overshooting by `late()`
 * (a loaded event loop).
 */
import type { Client } from '@temporalio/client';
import { GovernorLink } from '../../src/processes/rate-governor/activities/governor-link';
import type { AcquireGrant } from '../../src/processes/rate-governor/model';

export function linkOnClock(t0: number, grants: ((now: number) => AcquireGrant)[], opts: { late?: () => number; sendDeadline?: () => number | undefined } = {}) {
  const clock = { now: t0 };
  const asks: number[] = [];
  const sleeps: number[] = [];
  const client = {
    workflow: {
      executeUpdateWithStart: async () => {
        asks.push(clock.now);
        return grants.shift()!(clock.now);
      },
      getHandle: () => ({ query: async () => ({ gate: 'open' }) }),
    },
  } as unknown as Client;
  const link = new GovernorLink({
    credential: 'default',
    client: () => client,
    taskQueue: () => 'q',
    workerId: 'w1',
    clock: () => clock.now,
    random: () => 0,
    sendDeadline: opts.sendDeadline,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.now += Math.max(0, ms) + (opts.late?.() ?? 0);
    },
  });
  return { link, clock, asks, sleeps };
}
