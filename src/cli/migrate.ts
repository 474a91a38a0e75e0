/**
 * `migrate`: export repositories of an organization, download the archive, unlock.
 *
 *   npm run starter -- migrate --org octo-org --repo alpha --repo beta --lock --wait
 */
import type { Command } from 'commander';
import {
  describeOrgMigration,
  MIGRATION_FLAGS,
  migrationInputProblems,
  migrationWorkflowId,
  ORG_MIGRATION,
  type MigrationFlag,
  type OrgMigrationInput,
  type OrgMigrationResult,
  type OrgMigrationStatus,
} from '../common/org-migration';
import type { DownloadProgress } from '../activities/github/migrations';
import { LonghaulOrg, LonghaulProcess } from '../common/search-attributes';
import { CliError, type CliContext } from './context';
import { runWorkflowCommand, withRunOutputOptions, type OutputFlags } from './run-workflow';
import { CREDENTIAL_OPTION_HELP, credentialName, positiveSeconds } from './arguments';

/** The body flags other than the lock keep their input names as options (`--exclude-git-data` → `excludeGitData`). */
type SameNamedFlags = Exclude<MigrationFlag, 'lockRepositories'>;

interface MigrateFlags extends OutputFlags, Pick<OrgMigrationInput, SameNamedFlags | 'downloadDir'> {
  org: string;
  repo: string[];
  lock?: boolean;
  deleteArchive?: boolean;
  pollInitial?: number;
  pollMax?: number;
  outageBudget?: number;
  credential?: string;
  workflowId?: string;
}

/** The CLI's progress line: the process's own `describeOrgMigration`, with the download's heartbeat when there is one. */
export function describeMigrationStatus(s: OrgMigrationStatus, heartbeat?: unknown): { line: string; percent?: number } {
  const { line, percent } = describeOrgMigration(s, heartbeat as DownloadProgress | undefined);
  return { line, percent };
}

export function describeMigrationResult(r: OrgMigrationResult): string[] {
  return [
    `migration ${r.migrationId} ${r.state}`,
    `archive: ${r.archive.path} (${r.archive.bytes} bytes, sha256 ${r.archive.sha256})`,
    `unlocked: ${r.unlockedRepositories.length ? r.unlockedRepositories.join(', ') : '(none locked)'}`,
  ];
}

export function registerMigrateCommands(program: Command, ctx: () => CliContext): void {
  withRunOutputOptions(
    program
      .command('migrate')
      .description('Export organization repositories, download the archive (via its 302), and unlock them')
      .requiredOption('--org <org>', 'organization')
      .option('--repo <name>', 'repository to export (repeat for several)', (v: string, acc: string[]) => [...acc, v], [] as string[])
      .option('--lock', 'lock the repositories while exporting (lock_repositories)')
      .option('--exclude-metadata', 'exclude_metadata')
      .option('--exclude-git-data', 'exclude_git_data')
      .option('--exclude-attachments', 'exclude_attachments')
      .option('--exclude-releases', 'exclude_releases')
      .option('--exclude-owner-projects', 'exclude_owner_projects')
      .option('--org-metadata-only', 'export only organization metadata (no repositories)')
      .option('--download-dir <dir>', 'where the archive goes (relative to the worker data dir)')
      .option('--delete-archive', 'delete the archive on the server after download')
      .option('--poll-initial <seconds>', 'first poll interval', positiveSeconds)
      .option('--poll-max <seconds>', 'largest poll interval', positiveSeconds)
      .option('--outage-budget <seconds>', 'how long failing API calls are waited out in a row (default 6 hours)', positiveSeconds)
      .option('--credential <name>', CREDENTIAL_OPTION_HELP, credentialName),
  ).action(async (flags: MigrateFlags) => {
    const sameNamed = MIGRATION_FLAGS.filter((f): f is SameNamedFlags => f !== 'lockRepositories');
    const input: OrgMigrationInput = {
      org: flags.org,
      repositories: flags.repo,
      lockRepositories: flags.lock,
      ...Object.fromEntries(sameNamed.map((f) => [f, flags[f]])),
      downloadDir: flags.downloadDir,
      deleteArchiveAfterDownload: flags.deleteArchive,
      poll: {
        ...(flags.pollInitial ? { initialIntervalMs: flags.pollInitial * 1000 } : {}),
        ...(flags.pollMax ? { maxIntervalMs: flags.pollMax * 1000 } : {}),
      },
      ...(flags.outageBudget ? { outage: { budgetMs: flags.outageBudget * 1000 } } : {}),
      ...(flags.credential ? { credential: flags.credential } : {}),
    };
    // Fail before starting anything: the workflow would reject it too, but a CLI user wants it now.
    const problems = migrationInputProblems(input);
    if (problems.length) throw new CliError(`invalid input: ${problems.join('; ')}`, 2);
    const context = ctx();
    process.exitCode = await runWorkflowCommand<[OrgMigrationInput], OrgMigrationResult, OrgMigrationStatus>({
      ctx: context,
      workflowType: 'orgMigration',
      // One id per repository set: a second migration of the same repositories is refused while one runs.
      workflowId: flags.workflowId ?? migrationWorkflowId(flags.org, flags.repo),
      args: [input],
      searchAttributes: [
        { key: LonghaulProcess, value: ORG_MIGRATION },
        { key: LonghaulOrg, value: flags.org },
      ],
      flags,
      describeResult: describeMigrationResult,
      describeStatus: describeMigrationStatus,
    });
  });
}
