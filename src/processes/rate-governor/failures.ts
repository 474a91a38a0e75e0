/**
 * This process's groups of the failure registry. Deterministic: its workflows and activities import them, and
 * loading this module adds them to the registry (src/common/failures.ts), where the workflow kit judges every
 * type (`meansOutage`). Its descriptor lists them (`failures`); docs/failures.md's table is generated from them.
 */
import { failureGroup } from '../../common/failures';

/** The rate governor: its failure types (see src/common/failures.ts for what `handling` means). */
export const GOVERNOR_FAILURES = failureGroup('governor', 'rate governor', {
  InvalidInput: { type: 'InvalidGovernorInput', handling: 'permanent', meaning: "the rate governor's input is not valid (it ends before it grants anything)" },
});
