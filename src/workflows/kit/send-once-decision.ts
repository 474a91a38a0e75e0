/**
 * The decision logic of `sendOnce` (pure): after each outcome of the mutating call or of the lookup that
 * recovers an earlier try, what comes next. The rules (issue 8, item 5):
 *
 * - a try whose outcome is unknown (timeout, reset, 5xx after sending) is followed by lookups, retried over a
 *   grace period that covers the call's own timeout plus the server's request cutoff, before any re-send;
 * - a permanent failure (4xx) after an unknown outcome does not end it at once: the earlier try may have done
 *   it (a conflict, or locks it took), so the lookups go on over the grace period first;
 * - a failed lookup is retried on the outage budget; a re-send only follows a lookup that answered "not found"
 *   once the grace period is over;
 * - a try the server certainly refused (rate limited before processing, or held back by the fleet's rate
 *   budget) is sent again after the wait it demanded; such refusals are waited out on the outage budget and do
 *   not count as tries (runs recorded before this rule counted them: `refusalsOnOutageBudget` off);
 * - the lookups after an unknown outcome end by design (`boundedLookups`, issue 31): one at once, and, when it
 *   finds nothing, one more when the grace period is spent; then the result is adopted or the decision made.
 *   Failed lookups are retried on the outage budget, as before. Runs recorded before this rule looked up over
 *   the whole grace period, 1 s doubling to 15 s apart (about 15 lookups per unknown outcome for a 60 s call).
 */
import { backoffMs, BACKOFF } from '../../common/backoff';
import type { FailureFacts } from '../../common/activity-failures';
import { afterFailure, afterSuccess, NO_OUTAGE, type OutageState, type ResolvedOutageBounds } from '../../common/outage';

export interface SendOnceConfig {
  /** Sends at most this many tries in total. */
  maxTries: number;
  /** @format milliseconds — the send-once grace: lookups continue this long after the last try with an unknown outcome. */
  graceMs: number;
  outage: ResolvedOutageBounds;
  /** Permanent failure types that mean "it exists already" (named in messages). */
  conflictTypes: readonly string[];
  /**
   * Refusals (nothing was processed) are waited out on the outage budget instead of counting as tries. Off
   * only for runs recorded before: at scale (200 migrations on one token) six refusals of the fleet's rate
   * budget, a minute apart at most, failed starts that would have gone out a few minutes later.
   */
  refusalsOnOutageBudget?: boolean;
  /**
   * After an unknown outcome, look up once at once and once more when the grace period is spent, no more
   * (unless lookups fail). Off only for runs recorded before: they looked up all through the grace period.
   */
  boundedLookups?: boolean;
}

export interface SendOnceState {
  tries: number;
  /** When the grace period of the latest unknown outcome (or 4xx after one) began. @format epoch milliseconds (workflow time) */
  unknownAtMs?: number;
  /** Some try of this send had an unknown outcome: from then on a 4xx may be caused by that try. */
  hadUnknown: boolean;
  /** Lookups since that try. */
  lookups: number;
  /** A permanent failure that came after an unknown outcome: it ends the send unless the lookups find the result. */
  pending?: FailureFacts;
  lastMessage?: string;
  /** Failed lookups in a row. */
  outage: OutageState;
}

export type SendOnceAction =
  | { do: 'send'; afterMs: number; state: SendOnceState }
  | { do: 'recover'; afterMs: number; state: SendOnceState }
  | { do: 'fail'; why: 'permanent' | 'tries' | 'lookup'; message: string; state: SendOnceState };

export const FRESH_SEND: SendOnceState = { tries: 0, lookups: 0, hadUnknown: false, outage: NO_OUTAGE };

/** The wait between lookups during the grace period: 1 s doubling to 15 s. */
export function lookupDelayMs(lookups: number): number {
  return backoffMs(BACKOFF.sendOnceLookup, lookups);
}

/** The wait before sending again after a refused try: 1 s doubling to 60 s, or what the server demanded. */
export function resendDelayMs(tries: number, demandedMs?: number): number {
  return demandedMs ?? backoffMs(BACKOFF.sendOnceResend, tries);
}

/** After a try that failed (not cancelled). */
export function afterSendFailed(state: SendOnceState, failure: FailureFacts, nowMs: number, config: SendOnceConfig): SendOnceAction {
  const next: SendOnceState = { ...state, tries: state.tries + 1, lastMessage: failure.message };
  if (failure.kind === 'permanent') {
    if (!state.hadUnknown) return { do: 'fail', why: 'permanent', message: failure.message, state: next };
    // The earlier try may have done it after all (its locks, its name): look again over a fresh grace period.
    return { do: 'recover', afterMs: 0, state: { ...next, pending: failure, unknownAtMs: nowMs, lookups: 0 } };
  }
  if (failure.notProcessed && config.refusalsOnOutageBudget) {
    const decision = afterFailure(state.outage, failure, nowMs, config.outage);
    const refused: SendOnceState = { ...state, lastMessage: failure.message, outage: decision.state };
    if (decision.action === 'give-up') return { do: 'fail', why: 'tries', message: `not sent: ${decision.message}`, state: refused };
    // The wait the refusal demanded (a slot of the fleet's budget, a rate-limit reset), not a growing backoff.
    const afterMs = failure.demandedDelayMs === undefined ? decision.delayMs : Math.min(failure.demandedDelayMs, decision.delayMs);
    return { do: 'send', afterMs, state: refused };
  }
  if (failure.notProcessed) {
    if (next.tries >= config.maxTries) return { do: 'fail', why: 'tries', message: triesMessage(next), state: next };
    return { do: 'send', afterMs: resendDelayMs(next.tries, failure.demandedDelayMs), state: next };
  }
  return { do: 'recover', afterMs: 0, state: { ...next, unknownAtMs: nowMs, hadUnknown: true, lookups: 0 } };
}

/** After a lookup that answered and found nothing. (A lookup that found the result ends `sendOnce`.) */
export function afterNotFound(state: SendOnceState, nowMs: number, config: SendOnceConfig): SendOnceAction {
  const next: SendOnceState = { ...state, lookups: state.lookups + 1, outage: afterSuccess(state.outage) };
  const graceEndsAt = (state.unknownAtMs ?? nowMs) + config.graceMs;
  if (nowMs < graceEndsAt) {
    // Nothing in between can be decided: the next (and last) lookup is the one that ends the grace period.
    if (config.boundedLookups) return { do: 'recover', afterMs: graceEndsAt - nowMs, state: next };
    return { do: 'recover', afterMs: Math.min(lookupDelayMs(next.lookups), graceEndsAt - nowMs), state: next };
  }
  if (next.pending) {
    const conflict = config.conflictTypes.includes(next.pending.type ?? '');
    return {
      do: 'fail',
      why: 'permanent',
      message: `${next.pending.message}${conflict ? ' (a conflict, yet no earlier try of this workflow was found' : ' (no earlier try of this workflow was found'} within ${Math.round(config.graceMs / 1000)} s)`,
      state: next,
    };
  }
  if (next.tries >= config.maxTries) return { do: 'fail', why: 'tries', message: triesMessage(next), state: next };
  return { do: 'send', afterMs: 0, state: { ...next, unknownAtMs: undefined, lookups: 0 } };
}

/** After a lookup that failed: retried on the outage budget; a permanent failure of the lookup ends it. */
export function afterLookupFailed(state: SendOnceState, failure: FailureFacts, nowMs: number, config: SendOnceConfig): SendOnceAction {
  const decision = afterFailure(state.outage, failure, nowMs, config.outage);
  const next: SendOnceState = { ...state, lookups: state.lookups + 1, outage: decision.state };
  if (decision.action === 'give-up') {
    return {
      do: 'fail',
      why: 'lookup',
      message: `an earlier try's outcome is unknown and looking it up failed${decision.why === 'permanent' ? ' permanently' : ''}: ${decision.message}`,
      state: next,
    };
  }
  return { do: 'recover', afterMs: decision.delayMs, state: next };
}

function triesMessage(state: SendOnceState): string {
  return `not sent after ${state.tries} tries: ${state.lastMessage ?? 'unknown error'}`;
}
