/**
 * Many migrations from one file, as `gh gei` users keep their lists:
 *
 * - `--repos-file FILE` with `--org`: one migration per line; a line is one repository or a group of them
 *   (separated by commas or spaces); blank lines and `#` comments are skipped.
 * - `--batch FILE.csv`: a CSV with a header naming the columns: the organization (`org`, `owner`,
 *   `source-org`, `Org_Name`…), the repository (`repo`, `repository`, `name`, `source-repo`, `Repo_Name`…)
 *   and, optionally, a group (`group`, `batch`, `migration`): rows with the same org and group form one
 *   migration, every other row is a migration of its own.
 *
 * Both keep the file's order and report `file:line` for every problem, so a 500-line batch fails on the
 * first look, before anything starts.
 */
import { readFileSync } from 'node:fs';
import { csvFields } from '../../cli/kit/csv';
import { CliError } from '../../cli/kit/context';
import { ExitCode } from '../../common/exit-codes';

export interface BatchEntry {
  org: string;
  repositories: string[];
  /** `file:line` of the entry's first line, for messages. */
  source: string;
}

export function readBatchFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, ExitCode.Usage);
  }
}

function contentLines(text: string): { line: string; number: number }[] {
  return text
    .split(/\r?\n/)
    .map((raw, i) => ({ line: raw.trim(), number: i + 1 }))
    .filter(({ line }) => line !== '' && !line.startsWith('#'));
}

/** `--repos-file`: one migration per line in `org`. */
export function parseReposFile(text: string, fileName: string, org: string): BatchEntry[] {
  const entries = contentLines(text).map(({ line, number }) => ({
    org,
    repositories: line.split(/[\s,]+/).filter(Boolean),
    source: `${fileName}:${number}`,
  }));
  if (entries.length === 0) throw new CliError(`${fileName}: no repositories (one repository, or a group separated by commas, per line)`, ExitCode.Usage);
  return entries;
}

const ORG_COLUMNS = ['org', 'organization', 'owner', 'source-org', 'source_org', 'org_name', 'github_org'];
const REPO_COLUMNS = ['repo', 'repository', 'name', 'source-repo', 'source_repo', 'repo_name', 'github_repo'];
const GROUP_COLUMNS = ['group', 'batch', 'migration', 'wave'];

/** `--batch`: a CSV with org and repo columns (and an optional group column). */
export function parseBatchCsv(text: string, fileName: string): BatchEntry[] {
  const lines = contentLines(text);
  if (lines.length === 0) throw new CliError(`${fileName}: empty CSV`, ExitCode.Usage);
  const header = csvFields(lines[0].line).map((h) => h.toLowerCase().replace(/\s+/g, '_'));
  const column = (names: string[]) => header.findIndex((h) => names.includes(h));
  const orgAt = column(ORG_COLUMNS);
  const repoAt = column(REPO_COLUMNS);
  const groupAt = column(GROUP_COLUMNS);
  if (orgAt < 0 || repoAt < 0) {
    throw new CliError(`${fileName}:${lines[0].number}: the header must name an org column (${ORG_COLUMNS.join(', ')}) and a repository column (${REPO_COLUMNS.join(', ')})`, ExitCode.Usage);
  }
  const entries: BatchEntry[] = [];
  const groups = new Map<string, BatchEntry>();
  for (const { line, number } of lines.slice(1)) {
    const fields = csvFields(line);
    const org = fields[orgAt] ?? '';
    // A full name (`octo-org/alpha`) or a URL in the repository column is reduced to the name.
    const repo = (fields[repoAt] ?? '').replace(/\/+$/, '').split('/').pop() ?? '';
    if (!org || !repo) throw new CliError(`${fileName}:${number}: needs an org and a repository`, ExitCode.Usage);
    const group = groupAt >= 0 ? fields[groupAt] : '';
    const key = `${org.toLowerCase()}\n${group}`;
    const existing = group ? groups.get(key) : undefined;
    if (existing) existing.repositories.push(repo);
    else {
      const entry = { org, repositories: [repo], source: `${fileName}:${number}` };
      entries.push(entry);
      if (group) groups.set(key, entry);
    }
  }
  if (entries.length === 0) throw new CliError(`${fileName}: no rows after the header`, ExitCode.Usage);
  return entries;
}
