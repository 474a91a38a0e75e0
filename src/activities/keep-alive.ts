/**
 * Heartbeats for activities scheduled on a worker's own task queue (a feed poll's later pages and its
 * delivery, `processes/feed-poll/workflow.ts`). Such an activity is given a short heartbeat timeout so that a worker
 * that dies under it is noticed in seconds, not at the end of its start-to-close timeout; while it runs,
 * this beats for it (its own work may sit in a wait on the fleet's rate budget for longer than that).
 */
import { currentActivity } from '../temporal/current-activity';

/** Runs `fn`, heartbeating every third of the activity's heartbeat timeout (nothing when it has none). */
export async function whileBeating<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = currentActivity();
  const timeoutMs = ctx?.info.heartbeatTimeoutMs ?? 0;
  if (!ctx || !(timeoutMs > 0)) return fn();
  const beat = setInterval(() => ctx.heartbeat(), Math.max(100, Math.floor(timeoutMs / 3)));
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}
