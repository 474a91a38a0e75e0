/**
 * A governor link on an injected clock, for unit tests: each `acquire` Update takes the next of `grants` (given the
 * request), its answer arrives `answerLate()` after it was decided, the gate check before a far slot finds the gate
 * open, and sleeps advance the clock, overshooting by `late()` (a loaded event loop).
 */
import type { Client } from '@temporalio/client';
import { GovernorLink } from '../../src/processes/rate-governor/activities/governor-link';
import type { AcquireGrant, AcquireRequest } from '../../src/processes/rate-governor/model';

export function linkOnClock(
  t0: number,
  grants: ((now: number, req: AcquireRequest) => AcquireGrant)[],
  opts: { late?: () => number; answerLate?: () => number; sendDeadline?: () => number | undefined } = {},
) {
  const clock = { now: t0 };
  const asks: number[] = [];
  const sleeps: number[] = [];
  const client = {
    workflow: {
      executeUpdateWithStart: async (_update: unknown, { args: [req] }: { args: [AcquireRequest] }) => {
        asks.push(clock.now);
        const grant = grants.shift()!(clock.now, req);
        clock.now += opts.answerLate?.() ?? 0;
        return grant;
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
