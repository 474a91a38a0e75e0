/**
 * GitHub's REST API versions, as the emulator serves them: by the request's `X-GitHub-Api-Version` header, 2022-11-28
 * when it is absent, a 400 for a version GitHub does not serve. What 2026-03-10 changes on the routes served here is
 * taken from the published description: `@octokit/openapi` 23.0.2 (GitHub's description for api.github.com) carries
 * each 2026-03-10 breaking change as an `x-github-breaking-changes` patch on the schema or operation it changes, and
 * GitHub's "Breaking changes" page (rest-api-description's descriptions/api.github.com/CHANGELOG.md) lists the same
 * changesets with their endpoints. docs/emulator.md ("REST API versions") has the table.
 */
export const API_VERSIONS = ['2022-11-28', '2026-03-10'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
/** What GitHub serves when the header is absent. */
export const DEFAULT_API_VERSION: ApiVersion = '2022-11-28';

/** The version a request asks for; `undefined` for one GitHub does not serve (answered 400 before any route). */
export function requestedApiVersion(headers: Record<string, string | string[] | undefined>): ApiVersion | undefined {
  const raw = headers['x-github-api-version'];
  if (raw === undefined) return DEFAULT_API_VERSION;
  const value = (Array.isArray(raw) ? raw.join(',') : raw).trim();
  return API_VERSIONS.find((v) => v === value);
}

/**
 * GitHub's answer to an unknown version: 400, its message naming the header, the value and the versions it serves,
 * newest first. The wording is GitHub's as reported for 2022-11-28 alone (a client's issue quoting the answer to
 * "v3"); with two versions the list is assumed to read the same way, newest first.
 */
export function unsupportedApiVersion(headers: Record<string, string | string[] | undefined>): { message: string; extra: Record<string, unknown> } | undefined {
  if (requestedApiVersion(headers) !== undefined) return undefined;
  const raw = headers['x-github-api-version'];
  const value = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
  const supported = [...API_VERSIONS].reverse().map((v, i) => `"${v}"${i === 0 ? ' (most recent)' : ''}`).join(', ');
  return {
    message: `The version you specified in the "X-GitHub-Api-Version" request header, ${JSON.stringify(value)}, is not a supported version. The following versions are currently supported: ${supported}.`,
    extra: { documentation_url: 'https://docs.github.com/rest/about-the-rest-api/api-versions' },
  };
}

/**
 * The response fields 2026-03-10 removes from the schemas the emulator serves, by schema name: each entry is a
 * changeset of the description's `x-github-breaking-changes` (version 2026-03-10) on that schema.
 */
const REMOVED_IN_2026_03_10: Record<string, readonly string[]> = {
  // remove_rate_limit_rate
  'rate-limit-overview': ['rate'],
  // remove_has_downloads, remove_use_squash_pr_title_as_default
  'full-repository': ['has_downloads', 'use_squash_pr_title_as_default'],
  // remove_has_downloads, remove_use_squash_pr_title_as_default, deprecate_beta_media_type (`master_branch`)
  repository: ['has_downloads', 'use_squash_pr_title_as_default', 'master_branch'],
  'minimal-repository': ['has_downloads', 'use_squash_pr_title_as_default'],
  // remove_secret_scanning_custom_link_enablement_field
  'organization-full': ['secret_scanning_push_protection_custom_link_enabled'],
  // remove_singular_assignee_from_issues_and_pull_requests
  issue: ['assignee'],
  // remove_pull_request_merge_commit_sha, remove_singular_assignee_from_issues_and_pull_requests
  'pull-request': ['merge_commit_sha', 'assignee'],
};

/**
 * The fields of `simple-repository`, which 2026-03-10 gives a migration's `repositories` (changeset
 * restrict_repo_fields_in_migration_resource: `repository` → `simple-repository`, on `POST/GET /orgs/{org}/migrations`,
 * `GET /orgs/{org}/migrations/{id}` and `…/repositories`). `name` and `full_name` stay; the details go.
 */
const SIMPLE_REPOSITORY_FIELDS = [
  'id', 'node_id', 'name', 'full_name', 'owner', 'private', 'html_url', 'description', 'fork', 'url', 'archive_url', 'assignees_url',
  'blobs_url', 'branches_url', 'collaborators_url', 'comments_url', 'commits_url', 'compare_url', 'contents_url', 'contributors_url',
  'deployments_url', 'downloads_url', 'events_url', 'forks_url', 'git_commits_url', 'git_refs_url', 'git_tags_url', 'issue_comment_url',
  'issue_events_url', 'issues_url', 'keys_url', 'labels_url', 'languages_url', 'merges_url', 'milestones_url', 'notifications_url',
  'pulls_url', 'releases_url', 'stargazers_url', 'statuses_url', 'subscribers_url', 'subscription_url', 'tags_url', 'teams_url',
  'trees_url', 'hooks_url',
] as const;

/** `object` (of the description's schema `schema`) as `version` answers it: 2022-11-28 as given, 2026-03-10 without what it removes. */
export function forApiVersion<T extends Record<string, unknown>>(schema: string, object: T, version: ApiVersion): T {
  if (version === '2022-11-28') return object;
  const removed = REMOVED_IN_2026_03_10[schema];
  if (!removed) return object;
  const copy: Record<string, unknown> = { ...object };
  for (const field of removed) delete copy[field];
  return copy as T;
}

/** A repository inside a migration resource: the full `repository` under 2022-11-28, `simple-repository` under 2026-03-10. */
export function migrationRepository(full: Record<string, unknown>, version: ApiVersion): Record<string, unknown> {
  if (version === '2022-11-28') return full;
  return Object.fromEntries(SIMPLE_REPOSITORY_FIELDS.filter((f) => f in full).map((f) => [f, full[f]]));
}
