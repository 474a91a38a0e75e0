/**
 * Named retry presets for activities, one per kind of call. Permanent failures are non-retryable at the
 * source (the HTTP core), so every preset stops on those at once; server-demanded waits arrive as
 * `nextRetryDelay` and override the intervals, which come from the backoff schedules (`BACKOFF` in
 * `src/common/backoff.ts`). What happens after an activity gives up is the kit's
 * business (`pollUntil`, `sendOnce`, `keepTrying`), not Temporal's retry policy.
 */
import type { ActivityOptions } from '@temporalio/workflow';
import { BACKOFF, temporalRetryPolicy } from '../../common/backoff';
import { QuietPoll } from '../../common/quiet-poll-schedule';

/** Reads (lookups, listings): bounded retries, then the workflow decides. */
export const READ: ActivityOptions = {
  startToCloseTimeout: '60 seconds',
  retry: temporalRetryPolicy(BACKOFF.readRetry, { maximumAttempts: 12 }),
};

/**
 * Mutating calls that must happen at most once in effect: one attempt per activity; `sendOnce` decides
 * whether another try is safe (after looking for what the previous one did).
 */
export const SEND_ONCE: ActivityOptions = { ...READ, retry: { ...READ.retry, maximumAttempts: 1 } };

/**
 * Polls: a few attempts each, since `pollUntil` tolerates a failed poll and polls again later on its outage
 * budget (a poll that fails for minutes must not block the workflow inside one activity).
 */
export const POLL: ActivityOptions = { ...READ, retry: { ...READ.retry, maximumAttempts: 5 } };

/**
 * Quiet polls (`src/common/quiet-poll-schedule.ts`): each attempt is one poll, and an unchanged answer is retried
 * at the schedule's next poll (its `nextRetryDelay`) for as long as the schedule runs, with no attempt limit;
 * a failed poll ends the activity (`QuietPollEnded`, never retried) and the poller's outage budget takes over.
 * The intervals below only pace an attempt that was lost (its worker killed mid-poll: start-to-close timeout).
 */
export const QUIET_POLL: ActivityOptions = {
  startToCloseTimeout: '60 seconds',
  retry: temporalRetryPolicy(BACKOFF.longRetry, { nonRetryableErrorTypes: [QuietPoll.Ended] }),
};

/**
 * Cleanup (unlock, archive delete, import cancel): retried for a long time. Temporal retries each call up to
 * the HTTP core's own attempt bound; `keepTrying` then keeps calling on the outage budget until the call
 * succeeds or fails permanently.
 */
export const CLEANUP: ActivityOptions = {
  startToCloseTimeout: '60 seconds',
  retry: temporalRetryPolicy(BACKOFF.longRetry, { maximumAttempts: 10 }),
};

/** Streaming downloads: long, heartbeating, resumed by the next attempt. */
export const DOWNLOAD: ActivityOptions = {
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '30 seconds',
  retry: temporalRetryPolicy(BACKOFF.longRetry, { maximumAttempts: 10 }),
};

/** The feed entity's control calls: the timeout covers the entity's wait for the interval, its fetches and its sink retries. */
export const FEED_CONTROL: ActivityOptions = {
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '30 seconds',
  retry: temporalRetryPolicy(BACKOFF.feedRetry, { maximumAttempts: 5 }),
};

/** Recording a scheduled run's failure on its Schedule (best effort). */
export const SCHEDULE_HEALTH: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: temporalRetryPolicy(BACKOFF.scheduleHealthRetry, { maximumAttempts: 5 }),
};

/** A preset with another start-to-close timeout (e.g. an input's `apiCallTimeoutMs`), when one is given. */
export function withCallTimeout(preset: ActivityOptions, timeoutMs: number | undefined): ActivityOptions {
  return timeoutMs === undefined ? preset : { ...preset, startToCloseTimeout: timeoutMs };
}
