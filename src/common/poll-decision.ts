/**
 * The decision logic of `pollUntil` (pure): where the poller stands, and what it does after each outcome.
 * The workflow side only sleeps, calls and reports; every rule is unit-tested here in milliseconds.
 */
import type { FailureFacts } from './activity-failures';
import { afterFailure, afterSuccess, NO_OUTAGE, type OutageState, type ResolvedOutageBounds } from './outage';
import { nextPollAtMs, pollDelayMs, type ResolvedPollBounds } from './poll-schedule';

/** Where a poller stands. Plain data: carried across continue-as-new as it is. */
export interface PollState {
  /** Start of the wait: the total time bound counts from here. @format epoch milliseconds (workflow time) */
  startedAtMs: number;
  /**
   * Start of the current schedule, which the interval's growth counts from (absent in states recorded before
   * it existed: `startedAtMs`). A caller restarting the schedule after its own change moves only this.
   * @format epoch milliseconds (workflow time)
   */
  sinceMs?: number;
  /** 1-based index of the next poll on the growth schedule. */
  n: number;
  /** When the next poll is due. @format epoch milliseconds (workflow time) */
  dueAtMs: number;
  /** Polls that answered. */
  polls: number;
  /** Polls that failed (each followed by another poll, never by the mutating call). */
  failedPolls: number;
  outage: OutageState;
  /** Conditional polls: the validator (`ETag`) of the last answer, sent as `If-None-Match` with the next poll. */
  etag?: string;
}

export type PollStep =
  | { action: 'wait'; state: PollState }
  | { action: 'timed-out'; state: PollState; waitedMs: number }
  | { action: 'give-up'; state: PollState; why: 'permanent' | 'budget' | 'cancelled'; message: string };

/** A fresh poller at `nowMs`: the first poll is due after the initial interval. */
export function startPolling(nowMs: number, bounds: ResolvedPollBounds): PollState {
  return { startedAtMs: nowMs, sinceMs: nowMs, n: 1, dueAtMs: nowMs + pollDelayMs(1, bounds), polls: 0, failedPolls: 0, outage: NO_OUTAGE };
}

/** Whether the next poll is still inside the total time bound. */
export function checkTimeBound(state: PollState, bounds: ResolvedPollBounds, nowMs: number): PollStep {
  if (state.dueAtMs - state.startedAtMs > bounds.timeoutMs) return { action: 'timed-out', state, waitedMs: nowMs - state.startedAtMs };
  return { action: 'wait', state };
}

/** After a poll that answered (and the remote process is not done yet): the next one on the schedule. */
export function afterPollAnswered(state: PollState, bounds: ResolvedPollBounds, nowMs: number): PollStep {
  const n = state.n + 1;
  const next: PollState = { ...state, n, polls: state.polls + 1, dueAtMs: nextPollAtMs(state.dueAtMs, n, bounds, nowMs, state.sinceMs ?? state.startedAtMs), outage: afterSuccess(state.outage) };
  return checkTimeBound(next, bounds, nowMs);
}

/**
 * After a poll that failed: a transient failure is followed by the same poll again after the outage backoff
 * (the schedule's index does not advance); a permanent answer or a spent budget ends the wait.
 */
export function afterPollFailed(state: PollState, failure: FailureFacts, bounds: ResolvedPollBounds, outage: ResolvedOutageBounds, nowMs: number): PollStep {
  const decision = afterFailure(state.outage, failure, nowMs, outage);
  const failed = { ...state, failedPolls: state.failedPolls + (failure.kind === 'cancelled' ? 0 : 1), outage: decision.state };
  if (decision.action === 'give-up') return { action: 'give-up', state: failed, why: decision.why, message: decision.message };
  return checkTimeBound({ ...failed, dueAtMs: nowMs + decision.delayMs }, bounds, nowMs);
}
