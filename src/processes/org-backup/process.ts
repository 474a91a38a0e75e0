/** Organization backups as the rest of longhaul sees it (see src/processes/descriptor.ts). */
import { BACKUP_FAILURES } from './failures';
import { defineProcess } from '../descriptor';
import { Process } from './names';
import { LonghaulOrg, LonghaulProcess, LonghaulState, LonghaulTarget } from '../../common/search-attributes';
import { describeBackup, type BackupResult, type BackupStatus } from './model';
import { orgBackup } from './workflow';
import { BACKUP_SUMMARIES } from './summaries';
import { describeBackupResult, registerBackupCommands, BACKUP_SCHEDULE_PREFIX } from './cli';

export const backupProcess = defineProcess({
  name: 'org-backup',
  processNames: [Process.Backup],
  workflows: [orgBackup],
  activities: () => import('./activities').then((m) => m.createBackupActivities),
  summaries: BACKUP_SUMMARIES,
  failures: [BACKUP_FAILURES],
  kinds: {
    [orgBackup.name]: {
      process: Process.Backup,
      describeStatus: (s) => describeBackup(s as BackupStatus),
      describeResult: (r) => describeBackupResult(r as BackupResult),
    },
  },
  commands: { group: 'start', register: registerBackupCommands },
  searchAttributes: [LonghaulProcess, LonghaulOrg, LonghaulTarget, LonghaulState],
  schedules: [{ idPrefix: BACKUP_SCHEDULE_PREFIX, workflowType: orgBackup.name }],
});
