/**
 * The documented starting state of the emulated code-hosting service, used by the README's examples:
 * organization `octo-org` with repositories `alpha`, `beta`, `gamma`.
 */
export interface Account {
  id: number;
  login: string;
  type: 'Organization' | 'User';
}

export interface Repository {
  id: number;
  name: string;
  owner: string;
  private: boolean;
  /** Whether automated workflows are enabled (starting an import into such a repository is a 422). */
  workflowsEnabled: boolean;
  /**
   * GitHub blocked access to the repository (a terms-of-service takedown: `reason` `tos`, `sensitive_data`…):
   * every route under `/repos/{owner}/{repo}` answers 403 "Repository access blocked" with the block, as GitHub does.
   */
  blocked?: { reason: string; createdAt: string };
  /** `internal` (visible to the enterprise's members; GitHub lists it under `type=private`); default from `private`. */
  visibility?: 'public' | 'private' | 'internal';
  /** A fork of another repository (`type=forks`; `type=sources` leaves it out). */
  fork?: boolean;
  archived?: boolean;
  /** @format kilobytes — what GitHub reports as `size` (default: derived from the id). */
  size?: number;
}

/**
 * What GitHub keeps after a rename or transfer: the old `owner/name` leads to the repository `repositoryId` (the
 * routes whose description documents it answer 301 there), until a repository takes the old name again.
 */
export interface RepositoryRename {
  owner: string;
  name: string;
  repositoryId: number;
}

export interface GithubFixture {
  accounts: Account[];
  repositories: Repository[];
  /** Former names of repositories (default: `octo-org/alpha-legacy` was renamed `alpha`). */
  renames?: RepositoryRename[];
}

/**
 * An organization of many repositories, generated (issue 38): `repositories` of them named `repo-00001`… with ids
 * from `firstId`, and, by the position, every 7th private, every 11th internal, every 13th a fork and every 17th
 * archived, sizes spread over 1 KB..50 MB, so listings, filters and planners meet each kind. Cheap: nothing but
 * the fixture's entries is made.
 */
export interface GeneratedOrganization {
  repositories: number;
  /** The first repository id (default: after the fixture's highest). */
  firstId?: number;
  /** The account id (default: after the fixture's highest account id). */
  id?: number;
}

/** `fixture` with the organizations `organizations` names added, each with its generated repositories. */
export function withGeneratedOrganizations(given: GithubFixture, organizations: Readonly<Record<string, GeneratedOrganization>>): GithubFixture {
  // A copy: a test's fixture object is not changed under it.
  const fixture: GithubFixture = { ...given, accounts: [...given.accounts], repositories: [...given.repositories] };
  for (const [login, spec] of Object.entries(organizations)) {
    if (!Number.isInteger(spec.repositories) || spec.repositories < 0) throw new Error(`organizations.${login}.repositories must be a whole number (got ${spec.repositories})`);
    const accountId = spec.id ?? Math.max(0, ...fixture.accounts.map((a) => a.id)) + 1;
    fixture.accounts.push({ id: accountId, login, type: 'Organization' });
    let id = spec.firstId ?? Math.max(0, ...fixture.repositories.map((r) => r.id)) + 1;
    for (let i = 1; i <= spec.repositories; i++, id++) {
      const internal = i % 11 === 0;
      fixture.repositories.push({
        id,
        name: `repo-${String(i).padStart(5, '0')}`,
        owner: login,
        private: internal || i % 7 === 0,
        ...(internal ? { visibility: 'internal' as const } : {}),
        ...(i % 13 === 0 ? { fork: true } : {}),
        ...(i % 17 === 0 ? { archived: true } : {}),
        // Skewed like real organizations: most small, a few large (KB, as GitHub reports them).
        size: i % 97 === 0 ? 50_000 : i % 10 === 0 ? 5_000 : 1 + ((i * 7919) % 900),
        workflowsEnabled: false,
      });
    }
  }
  return fixture;
}

export function defaultGithubFixture(): GithubFixture {
  return {
    accounts: [
      { id: 1001, login: 'octo-org', type: 'Organization' },
      { id: 1, login: 'octocat', type: 'User' },
    ],
    repositories: [
      { id: 2001, name: 'alpha', owner: 'octo-org', private: false, workflowsEnabled: false },
      { id: 2002, name: 'beta', owner: 'octo-org', private: true, workflowsEnabled: false },
      { id: 2003, name: 'gamma', owner: 'octo-org', private: false, workflowsEnabled: false },
      { id: 2004, name: 'hello-world', owner: 'octocat', private: false, workflowsEnabled: false },
      { id: 2005, name: 'with-actions', owner: 'octo-org', private: false, workflowsEnabled: true },
    ],
    renames: [{ owner: 'octo-org', name: 'alpha-legacy', repositoryId: 2001 }],
  };
}

/** The user/organization object shape GitHub embeds in resources (`simple-user`: an organization's URLs are under `/users/` too). */
export function accountObject(baseUrl: string, account: Account): Record<string, unknown> {
  const url = `${baseUrl}/users/${account.login}`;
  return {
    login: account.login,
    id: account.id,
    node_id: Buffer.from(`04:${account.type}${account.id}`).toString('base64'),
    url,
    repos_url: `${url}/repos`,
    events_url: `${url}/events`,
    avatar_url: `https://avatars.example.test/u/${account.id}`,
    gravatar_id: '',
    html_url: `https://github.example.test/${account.login}`,
    followers_url: `${baseUrl}/users/${account.login}/followers`,
    following_url: `${baseUrl}/users/${account.login}/following{/other_user}`,
    gists_url: `${baseUrl}/users/${account.login}/gists{/gist_id}`,
    starred_url: `${baseUrl}/users/${account.login}/starred{/owner}{/repo}`,
    subscriptions_url: `${baseUrl}/users/${account.login}/subscriptions`,
    organizations_url: `${baseUrl}/users/${account.login}/orgs`,
    received_events_url: `${baseUrl}/users/${account.login}/received_events`,
    type: account.type,
    site_admin: false,
  };
}
