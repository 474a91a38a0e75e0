/**
 * GitHub's name rules, once: organization/user logins and repository names. Every process that takes
 * GitHub names validates them here (the CLI and the workflows run the same checks).
 */
import * as v from 'valibot';
import { firstProblem } from './schema';

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

/** A login field (an organization's by default): a non-empty name that follows GitHub's login rules. */
export function loginSchema(kind = 'organization') {
  return firstProblem(
    v.pipe(
      v.string(`must be a non-empty ${kind} name`),
      v.check((value) => value.trim() !== '', `must be a non-empty ${kind} name`),
      v.check((value: string) => isGithubLogin(value), (issue) => `${JSON.stringify(issue.input)} is not a valid ${kind} name (letters, digits and single inner hyphens, at most 39)`),
    ),
  );
}

/** A list of repository names: each valid, none listed twice (GitHub ignores case). */
export const RepositoryListSchema = v.pipe(
  v.array(
    v.custom<string>(isRepositoryName, (issue) => `${JSON.stringify(issue.input)} is not a valid repository name (letters, digits, . _ -, at most 100, not . or ..)`),
    'must be an array of repository names',
  ),
  // Also among invalid names: each problem is named at once.
  v.rawCheck(({ dataset, addIssue }) => {
    const names: unknown = dataset.value;
    if (!Array.isArray(names)) return;
    const seen = new Set<string>();
    names.forEach((name: unknown, key) => {
      if (!isRepositoryName(name)) return;
      if (seen.has(name.toLowerCase())) addIssue({ message: `${name} is listed twice`, path: [{ type: 'array', origin: 'value', input: names, key, value: name }] });
      seen.add(name.toLowerCase());
    });
  }),
);
