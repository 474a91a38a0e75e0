/**
 * Checking the emulator's GitHub answers against the official description (`github-openapi.ts`), with the
 * few places where spec 002 (the seed longhaul implements) and the description disagree named as exceptions,
 * each with its reason: there the seed wins, and only the named error on the named routes is forgiven.
 *
 * A ledger records every route × status a test checked and every exception that was needed, so a test can
 * print what it covered and assert that no exception is stale.
 */
import { checkGithubAnswer, checkGithubSchema, documentsStatus, findTemplate } from './github-openapi';

export interface SchemaException {
  name: string;
  /** The description's templates (`/repos/{owner}/{repo}/import`) the exception applies to. */
  templates: readonly string[];
  /** The validation error it forgives (as `checkGithubAnswer` words it). */
  error: RegExp;
  /** Only for requests like this (e.g. a query the seed defines), when given. */
  when?: (path: string) => boolean;
  reason: string;
}

const IMPORT_ROUTES = ['/repos/{owner}/{repo}/import', '/repos/{owner}/{repo}/import/lfs'];

export const GITHUB_SCHEMA_EXCEPTIONS: readonly SchemaException[] = [
  {
    name: 'import.use_lfs is a string',
    templates: IMPORT_ROUTES,
    error: /^\/use_lfs must be boolean\b/,
    reason: 'spec 002 gives use_lfs as a string (opt_in, opt_out, undecided); the description types it boolean',
  },
  {
    name: 'import.large_files_size is fractional gigabytes',
    templates: IMPORT_ROUTES,
    error: /^\/large_files_size must be integer\b/,
    reason: 'spec 002: "number — total size, in gigabytes, of files larger than 100 MB"; the description types it integer',
  },
  {
    name: 'migration without repositories when excluded',
    templates: ['/orgs/{org}/migrations', '/orgs/{org}/migrations/{migration_id}'],
    error: /^\/(\d+)? must have required property 'repositories'$/,
    when: (path) => /[?&]exclude(%5B%5D|\[\])?=repositories\b/.test(path),
    reason: 'spec 002: `exclude` omits related items from the answer (longhaul polls with exclude=repositories); the description marks repositories required',
  },
];

/** A route the emulator serves that the description has no path for, checked as the documented route it stands for. */
export interface UndescribedRoute {
  /** `METHOD template`, as the ledger records it. */
  route: string;
  method: string;
  path: RegExp;
  /** The description's template whose schemas its answers must meet. */
  checkedAs: string;
  reason: string;
}

export const UNDESCRIBED_ROUTES: readonly UndescribedRoute[] = [
  {
    route: 'GET /repositories/{repository_id}',
    method: 'GET',
    path: /^\/repositories\/[^/]+$/,
    checkedAs: '/repos/{owner}/{repo}',
    reason: "where GitHub's 301 for a renamed repository leads (api.github.com answers `Location: …/repositories/{id}`); the description documents the 301, not this path, so its answers are checked as GET /repos/{owner}/{repo}'s",
  },
];

export interface CheckedAnswer {
  /** `METHOD template` the answer is recorded under (an undescribed route's own name). */
  route: string;
  template: string;
  status: number;
  /** The description documents this status for the route (otherwise the body is checked against its generic error schema). */
  documented: boolean;
  /** Errors no exception forgives (empty when the body conforms). */
  errors: string[];
  /** Names of the exceptions this body needed. */
  excepted: string[];
}

/** Checks one answer: the route's schema for a documented status; `validation-error` / `basic-error` for an undocumented error status. */
export function checkAnswer(method: string, path: string, status: number, body: unknown): CheckedAnswer {
  const undescribed = UNDESCRIBED_ROUTES.find((r) => r.method === method.toUpperCase() && r.path.test(path.split('?')[0]));
  const template = undescribed?.checkedAs ?? findTemplate(method, path);
  if (!template) throw new Error(`GitHub's OpenAPI description has no route for ${method} ${path}`);
  const route = undescribed?.route ?? `${method.toUpperCase()} ${template}`;
  const documented = documentsStatus(method, template, status);
  if (!documented) {
    if (status < 400) throw new Error(`${method} ${template} answered ${status}, which the description does not document`);
    const generic = checkGithubSchema(status === 422 ? 'validation-error' : 'basic-error', body);
    return { route, template, status, documented, errors: generic.errors, excepted: [] };
  }
  const check = checkGithubAnswer(method, template, status, body);
  const excepted = new Set<string>();
  const errors = check.errors.filter((error) => {
    const exception = GITHUB_SCHEMA_EXCEPTIONS.find((x) => x.templates.includes(template) && x.error.test(error) && (x.when?.(path) ?? true));
    if (exception) excepted.add(exception.name);
    return !exception;
  });
  return { route, template, status, documented, errors, excepted: [...excepted] };
}

/** Route × status coverage and exceptions used across a test file. */
export class SchemaLedger {
  private readonly seen = new Map<string, { template: string; method: string; statuses: Set<string> }>();
  readonly exceptionsUsed = new Set<string>();

  /** Checks and records one answer; returns the errors no exception forgives. */
  check(method: string, path: string, status: number, body: unknown): string[] {
    const result = checkAnswer(method, path, status, body);
    const key = result.route;
    const row = this.seen.get(key) ?? { template: key.slice(key.indexOf(' ') + 1), method: method.toUpperCase(), statuses: new Set<string>() };
    row.statuses.add(result.documented ? String(status) : `${status}*`);
    this.seen.set(key, row);
    for (const name of result.excepted) this.exceptionsUsed.add(name);
    return result.errors;
  }

  /** `METHOD template → statuses` for every route checked. */
  covered(): Map<string, string[]> {
    return new Map([...this.seen].map(([key, row]) => [key, [...row.statuses].sort()]));
  }

  /** A compact table of routes × statuses and the exceptions used, for the test's output. */
  table(title: string): string {
    const rows = [...this.seen.values()].sort((a, b) => a.template.localeCompare(b.template) || a.method.localeCompare(b.method));
    const width = Math.max(...rows.map((r) => r.method.length + 1 + r.template.length));
    const lines = rows.map((r) => `  ${`${r.method} ${r.template}`.padEnd(width)}  ${[...r.statuses].sort().join(' ')}`);
    const exceptions = GITHUB_SCHEMA_EXCEPTIONS.filter((x) => this.exceptionsUsed.has(x.name)).map((x) => `  - ${x.name}: ${x.reason}`);
    return [
      `${title}: ${rows.length} routes, ${rows.reduce((n, r) => n + r.statuses.size, 0)} route × status pairs (* = status the description does not list for the route; checked against its generic error schema)`,
      ...lines,
      `exceptions named (seed over description): ${exceptions.length === 0 ? 'none' : ''}`,
      ...exceptions,
    ].join('\n');
  }
}
