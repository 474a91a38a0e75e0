/**
 * Source import from the starter, and the answers a waiting import takes:
 *
 *   npm run starter -- import --owner octo-org --repo alpha --vcs-url https://svn.example.test/repos/happy \
 *       [--vcs subversion] [--authors authors.csv] [--lfs opt_in|opt_out|auto:5GB] [--follow] [--wait] [--json]
 *   npm run starter -- import-credentials --workflow-id ID --credentials svn-main
 *   npm run starter -- import-choose --workflow-id ID --index 2
 *   npm run starter -- import-map-author --workflow-id ID --remote jdoe --name "Jane Doe" --email jane@example.com
 *
 * The answer commands find the import by `--workflow-id`, or by `--owner`/`--repo` among running
 * imports, send the workflow's update and print what it accepted or why it refused. Credentials are
 * only ever the name of a credential configured on the workers (`LONGHAUL_IMPORT_CREDENTIALS`); a secret or an
 * `env:`/`file:` reference is refused here, before it leaves this machine.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import {
  authorMappingProblems,
  importCredentialProblems,
  DEFAULT_IMPORT_POLL,
  describeSourceImportStatus,
  IMPORT_VCS_TYPES,
  importInputProblems,
  parseLfsPolicy,
  type AuthorMapping,
  type ChoiceAnswer,
  type LfsPolicy,
  type SourceImportInput,
  type SourceImportResult,
  type SourceImportStatus,
} from './model';
import { LonghaulOrg, LonghaulProcess, LonghaulTarget } from '../../common/search-attributes';
import { CliError, describeFailure, printJson, type CliContext } from '../../cli/kit/context';
import { readableWorkflowId, runWorkflowCommand, withRunOutputOptions, type OutputFlags } from '../../cli/kit/run-workflow';
import { positiveSeconds, wholeNumber } from '../../cli/kit/arguments';
import { pollOptionsFrom, withPollOptions, type PollFlags } from '../../cli/kit/poll-options';
import { csvFields } from '../../cli/kit/csv';
import { importChooseUpdate, importCredentialsUpdate, importMapAuthorUpdate, sourceImport } from './workflow';
import { processClause } from '../../common/processes';
import { Process } from './names';

/** Flags named like the input field they set are that field; the others are read from a file or combined. */
interface ImportFlags
  extends OutputFlags, PollFlags, Pick<SourceImportInput, 'owner' | 'repo' | 'vcsUrl' | 'vcs' | 'tfvcProject' | 'credentials' | 'lfs' | 'maxRestarts'> {
  /** A file of author mappings. */
  authors?: string;
  projectVcs?: string;
  projectTfvc?: string;
  projectName?: string;
  answerTimeout?: number;
  workflowId?: string;
}

interface AnswerFlags {
  workflowId?: string;
  owner?: string;
  repo?: string;
  json?: boolean;
}

function lfsPolicy(value: string): LfsPolicy {
  try {
    return parseLfsPolicy(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/**
 * Reads an author mapping file: CSV with columns `remote,name,email` (a header line is optional, `#`
 * starts a comment) or JSON, an array of `{ remote, name, email }`.
 */
export function parseAuthorsFile(text: string, fileName: string): AuthorMapping[] {
  const json = extname(fileName).toLowerCase() === '.json' || text.trimStart().startsWith('[');
  let mappings: AuthorMapping[];
  if (json) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new CliError(`${fileName}: not valid JSON (${(err as Error).message})`, 2);
    }
    if (!Array.isArray(parsed)) throw new CliError(`${fileName}: expected a JSON array of { remote, name, email }`, 2);
    mappings = parsed as AuthorMapping[];
  } else {
    mappings = [];
    text.split(/\r?\n/).forEach((raw, index) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const fields = csvFields(line);
      if (mappings.length === 0 && fields.map((f) => f.toLowerCase()).join(',') === 'remote,name,email') return;
      if (fields.length !== 3) throw new CliError(`${fileName}:${index + 1}: expected 3 columns remote,name,email, got ${fields.length}`, 2);
      mappings.push({ remote: fields[0], name: fields[1], email: fields[2] });
    });
  }
  const problems = mappings.flatMap((m, i) => authorMappingProblems(m).map((p) => `${fileName} entry ${i + 1}: ${p}`));
  if (problems.length > 0) throw new CliError(problems.join('; '), 2);
  return mappings;
}

export function describeImportResult(r: SourceImportResult): string[] {
  const lines = [`import of ${r.vcsUrl} into ${r.owner}/${r.repo}: ${r.status} (${r.vcs ?? 'vcs not reported'}, ${r.commitCount} commits)`];
  if (r.chosenProject) lines.push(`project: ${r.chosenProject.humanName ?? r.chosenProject.vcs}`);
  lines.push(`authors mapped: ${r.authorsMapped.length ? r.authorsMapped.map((a) => `${a.remoteId} → ${a.name} <${a.email}>`).join(', ') : '(none)'}`);
  if (r.unmatchedMappings.length) lines.push(`mappings that matched no author: ${r.unmatchedMappings.map((m) => m.remote).join(', ')}`);
  if (r.lfs) lines.push(`large files: ${r.lfs.useLfs} (${r.lfs.reason}): ${r.lfs.largeFiles.map((f) => `${f.path} (${f.size} bytes)`).join(', ')}`);
  if (r.restarts) lines.push(`restarts after errors: ${r.restarts}`);
  if (r.htmlUrl || r.repositoryUrl) lines.push(`repository: ${r.repositoryUrl ?? r.htmlUrl}`);
  for (const warning of r.warnings) lines.push(`warning: ${warning}`);
  return lines;
}

/** The running import the answer is for: by workflow id, or the one running for `--owner`/`--repo`. */
async function findImport(ctx: CliContext, flags: AnswerFlags): Promise<string> {
  if (flags.workflowId) return flags.workflowId;
  if (!flags.owner || !flags.repo) throw new CliError('give --workflow-id, or --owner and --repo of a running import', 2);
  if (!/^[A-Za-z0-9._-]+$/.test(flags.owner) || !/^[A-Za-z0-9._-]+$/.test(flags.repo)) throw new CliError('--owner and --repo must be an account and a repository name', 2);
  const client = await ctx.client();
  const query = `${processClause(Process.SourceImport)} AND ${LonghaulTarget.name} = '${flags.owner}/${flags.repo}' AND ExecutionStatus = 'Running'`;
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query })) ids.push(execution.workflowId);
  if (ids.length === 0) throw new CliError(`no running import into ${flags.owner}/${flags.repo}`);
  if (ids.length > 1) throw new CliError(`several running imports into ${flags.owner}/${flags.repo} (${ids.join(', ')}); give --workflow-id`);
  return ids[0];
}

/** Sends an update and prints what the workflow accepted, or why it refused. Returns the exit code. */
async function answer<Result, Arg>(ctx: CliContext, flags: AnswerFlags, update: UpdateDefinition<Result, [Arg]>, arg: Arg, describe: (r: Result) => string[]): Promise<number> {
  const workflowId = await findImport(ctx, flags);
  const client = await ctx.client();
  const updateName = update.name;
  try {
    const result = await client.workflow.getHandle(workflowId).executeUpdate(update, { args: [arg] });
    if (flags.json) printJson({ workflowId, update: updateName, accepted: true, result });
    else for (const line of describe(result)) console.log(line);
    return 0;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new CliError(`no workflow ${workflowId} to answer (finished, or never started?)`);
    if (!(err instanceof WorkflowUpdateFailedError)) throw err;
    const failure = describeFailure(err.cause ?? err);
    if (flags.json) printJson({ workflowId, update: updateName, accepted: false, error: failure });
    else console.error(`error: ${workflowId} refused ${updateName}: ${failure.message}`);
    return 1;
  }
}

function withAnswerOptions(command: Command): Command {
  return command
    .option('--workflow-id <id>', 'the import workflow (printed by `import`)')
    .option('--owner <owner>', 'or: the owner of the repository a running import targets')
    .option('--repo <repo>', 'and its repository name')
    .addOption(new Option('--json', 'print one JSON object'));
}

export function registerImportCommands(program: Command, ctx: () => CliContext): void {
  withRunOutputOptions(
    withPollOptions(
      program
        .command('import')
        .description('Import a repository from Subversion, Mercurial, TFVC or Git into a repository (the source-import API), durably')
        .requiredOption('--owner <owner>', 'owner of the target repository')
        .requiredOption('--repo <repo>', 'target repository')
        .requiredOption('--vcs-url <url>', 'address of the source repository')
        .addOption(new Option('--vcs <vcs>', 'source VCS (without it the server detects it)').choices([...IMPORT_VCS_TYPES]))
        .option('--tfvc-project <name>', 'TFVC project (with --vcs tfvc)')
        .option('--credentials <name>', 'source credentials: the name of a credential configured on the workers (LONGHAUL_IMPORT_CREDENTIALS)')
        .option('--authors <file>', 'author mapping: CSV remote,name,email or a JSON array of { remote, name, email }')
        .option('--lfs <policy>', 'large files: opt_in, opt_out, or auto:SIZE (LFS when they total at most SIZE, e.g. auto:5GB)', lfsPolicy)
        .option('--project-vcs <vcs>', 'when detection finds several projects: pick the one with this vcs')
        .option('--project-tfvc <name>', 'when detection finds several projects: pick this TFVC project')
        .option('--project-name <name>', 'when detection finds several projects: pick the one with this name')
        .option('--max-restarts <n>', 'restarts after an error before giving up (default 2)', wholeNumber)
        .option('--answer-timeout <seconds>', 'how long to wait for credentials or a choice (default 24 h)', positiveSeconds),
      { defaults: DEFAULT_IMPORT_POLL },
    ),
  ).action(async (flags: ImportFlags) => {
    const rule = { vcs: flags.projectVcs, tfvcProject: flags.projectTfvc, humanName: flags.projectName };
    const input: SourceImportInput = {
      owner: flags.owner,
      repo: flags.repo,
      vcsUrl: flags.vcsUrl,
      vcs: flags.vcs,
      tfvcProject: flags.tfvcProject,
      credentials: flags.credentials,
      authors: flags.authors ? parseAuthorsFile(readAuthorsFile(flags.authors), flags.authors) : undefined,
      lfs: flags.lfs,
      projectChoice: Object.values(rule).some((v) => v !== undefined) ? rule : undefined,
      maxRestarts: flags.maxRestarts,
      answerTimeoutMs: flags.answerTimeout !== undefined ? flags.answerTimeout * 1000 : undefined,
      ...pollOptionsFrom(flags),
    };
    // Fail before starting anything (and before a pasted secret reaches workflow history).
    const problems = importInputProblems(input);
    if (problems.length) throw new CliError(`invalid input: ${problems.join('; ')}`, 2);
    const context = ctx();
    const workflowId = flags.workflowId ?? readableWorkflowId('import', [flags.owner, flags.repo]);
    process.exitCode = await runWorkflowCommand<[SourceImportInput], SourceImportResult, SourceImportStatus>({
      ctx: context,
      workflow: sourceImport,
      summary: `Import ${flags.vcsUrl} → ${flags.owner}/${flags.repo}`,
      workflowId,
      args: [input],
      searchAttributes: [
        { key: LonghaulProcess, value: Process.SourceImport },
        { key: LonghaulOrg, value: flags.owner },
        { key: LonghaulTarget, value: `${flags.owner}/${flags.repo}` },
      ],
      flags,
      describeResult: describeImportResult,
      describeStatus: (s) => describeSourceImportStatus(s, workflowId),
    });
  });

  withAnswerOptions(
    program
      .command(importCredentialsUpdate.name)
      .description('Answer an import waiting for credentials (auth_failed, detection_needs_auth) with the name of a configured credential')
      .requiredOption('--credentials <name>', 'a credential configured on the workers (LONGHAUL_IMPORT_CREDENTIALS)'),
  ).action(async (flags: AnswerFlags & { credentials: string }) => {
    const problems = importCredentialProblems(flags.credentials);
    if (problems.length) throw new CliError(`${problems.join('; ')} (nothing was sent)`, 2);
    process.exitCode = await answer(ctx(), flags, importCredentialsUpdate, { credentials: flags.credentials }, (r) => [
      `accepted credentials ${r.credentials}; the import is now ${r.status}`,
    ]);
  });

  withAnswerOptions(
    program
      .command(importChooseUpdate.name)
      .description('Answer an import that found several projects (detection_found_multiple) with one of its project_choices')
      .option('--index <n>', 'position in project_choices (shown by --follow and the status query)', wholeNumber)
      .option('--vcs <vcs>', 'or: the vcs of the choice')
      .option('--tfvc-project <name>', 'or: the TFVC project of the choice')
      .option('--name <humanName>', 'or: the name of the choice'),
  ).action(async (flags: AnswerFlags & { index?: number; vcs?: string; tfvcProject?: string; name?: string }) => {
    const choice: ChoiceAnswer = { index: flags.index, vcs: flags.vcs, tfvcProject: flags.tfvcProject, humanName: flags.name };
    if (Object.values(choice).every((v) => v === undefined)) throw new CliError('give --index, or --vcs/--tfvc-project/--name of one offered choice', 2);
    process.exitCode = await answer(ctx(), flags, importChooseUpdate, choice, (r) => [
      `accepted project ${r.choice.humanName ?? r.choice.vcs}; the import is now ${r.status}`,
    ]);
  });

  withAnswerOptions(
    program
      .command(importMapAuthorUpdate.name)
      .description('Map a commit author of a running import to a Git name and email (before the push)')
      .requiredOption('--remote <id>', 'remote id, remote name or current email of the author')
      .requiredOption('--name <name>', 'Git author name')
      .requiredOption('--email <email>', 'Git author email'),
  ).action(async (flags: AnswerFlags & { remote: string; name: string; email: string }) => {
    const mapping: AuthorMapping = { remote: flags.remote, name: flags.name, email: flags.email };
    const problems = authorMappingProblems(mapping);
    if (problems.length) throw new CliError(problems.join('; '), 2);
    process.exitCode = await answer(
      ctx(),
      flags,
      importMapAuthorUpdate,
      mapping,
      (r) => [
        r.mappedAuthors.length
          ? `accepted: mapped ${r.mappedAuthors.map((a) => `${a.remoteId} → ${a.name} <${a.email}>`).join(', ')}`
          : r.waitingForAuthors
            ? `accepted: ${mapping.remote} → ${mapping.name} <${mapping.email}> applies when that author is found`
            : `accepted: ${mapping.remote} already is ${mapping.name} <${mapping.email}>`,
      ],
    );
  });
}

function readAuthorsFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read --authors ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 2);
  }
}
