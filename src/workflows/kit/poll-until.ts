/**
 * `pollUntil`: the one poller of every process that waits on a remote state. Durable timers on one growth
 * schedule anchored to the start of the wait, one total time bound, an outage budget for failed polls, a
 * progress callback for status, and a suspension point between polls for continue-as-new. A failed poll is
 * only ever followed by another poll: never by the mutating call, never by cleanup.
 */
import { ApplicationFailure, log, patched, sleep } from '@temporalio/workflow';
import { failureFacts } from '../../common/activity-failures';
import { afterSuccess, formatDuration, resolveOutageBounds, type OutageBounds } from '../../common/outage';
import { afterPollAnswered, afterPollFailed, checkTimeBound, startPolling, type PollState, type PollStep } from '../../common/poll-decision';
import type { Polled, ResolvedPollBounds } from '../../common/poll-schedule';

export type { Polled } from '../../common/poll-schedule';
import { quietPollEnded, type QuietPollAnswer, type QuietPollRequest } from '../../common/quiet-poll-schedule';

/** What a status line shows of a poller. */
export interface PollProgress {
  polls: number;
  failedPolls: number;
  /** Failed polls since the last answer (an outage in progress when > 0). */
  failuresInRow: number;
  /** @format milliseconds — until the next poll, while waiting for it. */
  nextPollInMs?: number;
}

/**
 * What a conditional poll answers: the state with its validator, or "unchanged since the ETag sent" (a 304,
 * which GitHub does not count against the primary limit). Only the short ETag enters history, never a body.
 */
export type ConditionalAnswer<T> = { notModified: false; value: T; etag?: string } | { notModified: true; etag?: string };


/** A poll activity's result as the poller's answer. */
export function asConditional<T>(polled: Polled<T>): ConditionalAnswer<T> {
  if (polled.notModified === true) return { notModified: true, etag: polled.etag };
  const { etag, notModified: _, ...value } = polled as T & { etag?: string; notModified?: undefined };
  return { notModified: false, value: value as T, etag };
}

/** The patch that brought quiet polls: runs recorded before it keep polling with a timer and an activity per poll. */
export const QUIET_POLLS_PATCH = 'quiet-polls';

/** `quiet` for `pollUntil` in runs that may use it (new ones), `undefined` in runs recorded before quiet polls. */
export function quietWherePatched<T>(quiet: NonNullable<PollUntilOptions<T>['quiet']>): PollUntilOptions<T>['quiet'] {
  return patched(QUIET_POLLS_PATCH) ? quiet : undefined;
}

export interface PollUntilOptions<T> {
  /** For messages: "migration 42 of octo-org". */
  what: string;
  /**
   * One read of the remote state (an activity with the `POLL` preset). A conditional read is given the ETag
   * of the last answer (none before the first, or with no last observation to keep); on "not modified" the
   * poller keeps the observation it has.
   */
  poll: (() => Promise<T>) | { conditional: (etag: string | undefined) => Promise<ConditionalAnswer<T>> };
  /**
   * The same read made quiet (`quiet-poll-schedule.ts`, a `QUIET_POLL` activity): every poll of a stretch
   * without change is one attempt of one activity, so only polls that see a change (or fail) cost the workflow
   * a timer, an activity and its workflow tasks. Given, it is used instead of `poll` (which callers keep for
   * runs recorded before quiet polls: they pass `quiet` only where `patched` says so).
   */
  quiet?: (request: QuietPollRequest<T>) => Promise<QuietPollAnswer<Polled<T>>>;
  /** Whether an observation ends the wait (finished, failed, whatever the caller handles next). */
  done: (value: T) => boolean;
  bounds: ResolvedPollBounds;
  outage?: OutageBounds | null;
  /** The state a previous run carried across continue-as-new; a fresh wait when absent. */
  state?: PollState;
  /** Called before every wait and after every poll, with the last observation (if any). */
  onProgress?: (progress: PollProgress, last: T | undefined) => void;
  /** Checked between polls: true ends the wait as `suspended` (the caller continues as new with `state`). */
  suspend?: () => boolean;
  /** Failure types this process ends the wait with. */
  failureTypes: { timedOut: string; pollFailed: string };
  /** Describes the last observation in messages ("still exporting"). */
  describeLast?: (last: T | undefined) => string;
  /** Added to the failures' details. */
  details?: Record<string, unknown>;
}

export type PollOutcome<T> = { kind: 'done'; value: T; state: PollState } | { kind: 'suspended'; last: T | undefined; state: PollState };

export async function pollUntil<T>(opts: PollUntilOptions<T>, last?: T): Promise<PollOutcome<T>> {
  const outage = resolveOutageBounds(opts.outage);
  let state = opts.state ?? startPolling(Date.now(), opts.bounds);
  const progress = (nextPollInMs?: number) =>
    opts.onProgress?.({ polls: state.polls, failedPolls: state.failedPolls, failuresInRow: state.outage.failuresInRow, nextPollInMs }, last);
  const end = (step: PollStep, cause?: unknown): never => {
    if (step.action === 'timed-out') {
      throw ApplicationFailure.create({
        type: opts.failureTypes.timedOut,
        nonRetryable: true,
        message: `${opts.what} was ${opts.describeLast?.(last) ?? 'not done'} after waiting ${formatDuration(step.waitedMs)} (poll time bound ${formatDuration(opts.bounds.timeoutMs)})`,
        details: [{ ...opts.details, polls: step.state.polls, failedPolls: step.state.failedPolls }],
      });
    }
    throw ApplicationFailure.create({
      type: opts.failureTypes.pollFailed,
      nonRetryable: true,
      message: `${opts.what}: polling ${step.action === 'give-up' && step.why === 'budget' ? 'gave up' : 'failed permanently'}: ${step.action === 'give-up' ? step.message : ''}`,
      details: [{ ...opts.details, polls: step.state.polls, failedPolls: step.state.failedPolls }],
      cause: cause instanceof Error ? cause : undefined,
    });
  };

  const readOnce = async (): Promise<T> => {
    if (typeof opts.poll === 'function') return opts.poll();
    const answer = await opts.poll.conditional(last === undefined ? undefined : state.etag);
    state = { ...state, etag: answer.etag ?? state.etag };
    if (!answer.notModified) return answer.value;
    // Only sent with an observation to keep (above), so a 304 always has one.
    return last as T;
  };

  // One quiet stretch: the polls it made count as answered ones, the schedule moves to its last poll.
  const readQuietly = async (quiet: NonNullable<PollUntilOptions<T>['quiet']>): Promise<T> => {
    const { startedAtMs, sinceMs = startedAtMs, n, dueAtMs } = state;
    const keep = last !== undefined;
    let answer: QuietPollAnswer<Polled<T>>;
    try {
      answer = await quiet({ schedule: { n, dueAtMs, sinceMs, startedAtMs, bounds: opts.bounds }, ...(keep ? { last, etag: state.etag } : {}) });
    } catch (err) {
      const ended = quietPollEnded(err);
      if (!ended) throw err;
      state = { ...state, polls: state.polls + ended.polls, n: ended.n || n, dueAtMs: ended.dueAtMs || dueAtMs };
      throw ended.cause;
    }
    state = { ...state, polls: state.polls + answer.polls - 1, n: answer.n, dueAtMs: answer.dueAtMs };
    if (answer.kind === 'unchanged') return last as T;
    const read = asConditional(answer.polled);
    state = { ...state, etag: read.etag ?? state.etag };
    // A quiet poll only answers "not modified" when given an observation to keep.
    return read.notModified ? (last as T) : read.value;
  };

  let step = checkTimeBound(state, opts.bounds, Date.now());
  for (;;) {
    if (step.action !== 'wait') return end(step);
    state = step.state;
    if (opts.suspend?.()) return { kind: 'suspended', last, state };
    const waitMs = Math.max(0, state.dueAtMs - Date.now());
    progress(waitMs);
    if (waitMs > 0) await sleep(waitMs);
    try {
      last = opts.quiet ? await readQuietly(opts.quiet) : await readOnce();
    } catch (err) {
      const facts = failureFacts(err);
      if (facts.kind === 'cancelled') throw err;
      step = afterPollFailed(state, facts, opts.bounds, outage, Date.now());
      if (step.action === 'wait') {
        // Replay-safe (workflow logger): one line per failed poll, with the backoff before the next.
        const waitMs = Math.max(0, step.state.dueAtMs - Date.now());
        log.warn(`${opts.what}: poll failed, polling again in ${Math.ceil(waitMs / 1000)} s (${facts.message})`, {
          event: 'outage-backoff',
          step: `poll ${opts.what}`,
          waitMs,
          failuresInRow: step.state.outage.failuresInRow,
          type: facts.type,
        });
      }
      if (step.action === 'give-up') {
        log.error(`${opts.what}: polling stopped (${step.message})`, { event: 'permanent-failure', step: `poll ${opts.what}`, reason: step.why, type: facts.type });
        state = step.state;
        progress();
        return end(step, err);
      }
      continue;
    }
    if (opts.done(last)) {
      state = { ...state, polls: state.polls + 1, outage: afterSuccess(state.outage) };
      progress();
      return { kind: 'done', value: last, state };
    }
    step = afterPollAnswered(state, opts.bounds, Date.now());
  }
}
