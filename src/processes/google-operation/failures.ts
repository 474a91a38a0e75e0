/**
 * This process's groups of the failure registry. Deterministic: its workflows and activities import them, and
 * loading this module adds them to the registry (src/common/failures.ts), where the workflow kit judges every
 * type (`meansOutage`). Its descriptor lists them (`failures`); docs/failures.md's table is generated from them.
 */
import { failureGroup } from '../../common/failures';

/** The Google operation workflows: its failure types (see src/common/failures.ts for what `handling` means). */
export const GOOGLE_OPERATION_FAILURES = failureGroup('googleOperation', 'Google operations', {
  InvalidInput: { type: 'InvalidGoogleOperationInput', handling: 'permanent', meaning: 'the operation input is not valid (nothing was sent)' },
  OperationFailed: { type: 'GoogleOperationFailed', handling: 'permanent', meaning: 'the operation finished with an error (or a bucket operation ended FAILED)' },
  TimedOut: { type: 'GoogleOperationTimedOut', handling: 'permanent', meaning: "the operation was still running when the poll's total time ran out" },
  PollFailed: { type: 'GoogleOperationPollFailed', handling: 'permanent', meaning: 'polls failed permanently or past the outage budget; the operation may still run' },
  SendFailed: { type: 'GoogleOperationSendFailed', handling: 'permanent', meaning: 'the mutating call could not be made within its tries, or its unknown outcome not resolved' },
});
