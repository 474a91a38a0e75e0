/** The organization migration as the rest of longhaul sees it (see src/processes/descriptor.ts). */
import { MIGRATION_FAILURES } from './failures';
import { defineProcess } from '../descriptor';
import { Process } from './names';
import { LonghaulMigrationGuid, LonghaulOrg, LonghaulProcess, LonghaulState, LonghaulTarget } from '../../common/search-attributes';
import { describeOrgMigration, type OrgMigrationResult, type OrgMigrationStatus } from './model';
import { orgMigration } from './workflow';
import { MIGRATION_SUMMARIES } from './summaries';
import { describeMigrationResult, registerMigrateCommands } from './cli';

export const orgMigrationProcess = defineProcess({
  name: 'org-migration',
  processNames: [Process.OrgMigration],
  workflows: [orgMigration],
  activities: () => import('./activities').then((m) => m.createMigrationActivities),
  summaries: MIGRATION_SUMMARIES,
  failures: [MIGRATION_FAILURES],
  kinds: {
    [orgMigration.name]: {
      process: Process.OrgMigration,
      describeStatus: (s, heartbeat) => describeOrgMigration(s as OrgMigrationStatus, heartbeat as { offset?: number; total?: number } | undefined),
      describeResult: (r) => describeMigrationResult(r as OrgMigrationResult),
      describeCleanup: (s) => {
        const unlocked = (s as OrgMigrationStatus).unlockedRepositories;
        return unlocked.length > 0 ? `unlocked ${[...unlocked].sort().join(', ')}` : 'no repository was locked';
      },
    },
  },
  commands: { group: 'start', register: registerMigrateCommands },
  searchAttributes: [LonghaulProcess, LonghaulOrg, LonghaulTarget, LonghaulState, LonghaulMigrationGuid],
});
