/** The attempt number the retry decision needs, read from the running activity. */
import { Context } from '@temporalio/activity';

/** The current activity attempt (1 outside an activity), for the retry decision. */
export function currentAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}
