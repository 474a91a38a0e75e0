/**
 * A worker that shuts down cancels its running activities and waits for them. A request waiting on the rate
 * governor (an Update no worker will answer once every worker is stopping, or a wait for the next window) must
 * end with the cancellation, not hold the shutdown: bench:fleet's restarted worker hung for 12 minutes in
 * DRAINING before this.
 */
import { describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { CancelledFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { GovernorLink } from '../../src/processes/rate-governor/activities/governor-link';

const call = { method: 'GET', url: 'https://api.github.com/orgs/octo-org/migrations/1' };

function linkWith(update: () => Promise<unknown>, sleep?: (ms: number) => Promise<void>): GovernorLink {
  const client = { workflow: { executeUpdateWithStart: update } } as unknown as Client;
  return new GovernorLink({ credential: 'default', client: () => client, taskQueue: () => 'q', workerId: 'w1', sleep });
}

describe('the governor link under cancellation', () => {
  it('gives up an ask the governor never answers when the activity is cancelled', async () => {
    const env = new MockActivityEnvironment();
    let asked!: () => void;
    const askedOnce = new Promise<void>((r) => (asked = r));
    const link = linkWith(() => {
      asked();
      return new Promise(() => undefined); // no worker left to run the governor's task
    });
    const acquiring = env.run(() => link.acquire('read', call));
    await askedOnce;
    env.cancel('WORKER_SHUTDOWN');
    await expect(acquiring).rejects.toBeInstanceOf(CancelledFailure);
  });

  it('gives up a wait for the next window when the activity is cancelled', async () => {
    const env = new MockActivityEnvironment();
    let waiting!: () => void;
    const waitingOnce = new Promise<void>((r) => (waiting = r));
    const link = linkWith(
      async () => ({ granted: 0, retryInMs: 15_000, reason: 'request budget of the window spent', concurrency: 1, window: 1 }),
      () => {
        waiting();
        return new Promise(() => undefined); // the wait outlasts the test
      },
    );
    const acquiring = env.run(() => link.acquire('read', call));
    await waitingOnce;
    env.cancel('WORKER_SHUTDOWN');
    await expect(acquiring).rejects.toBeInstanceOf(CancelledFailure);
  });

  it('still answers outside an activity (tools and tests call it without one)', async () => {
    const link = linkWith(async () => ({ granted: 1, concurrency: 1, window: 1 }));
    const ticket = await link.acquire('read', call);
    expect(ticket).toBeDefined();
    ticket.done();
  });
});
