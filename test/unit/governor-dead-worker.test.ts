/**
 * A worker SIGKILLed while its mutations were queued for slots (issue 38's backup run): the governor's workflow
 * task was on that worker, so every Update waited out the workflow task timeout (10 s). The survivor's mutation
 * attempts waited for their answers past their send deadlines until the server timed them out (an unknown outcome
 * `sendOnce` looks up for over a minute before sending again), and the dead worker's Updates, handled late, took
 * slots no attempt could use any more. Both are bounded by the attempts' send deadlines.
 */
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { acquire, newGovernorState, observe, SEND_DEADLINE_PASSED, type AcquireGrant, type AcquireRequest, type GovernorState } from '../../src/processes/rate-governor/model';
import { MUTATION_SLOT_LEAD_MS } from '../../src/processes/rate-governor/mutation-slots';
import { ATTEMPT_TIME_SPENT } from '../../src/processes/rate-governor/activities/governor-link';
import { linkOnClock } from '../helpers/governor-link';

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const noJitter = () => 0;
/** The backup tests' setting: mutations 20 ms apart. */
const SPACING = 20;

function fleetGovernor(): GovernorState {
  const s = newGovernorState('backup', { mutationSpacingMs: SPACING });
  observe(s, { limit: 5000, remaining: 5000, resetInMs: 3_600_000, ageMs: 0 }, T0);
  return s;
}

/** 30 export starts of the dead worker, asked at T0 with 7.5 s left to send (a 10 s call timeout), handled at `handledAt`. */
const deadWorkersAsk = (s: GovernorState, handledAt: number, sendBy?: number) =>
  acquire(s, { workerId: 'host-a', kind: 'mutation', count: 30, leadMs: MUTATION_SLOT_LEAD_MS, maxWaitMs: 7_250, ...(sendBy === undefined ? {} : { sendBy }) }, handledAt, noJitter);

describe("a dead worker's queued mutations", () => {
  it('take no slot once their send deadline has passed, so the survivor gets the next one', () => {
    const s = fleetGovernor();
    // Handled after the workflow task timeout: the attempts' deadlines have passed.
    const late = deadWorkersAsk(s, T0 + 10_000, T0 + 7_500);
    expect(late).toMatchObject({ granted: 0, reason: SEND_DEADLINE_PASSED });
    expect(late.retryInMs).toBe(0);
    const survivor = acquire(s, { workerId: 'host-b', kind: 'mutation', count: 1, leadMs: MUTATION_SLOT_LEAD_MS, maxWaitMs: 5_000, sendBy: T0 + 15_500 }, T0 + 10_050, noJitter);
    expect(survivor.granted).toBe(1);
    expect(survivor.slotTimes![0]).toBe(T0 + 10_050 + MUTATION_SLOT_LEAD_MS);
    // Nothing waits on the dead worker's refused starts (no budget is held for them).
    expect(s.mutationsWaiting?.['host-a']).toBeUndefined();
  });

  it('without a send deadline (older workers) still queue the survivor behind unusable slots', () => {
    const s = fleetGovernor();
    const late = deadWorkersAsk(s, T0 + 10_000);
    expect(late.granted).toBeGreaterThan(10);
    const survivor = acquire(s, { workerId: 'host-b', kind: 'mutation', count: 1, leadMs: MUTATION_SLOT_LEAD_MS, maxWaitMs: 2_000 }, T0 + 10_050, noJitter);
    expect(survivor).toMatchObject({ granted: 0, reason: 'mutations queued for the next slots' });
  });

  it('hold slots at most until their send deadline when handled just before it', () => {
    const s = fleetGovernor();
    const grant = deadWorkersAsk(s, T0 + 5_000, T0 + 7_500);
    expect(grant.granted).toBeGreaterThan(0);
    expect(grant.granted).toBeLessThan(30);
    expect(Math.max(...grant.slotTimes!)).toBeLessThanOrEqual(T0 + 7_500);
    // The survivor's next slot follows the last usable one, never the unusable rest.
    const survivor = acquire(s, { workerId: 'host-b', kind: 'mutation', count: 1, leadMs: MUTATION_SLOT_LEAD_MS, maxWaitMs: 5_000, sendBy: T0 + 12_000 }, T0 + 5_050, noJitter);
    expect(survivor.granted).toBe(1);
    expect(survivor.slotTimes![0]).toBeLessThanOrEqual(T0 + 7_500 + 1_000);
  });
});

describe('a mutation whose ask the governor does not answer (its workflow task is on a dead worker)', () => {
  it('fails "not sent" at its send deadline, before the server times the attempt out', async () => {
    const never = (() => new Promise<AcquireGrant>(() => {})) as unknown as (now: number) => AcquireGrant;
    // The deadline is 40 ms of real time away: the guard is a real timer (the injected clock stands still).
    const { link, asks } = linkOnClock(T0, [never], { sendDeadline: () => T0 + 40 });
    const started = Date.now();
    const err = await link.acquire('mutation', { method: 'POST', url: 'https://api.github.com/orgs/big-org/migrations' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).message).toContain('not sent');
    expect((err as ApplicationFailure).message).toContain(ATTEMPT_TIME_SPENT);
    expect(asks).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('a worker whose answers were slow while the other worker died', () => {
  it('asks with a shorter lead again once answers are prompt, so its mutations get slots within their attempts', async () => {
    const s = fleetGovernor();
    let lateMs = 9_000;
    let deadline = T0 + 60_000;
    const refusals: string[] = [];
    const governor = (now: number, req: AcquireRequest) => {
      const grant = acquire(s, req, now, noJitter);
      if (grant.reason) refusals.push(grant.reason);
      return grant;
    };
    const { link, clock } = linkOnClock(T0, Array.from({ length: 200 }, () => governor), { answerLate: () => lateMs, sendDeadline: () => deadline });
    const call = { method: 'POST', url: 'https://api.github.com/orgs/big-org/migrations' };

    // Answers 9 s late (the governor's task on the killed worker): the link learns to ask for slots that far ahead.
    (await link.acquire('mutation', call)).done();

    // Answers prompt again: fresh attempts, 7.5 s each. A lead still 9 s long fits no attempt, and every ask would be
    // refused "send deadline before the next slot" for ever; measured on every answer, the lead comes down.
    lateMs = 50;
    refusals.length = 0;
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 3 && !outcomes.includes('granted'); attempt++) {
      // Each attempt of a 10 s call timeout may send for 7.5 s after it first asks (`attemptSendDeadline`).
      deadline = clock.now + 7_500;
      outcomes.push(
        await link.acquire('mutation', call).then(
          (ticket) => (ticket.done(), 'granted'),
          (err: Error) => err.message,
        ),
      );
    }
    expect(outcomes).toEqual(['granted']);
    expect(refusals).toContain(SEND_DEADLINE_PASSED);
  });
});
