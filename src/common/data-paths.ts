/**
 * Paths that come from input (a file sink's `path`, a migration's `downloadDir`) name a place *inside* the
 * worker's data directory (`LONGHAUL_DATA_DIR`), never a place the caller picks on the worker's disk. This is
 * the deterministic half of the rule, which workflows run at validation and the CLI before it starts anything:
 * a path must be relative and must not climb with `..`. The other half needs the disk (links followed) and runs
 * in the activity that writes (`src/activities/data-dir.ts`).
 *
 * Deterministic: no Node built-ins (workflows import it).
 */
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES, failureTypes } from './failures';

export const PathFailure = failureTypes(FAILURES.path);

/** Why `path` (the input's `field`) cannot name a place inside the data directory; undefined when it can. */
export function dataPathProblem(path: unknown, field: string): string | undefined {
  if (typeof path !== 'string') return undefined;
  const where = `${field} must be a path relative to the worker's data directory (LONGHAUL_DATA_DIR)`;
  // POSIX absolute, Windows drive or UNC paths, and `~` (which a shell would expand to a home directory).
  if (/^([/\\~]|[A-Za-z]:)/.test(path)) return `${where}, not an absolute path`;
  if (path.split(/[/\\]+/).includes('..')) return `${where}; ".." is refused`;
  if (path.includes('\0')) return `${where}, without NUL characters`;
  return undefined;
}

/** The typed, permanent failure of a path refused by the rule above (or by the activity's check of the disk). */
export function pathOutsideDataDir(message: string, field: string): ApplicationFailure {
  return ApplicationFailure.create({ type: PathFailure.OutsideDataDir, nonRetryable: true, message: `${message}: refused, nothing was written`, details: [{ field }] });
}

/** The refusal of `path` (the input's `field`) by the rule above, or undefined when it may name a place inside. */
export function dataPathRefusal(path: unknown, field: string): ApplicationFailure | undefined {
  const problem = dataPathProblem(path, field);
  return problem === undefined ? undefined : pathOutsideDataDir(problem, field);
}
