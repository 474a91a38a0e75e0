/**
 * This process's groups of the failure registry. Deterministic: its workflows and activities import them, and
 * loading this module adds them to the registry (src/common/failures.ts), where the workflow kit judges every
 * type (`meansOutage`). Its descriptor lists them (`failures`); docs/failures.md's table is generated from them.
 */
import { failureGroup } from '../../common/failures';

/** The source import: its failure types (see src/common/failures.ts for what `handling` means). */
export const IMPORT_FAILURES = failureGroup('import', 'source import', {
  InvalidInput: { type: 'InvalidImportInput', handling: 'permanent', meaning: 'the import input is not valid (nothing was sent)' },
  ApiUnavailable: { type: 'ImportApiUnavailable', handling: 'permanent', meaning: 'the start answered 404/410: the source-import API is not served there (GitHub.com retired it)' },
  StartRejected: { type: 'ImportStartRejected', handling: 'permanent', meaning: 'the start answered 422: the server refused the import' },
  SourceNotFound: { type: 'ImportSourceNotFound', handling: 'permanent', meaning: 'no source control was detected at the source URL' },
  ImportFailed: { type: 'ImportFailed', handling: 'permanent', meaning: 'the import failed on the server, after its restarts' },
  AnswerTimedOut: { type: 'ImportAnswerTimedOut', handling: 'permanent', meaning: 'no answer (credentials, a choice) arrived in time; the import is left waiting on the server' },
  TimedOut: { type: 'ImportTimedOut', handling: 'permanent', meaning: "the import was not done within the poll's total time" },
  PollFailed: { type: 'ImportPollFailed', handling: 'permanent', meaning: 'polls failed permanently or past the outage budget; the import may still run on the server' },
  ImportGone: { type: 'ImportGone', handling: 'permanent', meaning: 'the import no longer exists on the server (cancelled elsewhere?)' },
  InvalidChoice: { type: 'InvalidChoice', handling: 'permanent', meaning: "the answer to a source import's choice is not exactly one offered choice" },
  ChoiceFailed: { type: 'ChoiceFailed', handling: 'permanent', meaning: "an update's PATCH failed (recorded by the server or not, as the message says)" },
  MappingFailed: { type: 'MappingFailed', handling: 'permanent', meaning: 'an author mapping could not be applied' },
});
