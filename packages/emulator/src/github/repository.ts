/**
 * The full repository object GitHub embeds in migrations (`repository` in the official description) and
 * lists for a migration's repositories (`minimal-repository`, whose required fields are a subset), built in
 * this one place from the fixture so every route answers the same object for the same repository.
 *
 * Every field the description requires is present (spec 002 lists the same set); values the fixture does not
 * hold (counts, times, merge settings) are fixed and derived from the repository id, so an answer is
 * reproducible and a repository looks the same on every call.
 */
import { accountObject, type GithubFixture, type Repository } from './fixture';

/** The web host of the emulated service (html and clone addresses), distinct from the API origin. */
export const WEB_HOST = 'github.example.test';

/** A fixed instant per repository (creation), minutes apart by id, so times are stable across calls. */
const createdAt = (repo: Repository) => new Date(Date.UTC(2011, 0, 26, 19, 1, 12) + repo.id * 60_000).toISOString();

export function fullRepository(baseUrl: string, fixture: GithubFixture, repo: Repository): Record<string, unknown> {
  const owner = fixture.accounts.find((a) => a.login.toLowerCase() === repo.owner.toLowerCase());
  if (!owner) throw new Error(`fixture repository ${repo.owner}/${repo.name} has no owner account`);
  const fullName = `${owner.login}/${repo.name}`;
  const url = `${baseUrl}/repos/${fullName}`;
  const html = `https://${WEB_HOST}/${fullName}`;
  const created = createdAt(repo);
  return {
    id: repo.id,
    node_id: Buffer.from(`010:Repository${repo.id}`).toString('base64'),
    name: repo.name,
    full_name: fullName,
    owner: accountObject(baseUrl, owner),
    private: repo.private,
    html_url: html,
    description: null,
    fork: repo.fork ?? false,
    url,
    archive_url: `${url}/{archive_format}{/ref}`,
    assignees_url: `${url}/assignees{/user}`,
    blobs_url: `${url}/git/blobs{/sha}`,
    branches_url: `${url}/branches{/branch}`,
    collaborators_url: `${url}/collaborators{/collaborator}`,
    comments_url: `${url}/comments{/number}`,
    commits_url: `${url}/commits{/sha}`,
    compare_url: `${url}/compare/{base}...{head}`,
    contents_url: `${url}/contents/{+path}`,
    contributors_url: `${url}/contributors`,
    deployments_url: `${url}/deployments`,
    downloads_url: `${url}/downloads`,
    events_url: `${url}/events`,
    forks_url: `${url}/forks`,
    git_commits_url: `${url}/git/commits{/sha}`,
    git_refs_url: `${url}/git/refs{/sha}`,
    git_tags_url: `${url}/git/tags{/sha}`,
    git_url: `git://${WEB_HOST}/${fullName}.git`,
    issue_comment_url: `${url}/issues/comments{/number}`,
    issue_events_url: `${url}/issues/events{/number}`,
    issues_url: `${url}/issues{/number}`,
    keys_url: `${url}/keys{/key_id}`,
    labels_url: `${url}/labels{/name}`,
    languages_url: `${url}/languages`,
    merges_url: `${url}/merges`,
    milestones_url: `${url}/milestones{/number}`,
    notifications_url: `${url}/notifications{?since,all,participating}`,
    pulls_url: `${url}/pulls{/number}`,
    releases_url: `${url}/releases{/id}`,
    ssh_url: `git@${WEB_HOST}:${fullName}.git`,
    stargazers_url: `${url}/stargazers`,
    statuses_url: `${url}/statuses/{sha}`,
    subscribers_url: `${url}/subscribers`,
    subscription_url: `${url}/subscription`,
    tags_url: `${url}/tags`,
    teams_url: `${url}/teams`,
    trees_url: `${url}/git/trees{/sha}`,
    clone_url: `${html}.git`,
    mirror_url: null,
    hooks_url: `${url}/hooks`,
    svn_url: html,
    homepage: null,
    language: null,
    forks_count: 0,
    stargazers_count: 0,
    watchers_count: 0,
    size: repo.size ?? 108 + (repo.id % 97),
    default_branch: 'main',
    open_issues_count: 0,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: true,
    has_wiki: true,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: repo.archived ?? false,
    disabled: false,
    visibility: repo.visibility ?? (repo.private ? 'private' : 'public'),
    pushed_at: created,
    created_at: created,
    updated_at: created,
    // The caller is an organization owner (the only one the migration endpoints serve).
    permissions: { admin: true, maintain: true, push: true, triage: true, pull: true },
    allow_rebase_merge: true,
    template_repository: null,
    temp_clone_token: '',
    allow_squash_merge: true,
    allow_auto_merge: false,
    delete_branch_on_merge: false,
    allow_merge_commit: true,
    allow_forking: true,
    web_commit_signoff_required: false,
    subscribers_count: 0,
    network_count: 0,
    license: null,
    forks: 0,
    open_issues: 0,
    watchers: 0,
  };
}
