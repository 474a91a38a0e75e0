/**
 * GitHub's own client (`@octokit/rest`) pointed at an emulator, with every answer of the emulator's API
 * checked against the official description through a `SchemaLedger`: success bodies in `hook.after`, error
 * bodies in `hook.error` (the error is rethrown untouched). An answer from another origin (the storage origin a
 * 302 was followed to) is not a GitHub API answer; it is counted, not validated.
 *
 * `@octokit/rest` is ESM only and this project is CommonJS: the import is dynamic, which vitest resolves.
 */
import type { Octokit } from '@octokit/rest';
import { TEST_TOKEN } from './emulator';
import type { SchemaLedger } from './github-schema-ledger';
import { testGithubApiVersion } from './api-version';
import { useGithubApiVersion } from './github-openapi';

export interface ConformingOctokit {
  octokit: Octokit;
  /** Problems found so far, `METHOD path status: error` (a test asserts it stays empty). */
  problems: string[];
  /** Answers from another origin than the API's (followed redirects). */
  foreignAnswers: string[];
}

/**
 * The client asks for the test file's REST API version (`api-version.ts`), and the ledger checks the answers against
 * that version's description.
 */
export async function conformingOctokit(apiUrl: string, ledger: SchemaLedger): Promise<ConformingOctokit> {
  const { Octokit } = await import('@octokit/rest');
  const version = testGithubApiVersion();
  useGithubApiVersion(version);
  const octokit = new Octokit({ auth: TEST_TOKEN, baseUrl: apiUrl, log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });
  const problems: string[] = [];
  const foreignAnswers: string[] = [];
  const check = (options: Parameters<typeof octokit.request.endpoint.parse>[0], status: number, url: string | undefined, data: unknown) => {
    const { method, url: requested } = octokit.request.endpoint.parse(options);
    if (url && !url.startsWith(apiUrl)) {
      foreignAnswers.push(`${method} ${new URL(requested).pathname} → ${status} from ${new URL(url).origin}`);
      return;
    }
    const target = new URL(requested);
    const path = target.pathname + target.search;
    const body = data === '' || data === undefined ? undefined : data;
    for (const error of ledger.check(method, path, status, body)) problems.push(`${method} ${path} ${status}: ${error}`);
  };
  octokit.hook.before('request', (options) => {
    options.headers['x-github-api-version'] = version;
  });
  octokit.hook.after('request', (response, options) => check(options, response.status, response.url, response.data));
  octokit.hook.error('request', (error, options) => {
    const response = (error as { response?: { status: number; url: string; data: unknown } }).response;
    if (response) check(options, response.status, response.url, response.data);
    throw error;
  });
  return { octokit, problems, foreignAnswers };
}
