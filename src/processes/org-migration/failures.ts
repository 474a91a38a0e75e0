/**
 * This process's groups of the failure registry. Deterministic: its workflows and activities import them, and
 * loading this module adds them to the registry (src/common/failures.ts), where the workflow kit judges every
 * type (`meansOutage`). Its descriptor lists them (`failures`); docs/failures.md's table is generated from them.
 */
import { failureGroup } from '../../common/failures';

/** The org migration: its failure types (see src/common/failures.ts for what `handling` means). */
export const MIGRATION_FAILURES = failureGroup('migration', 'org migration', {
  InvalidInput: { type: 'InvalidMigrationInput', handling: 'permanent', meaning: 'the migration input is not valid (nothing was sent)' },
  StartFailed: { type: 'MigrationStartFailed', handling: 'permanent', meaning: 'the export could not be started' },
  StartUnidentifiable: { type: 'MigrationStartUnidentifiable', handling: 'permanent', meaning: "after a start whose outcome is unknown, an export in the attempt window names no repositories this lookup can compare (an API version that leaves them out): it is neither adopted nor started again" },
  ExportFailed: { type: 'MigrationExportFailed', handling: 'permanent', meaning: 'GitHub reports the export failed' },
  TimedOut: { type: 'MigrationTimedOut', handling: 'permanent', meaning: "the export was not done within the poll's total time" },
  PollFailed: { type: 'MigrationPollFailed', handling: 'permanent', meaning: 'polling the export failed permanently, or for the whole outage budget' },
  UnlockFailed: { type: 'MigrationUnlockFailed', handling: 'permanent', meaning: 'some repositories could not be unlocked (`details[0].stillLocked` names them)' },
  ArchiveDeleteFailed: { type: 'MigrationArchiveDeleteFailed', handling: 'permanent', meaning: 'the archive could not be deleted on the server after the download' },
});
