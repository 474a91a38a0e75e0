/**
 * The GitHub REST service every GitHub module mounts under: the root prefix, GitHub-style errors and the
 * emulator's rate limits; and what the modules share, the fixture (accounts and repositories).
 */
import type { EmulatorContext, ServiceSpec } from '../module';
import { defaultGithubFixture, type GithubFixture } from './fixture';
import { requestedApiVersion, unsupportedApiVersion, type ApiVersion } from './api-version';

/** `per_page` outside 1..100 is a 422 on every GitHub list endpoint, before the handler runs. */
function checkPerPage(query: URLSearchParams): string | undefined {
  const perPage = query.get('per_page');
  if (perPage === null || (/^\d+$/.test(perPage) && Number(perPage) >= 1 && Number(perPage) <= 100)) return undefined;
  return `Invalid request.\n\nper_page must be an integer between 1 and 100, got ${JSON.stringify(perPage)}.`;
}

export const githubService: ServiceSpec = { name: 'github', prefix: '', errorStyle: 'github', rateLimited: true, checkQuery: checkPerPage, checkHeaders: unsupportedApiVersion };

/** The REST API version a routed request asks for (an unknown one was answered 400 before its route). */
export const apiVersionOf = (rc: { headers: Record<string, string | undefined> }): ApiVersion => requestedApiVersion(rc.headers) ?? '2022-11-28';

/** Emulator options the GitHub family reads as a whole rather than one module. */
export interface GithubFamilyOptions {
  /** Accounts and repositories every GitHub module serves (default: `defaultGithubFixture()`). */
  fixture?: GithubFixture;
}

/** The fixture this emulator's GitHub modules share (one object: a repository added by a test is seen by all). */
export function githubFixture(ctx: EmulatorContext): GithubFixture {
  return ctx.shared('github.fixture', () => (ctx.options as GithubFamilyOptions).fixture ?? defaultGithubFixture());
}

/** The `shared` key of the login every accepted token authenticates as (`feeds.authenticatedUser`; default `octocat`). */
export const AUTHENTICATED_USER = 'github.authenticatedUser';
