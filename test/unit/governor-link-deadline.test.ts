/**
 * A mutation waiting in the governor link for its slot must not outlive its activity attempt: once the server
 * times the attempt out it schedules the next one, and a request the first attempt still sent reaches the API
 * twice (200 migrations sent 644 unlocks for 600 locked repositories). Past the attempt's send deadline the
 * link sends nothing and fails "not sent"; a slot its request could not use goes to the next mutation.
 */
import { describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { ATTEMPT_TIME_SPENT } from '../../src/processes/rate-governor/activities/governor-link';
import { linkOnClock } from '../helpers/governor-link';
import { ATTEMPT_SEND_MARGIN_MS, attemptSendDeadline } from '../../src/processes/rate-governor/activities/activity-time';
import type { AcquireGrant } from '../../src/processes/rate-governor/model';
import { FailureType } from '../../src/http/retry-policy';

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const call = { method: 'DELETE', url: 'https://api.github.com/orgs/octo-org/migrations/1/repos/r/lock' };

/** A link on an injected clock; `deadline` is the running attempt's; each ask takes the next grant. */
const linkOn = (grants: ((now: number) => AcquireGrant)[], deadline: () => number | undefined, late = () => 0) => linkOnClock(T0, grants, { sendDeadline: deadline, late });

const slots = (...at: ((now: number) => number)[]) => (now: number): AcquireGrant => ({ granted: at.length, slotTimes: at.map((f) => f(now)), grantedAt: now, spacingMs: 1_000, concurrency: 4, window: 1 });

async function notSent(acquiring: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await acquiring.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  const failure = err as ApplicationFailure;
  // A refusal: the workflow's kit knows nothing reached the API (sendOnce sends again, keepTrying retries).
  expect(failure.type).toBe(FailureType.SecondaryRateLimit);
  expect(failure.message).toContain('not sent');
  expect(failure.category).toBe(ApplicationFailureCategory.BENIGN);
  return failure;
}

describe("a mutation's send deadline", () => {
  it('is the attempt start plus its start-to-close timeout, less the send margin', async () => {
    expect(attemptSendDeadline(() => T0)).toBeUndefined();
    const long = new MockActivityEnvironment({ startToCloseTimeoutMs: 60_000, scheduleToCloseTimeoutMs: 0 });
    const clock = { now: T0 };
    const first = await long.run(async () => {
      const at = attemptSendDeadline(() => clock.now);
      clock.now += 5_000;
      // The same attempt keeps the deadline of its first ask.
      expect(attemptSendDeadline(() => clock.now)).toBe(at);
      return at;
    });
    expect(first).toBe(T0 + 60_000 - ATTEMPT_SEND_MARGIN_MS);
    // A short timeout keeps back a quarter of it.
    const short = new MockActivityEnvironment({ startToCloseTimeoutMs: 8_000, scheduleToCloseTimeoutMs: 0 });
    expect(await short.run(async () => attemptSendDeadline(() => T0))).toBe(T0 + 6_000);
  });

  it('fails a mutation whose slot lies past it, and gives the slot to the next mutation', async () => {
    let deadline = T0 + 5_000;
    const { link, clock, asks } = linkOn([slots((now) => now + 8_000)], () => deadline);
    const failure = await notSent(link.acquire('mutation', call));
    expect(failure.message).toContain(ATTEMPT_TIME_SPENT);
    // Nothing waited for a slot it could not use.
    expect(clock.now).toBe(T0);
    deadline = T0 + 60_000;
    (await link.acquire('mutation', call)).done();
    expect(asks).toHaveLength(1);
    expect(clock.now).toBe(T0 + 8_000);
  });

  it('fails at once rather than wait out a refusal that ends past it', async () => {
    const refused = (): AcquireGrant => ({ granted: 0, retryInMs: 8_000, reason: 'mutations queued for the next slots', concurrency: 4, window: 1 });
    const { link, sleeps } = linkOn([refused], () => T0 + 5_000);
    await notSent(link.acquire('mutation', call));
    expect(sleeps).toEqual([]);
  });

  it('sends nothing when a loaded worker wakes for its slot past it', async () => {
    const { link, clock } = linkOn([slots((now) => now + 300)], () => T0 + 1_100, () => 900);
    await notSent(link.acquire('mutation', call));
    expect(clock.now).toBe(T0 + 1_200);
  });

  it('leaves reads alone: a read sent twice costs only budget', async () => {
    const read = (): AcquireGrant => ({ granted: 1, concurrency: 4, window: 1 });
    const { link } = linkOn([read], () => T0 - 1);
    (await link.acquire('read', { method: 'GET', url: call.url })).done();
  });
});
