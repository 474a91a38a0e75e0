/** The attempt number the retry decisions need, read from the running activity. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { currentActivity } from '../temporal/current-activity';

/**
 * Calls that count as a first attempt whatever the activity's attempt: a quiet poll's attempts are polls
 * on a schedule, not retries of a failed call, so an HTTP failure in its 30th attempt must be judged (backoff,
 * retry budget) as the first failure it is.
 */
const firstAttempt = new AsyncLocalStorage<true>();

/** Runs `fn` with every retry decision inside it made as for a first attempt. */
export function asFirstAttempt<T>(fn: () => Promise<T>): Promise<T> {
  return firstAttempt.run(true, fn);
}

/** The current activity attempt (1 outside an activity, or inside `asFirstAttempt`), for the retry decision. */
export function currentAttempt(): number {
  if (firstAttempt.getStore()) return 1;
  return currentActivity()?.info.attempt ?? 1;
}
