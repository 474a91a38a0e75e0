/**
 * The running activity's context, for code that also runs outside activities (tests, tools, the CLI): the
 * SDK's `Context.current()` throws there instead of answering "none".
 */
import { Context } from '@temporalio/activity';

/** The running activity's context, or undefined outside an activity. */
export function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}
