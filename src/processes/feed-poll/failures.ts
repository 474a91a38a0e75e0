/**
 * This process's groups of the failure registry. Deterministic: its workflows and activities import them, and
 * loading this module adds them to the registry (src/common/failures.ts), where the workflow kit judges every
 * type (`meansOutage`). Its descriptor lists them (`failures`); docs/failures.md's table is generated from them.
 */
import { failureGroup } from '../../common/failures';

/** Feed polling: its failure types (see src/common/failures.ts for what `handling` means). */
export const FEED_FAILURES = failureGroup('feed', 'feed polling', {
  InvalidInput: { type: 'InvalidFeedInput', handling: 'permanent', meaning: 'the feed, the poll request or the spool id is not valid' },
  PollFailed: { type: 'FeedPollFailed', handling: 'permanent', meaning: "the feed's cursor failed the poll (its cause says why)" },
  CursorStopping: { type: 'FeedCursorStopping', handling: 'back-off', meaning: "the feed's cursor is stopping or continued as new: the next attempt reaches its next run" },
  SpoolMissing: { type: 'FeedSpoolMissing', handling: 'permanent', meaning: "a poll's events are not in this worker's spool: the cursor stays, the next poll fetches them again" },
});

/** The HTTP sink of feed events: its failure types (see src/common/failures.ts for what `handling` means). */
export const SINK_FAILURES = failureGroup('sink', 'HTTP sink', {
  SecretMissing: { type: 'SinkSecretMissing', handling: 'permanent', meaning: 'the HTTP sink has no signing secret on the worker' },
  Rejected: { type: 'SinkRejected', handling: 'permanent', meaning: 'the sink refused the batch (4xx, or a redirect, which is not followed)' },
  Unavailable: { type: 'SinkUnavailable', handling: 'back-off', meaning: 'the sink is unreachable or answered 5xx, 408, 425 or 429' },
});
