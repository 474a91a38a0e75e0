/** The UI's one-line summary of each backup activity, from its input only (deterministic). */
import type { Summaries } from '../../workflows/kit/activity-summaries';
import type { BackupActivities } from './activities';

export const BACKUP_SUMMARIES: Summaries<BackupActivities> = {
  checkBackupDestination: (i) => `Check the backup destination ${i.archiveTo}`,
  listRepositoriesPage: (i) => `List the repositories of ${i.org}, page ${i.page}`,
  planBackupExports: (i) => `Plan exports of at most ${i.reposPerExport} repositories from ${i.pages} listed pages`,
  plannedExport: (i) => `Read export ${i.part + 1} of the plan`,
  writeBackupManifest: (i) => `Write the manifest of ${i.org}'s backup into ${i.folder}`,
  pruneBackupRuns: (i) => `Delete ${i.org}'s backup runs older than ${Math.round(i.keepMs / 1000)} s`,
  deleteGithubArchive: (i) => `Delete GitHub's copy of export ${i.migrationId} of ${i.org}`,
  recordBackupFailure: (i) => `Count a failed backup of ${i.org}`,
};
