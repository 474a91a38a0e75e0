/**
 * GitHub's name rules, once: organization/user logins and repository names. Every process that takes
 * GitHub names validates them here (the CLI and the workflows run the same checks).
 */

/** Alphanumerics and single hyphens, no hyphen at either end, at most 39 characters. */
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
/** Letters, digits, `.`, `_` and `-`, at most 100 characters, and not `.` or `..`. */
const REPOSITORY = /^[A-Za-z0-9._-]{1,100}$/;

/** An organization or user login. */
export function isGithubLogin(value: unknown): value is string {
  return typeof value === 'string' && LOGIN.test(value);
}

/** A repository name (without the owner). */
export function isRepositoryName(value: unknown): value is string {
  return typeof value === 'string' && REPOSITORY.test(value) && value !== '.' && value !== '..';
}

/** Problems with a login field (empty when valid). */
export function loginProblems(value: unknown, field: string, kind = 'organization'): string[] {
  if (typeof value !== 'string' || value.trim() === '') return [`${field} must be a non-empty ${kind} name`];
  if (!isGithubLogin(value)) return [`${field} ${JSON.stringify(value)} is not a valid ${kind} name (letters, digits and single inner hyphens, at most 39)`];
  return [];
}

/** Problems with a list of repository names: invalid names and names listed twice (GitHub ignores case). */
export function repositoryListProblems(values: readonly unknown[], field = 'repository'): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const value of values) {
    if (!isRepositoryName(value)) problems.push(`${field} ${JSON.stringify(value)} is not a valid repository name (letters, digits, . _ -, at most 100, not . or ..)`);
    else if (seen.has(value.toLowerCase())) problems.push(`${field} ${value} is listed twice`);
    else seen.add(value.toLowerCase());
  }
  return problems;
}
