/** The decision logic of the kit's `sendOnce`: pure, in milliseconds. */
import { describe, expect, it } from 'vitest';
import {
  afterLookupFailed,
  afterNotFound,
  afterSendFailed,
  DEFAULT_OUTAGE,
  defaultSendOnceGraceMs,
  FRESH_SEND,
  type SendOnceAction,
  type SendOnceConfig,
} from '../../src/workflows/kit';
import type { FailureFacts } from '../../src/common/activity-failures';
import { migrationInputProblems } from '../../src/processes/org-migration/model';
import { apiKeyDeleteProblems, dnsChangeProblems } from '../../src/processes/google-operation/input';

const CONFIG: SendOnceConfig = { maxTries: 6, graceMs: defaultSendOnceGraceMs(60_000), outage: DEFAULT_OUTAGE, conflictTypes: ['AlreadyExistsError'] };
const UNKNOWN: FailureFacts = { kind: 'transient', type: 'ActivityTimeout', message: 'activity timed out', notProcessed: false };
const LIMITED: FailureFacts = { kind: 'transient', type: 'SecondaryRateLimitError', message: '403 secondary', notProcessed: true, demandedDelayMs: 61_000 };
const INVALID: FailureFacts = { kind: 'permanent', type: 'ValidationFailedError', message: '422 repositories locked', notProcessed: false };
const LOOKUP_DOWN: FailureFacts = { kind: 'transient', type: 'ServerError', message: '502', notProcessed: false };

/** Runs lookups that find nothing until the decision is no longer "recover"; returns it and when it came. */
function lookUntilDecided(action: SendOnceAction, now: number, found = () => false, lookupFails = (_t: number) => false, config = CONFIG) {
  let lookups = 0;
  while (action.do === 'recover') {
    now += action.afterMs;
    lookups++;
    if (found()) return { action, now, lookups, found: true };
    action = lookupFails(now) ? afterLookupFailed(action.state, LOOKUP_DOWN, now, config) : afterNotFound(action.state, now, config);
  }
  return { action, now, lookups, found: false };
}

describe('sendOnce decisions', () => {
  it('defaults the grace period to twice the call timeout plus a minute for the server cutoff', () => {
    expect(defaultSendOnceGraceMs(60_000)).toBe(180_000);
    expect(defaultSendOnceGraceMs(1_000)).toBe(62_000);
  });

  it('after an unknown outcome looks up at once and keeps looking for the whole grace period before re-sending', () => {
    const first = afterSendFailed(FRESH_SEND, UNKNOWN, 10_000, CONFIG);
    expect(first).toMatchObject({ do: 'recover', afterMs: 0 });
    const { action, now, lookups } = lookUntilDecided(first, 10_000);
    expect(action.do).toBe('send');
    expect(now).toBeGreaterThanOrEqual(10_000 + CONFIG.graceMs);
    expect(now).toBeLessThan(10_000 + CONFIG.graceMs + 1); // the last lookup lands at the end of the grace
    expect(lookups).toBeGreaterThan(10);
  });

  describe('with bounded lookups (runs since issue 31)', () => {
    const BOUNDED: SendOnceConfig = { ...CONFIG, boundedLookups: true };

    it('looks up at once and once more when the grace period is spent, then sends again', () => {
      const first = afterSendFailed(FRESH_SEND, UNKNOWN, 10_000, BOUNDED);
      expect(first).toMatchObject({ do: 'recover', afterMs: 0 });
      const { action, now, lookups } = lookUntilDecided(first, 10_000, undefined, undefined, BOUNDED);
      expect(action.do).toBe('send');
      expect(now).toBe(10_000 + BOUNDED.graceMs);
      expect(lookups).toBe(2);
    });

    it('after a 4xx that follows an unknown outcome: two lookups over a fresh grace period, then the 4xx', () => {
      const unknown = lookUntilDecided(afterSendFailed(FRESH_SEND, UNKNOWN, 0, BOUNDED), 0, undefined, undefined, BOUNDED);
      const refused = afterSendFailed(unknown.action.state, INVALID, unknown.now, BOUNDED);
      const { action, lookups } = lookUntilDecided(refused, unknown.now, undefined, undefined, BOUNDED);
      expect(lookups).toBe(2);
      expect(action).toMatchObject({ do: 'fail', why: 'permanent' });
    });

    it('retries a failed lookup on the outage budget: only answered lookups are bounded', () => {
      const first = afterSendFailed(FRESH_SEND, UNKNOWN, 0, BOUNDED);
      // The first two lookups fail (a 502), then they answer "not found".
      let failures = 0;
      const { action, lookups } = lookUntilDecided(first, 0, undefined, () => failures++ < 2, BOUNDED);
      expect(action.do).toBe('send');
      expect(lookups).toBe(4);
    });
  });

  it('sends a refused try (rate limited before processing) again after the demanded wait, without a lookup', () => {
    expect(afterSendFailed(FRESH_SEND, LIMITED, 0, CONFIG)).toMatchObject({ do: 'send', afterMs: 61_000 });
  });

  it('fails at once on a permanent answer when no earlier try had an unknown outcome', () => {
    expect(afterSendFailed(FRESH_SEND, INVALID, 0, CONFIG)).toMatchObject({ do: 'fail', why: 'permanent' });
  });

  it('keeps looking over the grace period after a 4xx that follows an unknown outcome, then fails with it', () => {
    const unknown = afterSendFailed(FRESH_SEND, UNKNOWN, 0, CONFIG);
    const searched = lookUntilDecided(unknown, 0);
    expect(searched.action.do).toBe('send');
    // The re-send gets a 422 (the first try's locks, say): the lookups go on over a new grace period.
    const refused = afterSendFailed(searched.action.state, INVALID, searched.now, CONFIG);
    expect(refused.do).toBe('recover');
    const end = lookUntilDecided(refused, searched.now);
    expect(end.action).toMatchObject({ do: 'fail', why: 'permanent' });
    expect(end.action.do === 'fail' && end.action.message).toContain('422 repositories locked');
  });

  it('does not re-send while lookups fail: failed lookups are retried on the outage budget', () => {
    const unknown = afterSendFailed(FRESH_SEND, UNKNOWN, 0, CONFIG);
    // The lookups fail for the first ten minutes (an outage), then answer "not found".
    const outcome = lookUntilDecided(unknown, 0, () => false, (t) => t < 10 * 60_000);
    expect(outcome.action.do).toBe('send');
    expect(outcome.now).toBeGreaterThanOrEqual(10 * 60_000);
  });

  it('gives up (without re-sending) when the lookups fail for the whole outage budget', () => {
    const unknown = afterSendFailed(FRESH_SEND, UNKNOWN, 0, CONFIG);
    const outcome = lookUntilDecided(unknown, 0, () => false, () => true);
    expect(outcome.action).toMatchObject({ do: 'fail', why: 'lookup' });
    expect(outcome.now).toBe(DEFAULT_OUTAGE.budgetMs);
  });

  it('fails when the tries run out', () => {
    let state = FRESH_SEND;
    let action: SendOnceAction = { do: 'send', afterMs: 0, state };
    for (let i = 0; i < 10 && action.do === 'send'; i++) {
      action = afterSendFailed(state, LIMITED, 0, CONFIG);
      state = action.state;
    }
    expect(action).toMatchObject({ do: 'fail', why: 'tries' });
    expect(action.state.tries).toBe(6);
  });

  it('with refusals on the outage budget: a refused try is not a try, it waits what was demanded until the budget is spent', () => {
    const config: SendOnceConfig = { ...CONFIG, refusalsOnOutageBudget: true };
    const fleetSlot: FailureFacts = { ...LIMITED, demandedDelayMs: 25_000 };
    let action: SendOnceAction = afterSendFailed(FRESH_SEND, fleetSlot, 0, config);
    let now = 0;
    let refusals = 1;
    // A 200-migration queue on one token: refused for far longer than six tries, never failed for it.
    while (action.do === 'send' && refusals < 100) {
      expect(action.afterMs).toBe(25_000);
      expect(action.state.tries).toBe(0);
      now += action.afterMs;
      action = afterSendFailed(action.state, fleetSlot, now, config);
      refusals++;
    }
    expect(action).toMatchObject({ do: 'send', afterMs: 25_000 });
    // Only the outage budget (6 h by default) of refusals in a row ends it.
    const late = afterSendFailed(action.state, fleetSlot, 6 * 60 * 60 * 1000, config);
    expect(late).toMatchObject({ do: 'fail', why: 'tries' });
    expect(late.do === 'fail' && late.message).toContain('outage budget');
  });
});

describe('the send-once grace in process inputs: one name, sendOnceGraceMs, and each former name still read', () => {
  const migration = { org: 'octo-org', repositories: ['alpha'] };
  const key = { name: 'projects/demo-project/locations/global/keys/k1' };

  it('accepts the grace under its name and under the former name of each process', () => {
    expect(migrationInputProblems({ ...migration, sendOnceGraceMs: 5_000 })).toEqual([]);
    expect(migrationInputProblems({ ...migration, startGraceMs: 5_000 })).toEqual([]);
    expect(apiKeyDeleteProblems({ ...key, sendOnceGraceMs: 5_000 })).toEqual([]);
    expect(apiKeyDeleteProblems({ ...key, recoveryGraceMs: 5_000 })).toEqual([]);
  });

  it('names the field given when its value is out of bounds (a migration: up to 24 h; a Google operation: up to 1 h)', () => {
    expect(migrationInputProblems({ ...migration, sendOnceGraceMs: 500 })).toEqual(['sendOnceGraceMs must be a number of milliseconds between 1000 and 86400000']);
    expect(migrationInputProblems({ ...migration, startGraceMs: 500 })).toEqual(['startGraceMs must be a number of milliseconds between 1000 and 86400000']);
    expect(apiKeyDeleteProblems({ ...key, sendOnceGraceMs: 2 * 60 * 60 * 1000 })).toEqual(['sendOnceGraceMs must be a number of milliseconds between 1000 and 3600000']);
    expect(dnsChangeProblems({ project: 'demo-project', zone: 'demo-zone', deletions: [{ name: 'a.example.com.', type: 'A', ttl: 300, rrdatas: ['1.2.3.4'] }], recoveryGraceMs: 5 })).toEqual([
      'recoveryGraceMs must be a number of milliseconds between 1000 and 3600000',
    ]);
  });

  it('refuses both names at once rather than choosing one', () => {
    expect(migrationInputProblems({ ...migration, sendOnceGraceMs: 5_000, startGraceMs: 6_000 })).toEqual(['give sendOnceGraceMs or startGraceMs (its former name), not both']);
    expect(apiKeyDeleteProblems({ ...key, sendOnceGraceMs: 5_000, recoveryGraceMs: 5_000 })).toEqual(['give sendOnceGraceMs or recoveryGraceMs (its former name), not both']);
  });
});
