/**
 * The endpoints a client calls on its own before the user's first call: who the token belongs to
 * (`GET /user`), a user, an organization, a repository (and where a renamed one's redirect leads), and the
 * rate-limit status. PyGithub's
 * `get_organization(…).create_migration(…)` reads `GET /orgs/{org}` first; most clients check `GET /rate_limit`.
 * Each answers GitHub's documented shape for the fixture's accounts (`@octokit/openapi`: `private-user`,
 * `public-user`, `organization-full`, `full-repository`, `rate-limit-overview`), conditionally like GitHub (an
 * `ETag`, 304 to a matching `If-None-Match`, not counted).
 */
import type { EmulatorContext } from '../module';
import type { Router } from '../router';
import { conditionalJson, NOT_MODIFIED_NOT_COUNTED } from '../conditional';
import { EmulatorHttpError } from '../http-error';
import { accountObject, type Account, type GithubFixture } from './fixture';
import { AUTHENTICATED_USER, apiVersionOf, githubFixture } from './service';
import { forApiVersion } from './api-version';
import { accountOr404, movedPermanently, renamedRepository, repositoryByIdOr404, repositoryOr404 } from './lookup';
import { fullRepository } from './repository';

/** GitHub App installation access tokens start with this (GitHub's token formats); they act for no user. */
export const INSTALLATION_TOKEN_PREFIX = 'ghs_';

export interface AccountOptions {
  /** The search API's limit per minute reported by `GET /rate_limit` (GitHub: 30); the emulator does not serve search. */
  searchLimitPerMinute: number;
}

export const defaultAccountOptions: AccountOptions = { searchLimitPerMinute: 30 };

/** A fixed instant per account (creation), so answers are reproducible. */
const createdAt = (account: Account) => new Date(Date.UTC(2010, 4, 1, 9, 0, 0) + account.id * 86_400_000).toISOString();

function publicRepos(fixture: GithubFixture, account: Account): number {
  return fixture.repositories.filter((r) => !r.private && r.owner.toLowerCase() === account.login.toLowerCase()).length;
}

function privateRepos(fixture: GithubFixture, account: Account): number {
  return fixture.repositories.filter((r) => r.private && r.owner.toLowerCase() === account.login.toLowerCase()).length;
}

/** A user (`public-user`), or with `own` the authenticated user's view of itself (`private-user`). */
function userObject(baseUrl: string, fixture: GithubFixture, account: Account, own: boolean): Record<string, unknown> {
  const created = createdAt(account);
  const common = {
    ...accountObject(baseUrl, account),
    user_view_type: own ? 'private' : 'public',
    name: account.login,
    company: null,
    blog: '',
    location: null,
    email: null,
    hireable: null,
    bio: null,
    twitter_username: null,
    public_repos: publicRepos(fixture, account),
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: created,
    updated_at: created,
  };
  if (!own) return common;
  const owned = privateRepos(fixture, account);
  return {
    ...common,
    notification_email: null,
    private_gists: 0,
    total_private_repos: owned,
    owned_private_repos: owned,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: true,
    plan: { name: 'pro', space: 976_562_499, collaborators: 0, private_repos: 9_999 },
  };
}

function organizationObject(baseUrl: string, fixture: GithubFixture, account: Account): Record<string, unknown> {
  const url = `${baseUrl}/orgs/${account.login}`;
  const created = createdAt(account);
  const owned = privateRepos(fixture, account);
  return {
    login: account.login,
    id: account.id,
    node_id: Buffer.from(`012:Organization${account.id}`).toString('base64'),
    url,
    repos_url: `${url}/repos`,
    events_url: `${url}/events`,
    hooks_url: `${url}/hooks`,
    issues_url: `${url}/issues`,
    members_url: `${url}/members{/member}`,
    public_members_url: `${url}/public_members{/member}`,
    avatar_url: `https://avatars.example.test/u/${account.id}`,
    description: null,
    name: account.login,
    // GitHub's description types company, blog, location and email as strings, not nullable: left out when unset.
    twitter_username: null,
    is_verified: false,
    has_organization_projects: true,
    has_repository_projects: true,
    public_repos: publicRepos(fixture, account),
    public_gists: 0,
    followers: 0,
    following: 0,
    html_url: `https://github.example.test/${account.login}`,
    type: 'Organization',
    total_private_repos: owned,
    owned_private_repos: owned,
    private_gists: 0,
    disk_usage: 0,
    collaborators: 0,
    billing_email: null,
    plan: { name: 'enterprise', space: 976_562_499, private_repos: 999_999, filled_seats: 1, seats: 50 },
    default_repository_permission: 'read',
    members_can_create_repositories: true,
    two_factor_requirement_enabled: true,
    members_allowed_repository_creation_type: 'all',
    members_can_create_public_repositories: true,
    members_can_create_private_repositories: true,
    members_can_create_internal_repositories: false,
    members_can_create_pages: true,
    members_can_create_public_pages: true,
    members_can_create_private_pages: true,
    members_can_fork_private_repositories: false,
    web_commit_signoff_required: false,
    created_at: created,
    updated_at: created,
    archived_at: null,
  };
}

export function registerAccountRoutes(router: Router, ctx: EmulatorContext, options: AccountOptions) {
  const fixture = () => githubFixture(ctx);

  router.get(
    '/user',
    (rc) => {
      // Read per request: the feeds module, registered before or after this one, names the user.
      // A GitHub App installation token (`ghs_…`) acts for no user: GitHub refuses it here.
      if (rc.token?.startsWith(INSTALLATION_TOKEN_PREFIX)) throw new EmulatorHttpError(403, 'Resource not accessible by integration', { documentation_url: 'https://docs.github.com/rest/users/users#get-the-authenticated-user' });
      const login = ctx.shared(AUTHENTICATED_USER, () => 'octocat');
      const me = fixture().accounts.find((a) => a.type === 'User' && a.login.toLowerCase() === login.toLowerCase());
      if (!me) throw new EmulatorHttpError(401, 'Bad credentials');
      return conditionalJson(rc, userObject(ctx.apiUrl(), fixture(), me, true));
    },
    NOT_MODIFIED_NOT_COUNTED,
  );

  // GitHub serves organizations here too (`type: Organization`), as users.
  router.get(
    '/users/:username',
    (rc) => {
      const account = fixture().accounts.find((a) => a.login.toLowerCase() === rc.params.username.toLowerCase());
      if (!account) throw new EmulatorHttpError(404, 'Not Found');
      return conditionalJson(rc, userObject(ctx.apiUrl(), fixture(), account, false));
    },
    NOT_MODIFIED_NOT_COUNTED,
  );

  router.get(
    '/orgs/:org',
    (rc) => conditionalJson(rc, forApiVersion('organization-full', organizationObject(ctx.apiUrl(), fixture(), accountOr404(fixture(), rc.params.org, 'Organization')), apiVersionOf(rc))),
    NOT_MODIFIED_NOT_COUNTED,
  );

  router.get(
    '/repos/:owner/:repo',
    (rc) => {
      // A former name: 301 to the repository's lasting address, as GitHub redirects it (clients follow it there).
      const renamed = renamedRepository(fixture(), rc.params.owner, rc.params.repo);
      if (renamed) throw movedPermanently(`${ctx.apiUrl()}/repositories/${renamed.id}`);
      return conditionalJson(rc, forApiVersion('full-repository', fullRepository(ctx.apiUrl(), fixture(), repositoryOr404(fixture(), rc.params.owner, rc.params.repo)), apiVersionOf(rc)));
    },
    NOT_MODIFIED_NOT_COUNTED,
  );

  // Where a rename's 301 leads. The description has no such path; GitHub serves the repository there.
  router.get(
    '/repositories/:id',
    (rc) => conditionalJson(rc, forApiVersion('full-repository', fullRepository(ctx.apiUrl(), fixture(), repositoryByIdOr404(fixture(), rc.params.id)), apiVersionOf(rc))),
    NOT_MODIFIED_NOT_COUNTED,
  );

  // Never spends the caller's limits and is answered while it is limited (GitHub documents both).
  router.get(
    '/rate_limit',
    (rc) => {
      // GitHub Enterprise Server with rate limiting disabled has no rate-limit status (and sends no x-ratelimit-* headers).
      if (!ctx.rateLimiter.config.enabled) throw new EmulatorHttpError(404, 'Rate limiting is not enabled.');
      const core = ctx.rateLimiter.status(rc.token ?? '', rc.now);
      // The search window is reported whole (the emulator serves no search), resetting at the next full minute.
      const search = { limit: options.searchLimitPerMinute, remaining: options.searchLimitPerMinute, used: 0, reset: Math.ceil(rc.now / 60_000) * 60 };
      return conditionalJson(rc, forApiVersion('rate-limit-overview', { resources: { core, search }, rate: core }, apiVersionOf(rc)));
    },
    { countsAgainstPrimary: () => false, exemptFromLimits: true, points: 0 },
  );

  return { options };
}
