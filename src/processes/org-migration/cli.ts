/**
 * `migrate`: export repositories of an organization, download the archive, unlock. One migration from
 * `--org`/`--repo`, or many from `--repos-file` / `--batch` (see batch.ts), each with its readable id.
 *
 *   longhaul migrate --org octo-org --repo alpha --repo beta --lock --wait
 *   longhaul migrate --org octo-org --repos-file repos.txt --lock --json
 *   longhaul migrate --batch migrations.csv --dry-run
 */
import type { Command } from 'commander';
import {
  DEFAULT_POLL,
  describeOrgMigration,
  MIGRATION_FLAG_FIELDS,
  MIGRATION_FLAGS,
  migrationInputProblems,
  migrationWorkflowId,
  type DownloadProgress,
  type MigrationFlag,
  type OrgMigrationInput,
  type OrgMigrationResult,
  type OrgMigrationStatus,
} from './model';
import { LonghaulOrg, LonghaulProcess, summarizeList } from '../../common/search-attributes';
import { orgMigration } from './workflow';
import { dataPathProblem } from '../../common/data-paths';
import { CliError, describeFailure, printJson, type CliContext } from '../../cli/kit/context';
import { ExitCode } from '../../common/exit-codes';
import { awaitOutcome, describePlan, planStart, printPlanLines, runWorkflowCommand, startPlan, withRunOutputOptions, type OutputFlags, type WorkflowCommand } from '../../cli/kit/run-workflow';
import { pollOptionsFrom, withPollOptions, type PollFlags } from '../../cli/kit/poll-options';
import { parseBatchCsv, parseReposFile, readBatchFile, type BatchEntry } from './cli-batch';
import { Process } from './names';

/** The body flags other than the lock keep their input names as options (`--exclude-git-data` → `excludeGitData`). */
type SameNamedFlags = Exclude<MigrationFlag, 'lockRepositories'>;

interface MigrateFlags extends OutputFlags, PollFlags, Pick<OrgMigrationInput, SameNamedFlags | 'downloadDir' | 'archiveTo'> {
  org?: string;
  repo: string[];
  reposFile?: string;
  batch?: string;
  lock?: boolean;
  deleteArchive?: boolean;
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
    `archive: ${r.archive.path} (${r.archive.bytes} bytes, sha256 ${r.archive.sha256}${r.archive.version ? `, version ${r.archive.version}` : ''})`,
    `unlocked: ${r.unlockedRepositories.length ? r.unlockedRepositories.join(', ') : '(none locked)'}`,
  ];
}

/** The UI's one-line summary of a migration: "Export octo-org: alpha, beta → archive" (or "→ s3://bucket/prefix/"). */
export function migrationSummary(input: Pick<OrgMigrationInput, 'org' | 'repositories' | 'archiveTo'>): string {
  return `Export ${input.org}: ${input.repositories.length ? summarizeList(input.repositories, 200) : 'organization metadata'} → ${input.archiveTo ?? 'archive'}`;
}

/** Everything `migrate` sends for one migration: the same command shape the single and batch paths share. */
export function migrationCommand(ctx: CliContext, input: OrgMigrationInput, flags: OutputFlags, workflowId?: string): WorkflowCommand<[OrgMigrationInput], OrgMigrationResult, OrgMigrationStatus> {
  return {
    ctx,
    workflow: orgMigration,
    // One id per repository set: a second migration of the same repositories is refused while one runs.
    workflowId: workflowId ?? migrationWorkflowId(input.org, input.repositories),
    args: [input],
    searchAttributes: [
      { key: LonghaulProcess, value: Process.OrgMigration },
      { key: LonghaulOrg, value: input.org },
    ],
    summary: migrationSummary(input),
    flags,
    describeResult: describeMigrationResult,
    describeStatus: describeMigrationStatus,
  };
}

function inputFrom(flags: MigrateFlags, org: string, repositories: string[]): OrgMigrationInput {
  const sameNamed = MIGRATION_FLAGS.filter((f): f is SameNamedFlags => f !== 'lockRepositories');
  return {
    org,
    repositories,
    lockRepositories: flags.lock,
    ...Object.fromEntries(sameNamed.map((f) => [f, flags[f]])),
    downloadDir: flags.downloadDir,
    archiveTo: flags.archiveTo,
    deleteArchiveAfterDownload: flags.deleteArchive,
    ...pollOptionsFrom(flags),
  };
}

/** The migrations the flags ask for: one from --org/--repo, or one per line/group of a file. */
function entriesFrom(flags: MigrateFlags): BatchEntry[] {
  const sources = [flags.repo.length > 0 ? '--repo' : undefined, flags.reposFile ? '--repos-file' : undefined, flags.batch ? '--batch' : undefined].filter(Boolean);
  if (sources.length > 1) throw new CliError(`give one of --repo, --repos-file, --batch (got ${sources.join(', ')})`, ExitCode.Usage);
  if (flags.batch) {
    if (flags.org) throw new CliError('--batch names the organization of each row; leave out --org', ExitCode.Usage);
    return parseBatchCsv(readBatchFile(flags.batch, '--batch'), flags.batch);
  }
  if (!flags.org) throw new CliError("required option '--org <org>' not specified", ExitCode.Usage);
  if (flags.reposFile) return parseReposFile(readBatchFile(flags.reposFile, '--repos-file'), flags.reposFile, flags.org);
  return [{ org: flags.org, repositories: flags.repo, source: 'arguments' }];
}

/** One migration of a batch, as reported. */
interface BatchRow extends Partial<OrgMigrationResult> {
  workflowId: string;
  org: string;
  repositories: string[];
  runId?: string;
  workflowStatus: string;
  exitCode: number;
  error?: { type?: string; message: string };
}

/** Starts every migration of a batch (after validating them all), one result line or JSON entry each. */
async function runBatch(ctx: CliContext, flags: MigrateFlags, entries: BatchEntry[], inputs: OrgMigrationInput[]): Promise<number> {
  const commands = inputs.map((input) => migrationCommand(ctx, input, flags));
  const plans = commands.map(planStart);
  const ids = new Set<string>();
  for (const [i, plan] of plans.entries()) {
    if (ids.has(plan.workflowId)) throw new CliError(`${entries[i].source}: the same repositories as another line (${plan.workflowId})`, ExitCode.Usage);
    ids.add(plan.workflowId);
  }
  if (flags.dryRun) {
    if (flags.json) printJson({ dryRun: true, migrations: plans.map(describePlan) });
    else for (const plan of plans) printPlanLines(plan);
    return ExitCode.Success;
  }
  const waiting = flags.wait || flags.follow;
  const rows = await Promise.all(
    plans.map(async (plan, i): Promise<BatchRow> => {
      const base = { workflowId: plan.workflowId, org: inputs[i].org, repositories: inputs[i].repositories };
      try {
        const handle = await startPlan(ctx, plan);
        if (!waiting) return { ...base, runId: handle.firstExecutionRunId, workflowStatus: 'RUNNING', exitCode: ExitCode.Success };
        const outcome = await awaitOutcome<OrgMigrationResult, OrgMigrationStatus>(handle);
        console.error(`${plan.workflowId}: ${outcome.workflowStatus}`);
        return { ...base, ...outcome.result, workflowStatus: outcome.workflowStatus, exitCode: outcome.exitCode, error: outcome.error };
      } catch (err) {
        if (!(err instanceof CliError)) throw err;
        return { ...base, workflowStatus: 'NOT_STARTED', error: describeFailure(err), exitCode: err.exitCode };
      }
    }),
  );
  const exitCode = Math.max(...rows.map((r) => r.exitCode));
  if (flags.json) printJson({ migrations: rows.map(({ exitCode: _code, ...row }) => row), exitCode });
  else
    for (const r of rows) {
      const what = `${r.org}: ${summarizeList(r.repositories, 120)}`;
      if (r.error) console.log(`${r.workflowId} ${r.workflowStatus.toLowerCase()} (${what}): ${r.error.type ? `${r.error.type}: ` : ''}${r.error.message}`);
      else if (waiting && r.archive) console.log(`${r.workflowId} ${r.workflowStatus.toLowerCase()} (${what}): ${r.archive.path}`);
      else console.log(`${r.workflowId} started (${what})`);
    }
  return exitCode;
}

/** Help for the flags whose field name alone does not say enough. */
const FLAG_HELP: Partial<Record<MigrationFlag, string>> = {
  lockRepositories: 'lock the repositories while exporting (lock_repositories)',
  orgMetadataOnly: 'export only organization metadata (no repositories)',
};

/** The start call's body flags as options, from the model's one definition: `--lock`, the others named by their field. */
function withMigrationFlags(command: Command): Command {
  for (const flag of MIGRATION_FLAGS) {
    const field = MIGRATION_FLAG_FIELDS[flag];
    command.option(flag === 'lockRepositories' ? '--lock' : `--${field.replaceAll('_', '-')}`, FLAG_HELP[flag] ?? field);
  }
  return command;
}

export function registerMigrateCommands(program: Command, ctx: () => CliContext): void {
  withRunOutputOptions(
    withPollOptions(
      withMigrationFlags(
        program
          .command('migrate')
          .description('Export organization repositories, download the archive (via its 302), and unlock them; many at once from a file')
          .option('--org <org>', 'organization')
          .option('--repo <name>', 'repository to export (repeat for several)', (v: string, acc: string[]) => [...acc, v], [] as string[])
          .option('--repos-file <file>', 'with --org: one migration per line, each line a repository or a group (a, b, c)')
          .option('--batch <csv>', 'a CSV with a header naming org and repo columns (and optionally group): one migration per row or group'),
      )
        .option('--download-dir <dir>', 'where the archive goes, inside the worker\u2019s data directory (relative; absolute paths and .. are refused)')
        .option('--archive-to <url>', 'stream the archive into an object store: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or azblob://CONTAINER/PREFIX (credentials from the worker\'s SDK settings); default: the worker\'s LONGHAUL_ARCHIVE_TO, else its data dir')
        .option('--delete-archive', 'delete the archive on the server after download'),
      { defaults: DEFAULT_POLL },
    ),
  ).action(async (flags: MigrateFlags) => {
    const entries = entriesFrom(flags);
    const inputs = entries.map((e) => inputFrom(flags, e.org, e.repositories));
    // Fail before starting anything: the workflow would reject it too, but a CLI user wants it now (and a
    // batch starts all or nothing).
    // The data-directory rule the workflow applies too (`dataPathProblem`), before anything is started.
    const pathProblem = dataPathProblem(flags.downloadDir, '--download-dir');
    if (pathProblem) throw new CliError(`${pathProblem} (nothing was started)`, ExitCode.Usage);
    const problems = inputs.flatMap((input, i) => migrationInputProblems(input).map((p) => (entries.length > 1 || flags.batch || flags.reposFile ? `${entries[i].source}: ${p}` : p)));
    if (problems.length) throw new CliError(`invalid input: ${problems.join('; ')}`, ExitCode.Usage);
    if (flags.batch || flags.reposFile) {
      if (flags.workflowId) throw new CliError('--workflow-id names one migration; a batch derives one id per migration', ExitCode.Usage);
      process.exitCode = await runBatch(ctx(), flags, entries, inputs);
      return;
    }
    process.exitCode = await runWorkflowCommand(migrationCommand(ctx(), inputs[0], flags, flags.workflowId));
  });
}
