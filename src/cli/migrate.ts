/**
 * `migrate`: export repositories of an organization, download the archive, unlock.
 *
 *   npm run starter -- migrate --org octo-org --repo alpha --repo beta --lock --wait
 */
import type { Command } from 'commander';
import type { OrgMigrationInput, OrgMigrationResult, OrgMigrationStatus } from '../common/migration-input';
import { migrationInputProblems } from '../common/migration-input';
import type { DownloadProgress } from '../activities/github/migrations';
import { LonghaulOrg, LonghaulProcess } from '../common/search-attributes';
import { CliError, type CliContext } from './context';
import { readableWorkflowId, runWorkflowCommand, withRunOutputOptions, type OutputFlags } from './run-workflow';
import { positiveSeconds } from './arguments';

interface MigrateFlags extends OutputFlags {
  org: string;
  repo: string[];
  lock?: boolean;
  excludeMetadata?: boolean;
  excludeGitData?: boolean;
  excludeAttachments?: boolean;
  excludeReleases?: boolean;
  excludeOwnerProjects?: boolean;
  orgMetadataOnly?: boolean;
  downloadDir?: string;
  deleteArchive?: boolean;
  pollInitial?: number;
  pollMax?: number;
  workflowId?: string;
}

export function describeMigrationStatus(s: OrgMigrationStatus, heartbeat?: unknown): { line: string; percent?: number } {
  const parts = [`${s.phase}`];
  const progress = heartbeat as DownloadProgress | undefined;
  if (s.phase === 'downloading' && typeof progress?.offset === 'number') {
    const kib = (n: number) => `${Math.round(n / 1024)} KiB`;
    parts.push(`${kib(progress.offset)}${progress.total ? ` of ${kib(progress.total)}` : ''}`);
    if (progress.total) return { line: [...parts, ...(s.migrationId !== undefined ? [`migration ${s.migrationId}`] : [])].join(' · '), percent: (100 * progress.offset) / progress.total };
  }
  if (s.migrationId !== undefined) parts.push(`migration ${s.migrationId}`);
  if (s.state) parts.push(`state ${s.state}`);
  if (s.phase === 'waiting') parts.push(`${s.polls} polls`);
  if (s.unlockedRepositories.length) parts.push(`unlocked ${s.unlockedRepositories.join(', ')}`);
  return { line: parts.join(' · ') };
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
      .option('--poll-max <seconds>', 'largest poll interval', positiveSeconds),
  ).action(async (flags: MigrateFlags) => {
    const input: OrgMigrationInput = {
      org: flags.org,
      repositories: flags.repo,
      lockRepositories: flags.lock,
      excludeMetadata: flags.excludeMetadata,
      excludeGitData: flags.excludeGitData,
      excludeAttachments: flags.excludeAttachments,
      excludeReleases: flags.excludeReleases,
      excludeOwnerProjects: flags.excludeOwnerProjects,
      orgMetadataOnly: flags.orgMetadataOnly,
      downloadDir: flags.downloadDir,
      deleteArchiveAfterDownload: flags.deleteArchive,
      poll: {
        ...(flags.pollInitial ? { initialIntervalMs: flags.pollInitial * 1000 } : {}),
        ...(flags.pollMax ? { maxIntervalMs: flags.pollMax * 1000 } : {}),
      },
    };
    // Fail before starting anything: the workflow would reject it too, but a CLI user wants it now.
    const problems = migrationInputProblems(input);
    if (problems.length) throw new CliError(`invalid input: ${problems.join('; ')}`, 2);
    const context = ctx();
    process.exitCode = await runWorkflowCommand<[OrgMigrationInput], OrgMigrationResult, OrgMigrationStatus>({
      ctx: context,
      workflowType: 'orgMigration',
      workflowId: flags.workflowId ?? readableWorkflowId('migrate', [flags.org, ...flags.repo]),
      args: [input],
      searchAttributes: [
        { key: LonghaulProcess, value: 'org-migration' },
        { key: LonghaulOrg, value: flags.org },
      ],
      flags,
      describeResult: describeMigrationResult,
      describeStatus: describeMigrationStatus,
    });
  });
}
