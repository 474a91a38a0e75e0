/**
 * This process's groups of the failure registry. Deterministic: its workflows and activities import them, and
 * loading this module adds them to the registry (src/common/failures.ts), where the workflow kit judges every
 * type (`meansOutage`). Its descriptor lists them (`failures`); docs/failures.md's table is generated from them.
 */
import { failureGroup } from '../../common/failures';

/** Organization backups: its failure types (see src/common/failures.ts for what `handling` means). */
export const BACKUP_FAILURES = failureGroup('backup', 'backup', {
  InvalidInput: { type: 'InvalidBackupInput', handling: 'permanent', meaning: 'the backup input is not valid (nothing was sent)' },
  ListingFailed: { type: 'BackupListingFailed', handling: 'permanent', meaning: "the organization's repositories could not be listed (the run wrote no manifest)" },
  ExportsFailed: { type: 'BackupExportsFailed', handling: 'permanent', meaning: 'an export failed for a reason halving cannot help (the store, a time bound): the run wrote no manifest' },
});
