/**
 * The one-line summary of each of this process's activities in the Temporal UI (`summarized` of the workflow kit):
 * made from the activity's input only, so deterministic. A new activity without one fails the typecheck.
 */
import { count, type Summaries } from '../../workflows/kit/activity-summaries';
import type { MigrationActivityFunctions } from './activities';
import { archiveFileName } from './model';
import { destinationObjectUrl } from '../../archive/object-store/destination';

export const MIGRATION_SUMMARIES: Summaries<MigrationActivityFunctions> = {
  startMigration: (i) => `Start export of ${count(i.repositories.length, 'repository', 'repositories')} of ${i.org}`,
  findMigration: (i) => `Look for an export of ${i.org} already started`,
  getMigration: (i) => `Poll export ${i.migrationId} of ${i.org}`,
  quietGetMigration: (i) => `Poll export ${i.migrationId} of ${i.org} until it changes`,
  // The object it streams into, when the input names one (the worker's default is known only on the worker).
  downloadArchive: (i) => `Download archive of export ${i.migrationId} of ${i.org}${i.archiveTo !== undefined ? ` into ${destinationObjectUrl(i.archiveTo, archiveFileName(i.org, i.migrationId))}` : ''}`,
  checkArchiveDestination: () => 'Check the archive destination',
  abortArchiveUpload: (i) => `Abort the upload of the archive of export ${i.migrationId} of ${i.org}`,
  unlockRepository: (i) => `Unlock ${i.repository}`,
  deleteArchive: (i) => `Delete archive of export ${i.migrationId} of ${i.org}`,
};
