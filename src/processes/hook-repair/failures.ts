/**
 * This process's groups of the failure registry. Deterministic: its workflows and activities import them, and
 * loading this module adds them to the registry (src/common/failures.ts), where the workflow kit judges every
 * type (`meansOutage`). Its descriptor lists them (`failures`); docs/failures.md's table is generated from them.
 */
import { failureGroup } from '../../common/failures';

/** Webhook delivery repair: its failure types (see src/common/failures.ts for what `handling` means). */
export const HOOK_FAILURES = failureGroup('hook', 'hook repair', {
  InvalidInput: { type: 'InvalidHookInput', handling: 'permanent', meaning: 'the hook repair input is not valid (nothing was sent)' },
});
