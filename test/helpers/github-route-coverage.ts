/**
 * Which GitHub route × status pairs the emulator's schema tests promise to check against `@octokit/openapi`, and
 * the few statuses the description lists that the emulator does not serve, each with its reason.
 *
 * Each schema test file asserts that it checked exactly its promised part (`emulator-github-schemas.test.ts`:
 * accounts, migrations, source imports; `emulator-feed-hook-schemas.test.ts`: feeds and hooks);
 * `emulator-github-route-table.test.ts` asserts that, for every route the emulator serves, every status the
 * description lists is promised or named below. A status marked `*` is one the description does not list for
 * the route (checked against its generic error schema).
 */

/** Accounts, migrations and source imports (`emulator-github-schemas.test.ts`). */
export const PROMISED_CORE: Record<string, string[]> = {
  'POST /orgs/{org}/migrations': ['201', '404', '422'],
  'GET /orgs/{org}/migrations': ['200', '401*', '403*', '429*'],
  'GET /orgs/{org}/migrations/{migration_id}': ['200', '404'],
  'GET /orgs/{org}/migrations/{migration_id}/repositories': ['200', '404'],
  'GET /orgs/{org}/migrations/{migration_id}/archive': ['302', '404'],
  'DELETE /orgs/{org}/migrations/{migration_id}/archive': ['204', '404'],
  'DELETE /orgs/{org}/migrations/{migration_id}/repos/{repo_name}/lock': ['204', '404'],
  'PUT /repos/{owner}/{repo}/import': ['201', '404', '422', '503'],
  'GET /repos/{owner}/{repo}/import': ['200', '403*', '404', '503'],
  'PATCH /repos/{owner}/{repo}/import': ['200', '404*', '422*', '503'],
  'DELETE /repos/{owner}/{repo}/import': ['204', '404*', '503'],
  'GET /repos/{owner}/{repo}/import/authors': ['200', '404', '503'],
  'PATCH /repos/{owner}/{repo}/import/authors/{author_id}': ['200', '404', '422', '503'],
  'GET /repos/{owner}/{repo}/import/large_files': ['200', '404*', '503'],
  'PATCH /repos/{owner}/{repo}/import/lfs': ['200', '404*', '422', '503'],
  'GET /user': ['200', '304', '401', '403'],
  'GET /users/{username}': ['200', '404'],
  'GET /orgs/{org}': ['200', '404'],
  'GET /orgs/{org}/repos': ['200', '404*', '422*'],
  'GET /repos/{owner}/{repo}': ['200', '301', '403', '404'],
  'GET /repositories/{repository_id}': ['200', '403', '404'],
  'GET /rate_limit': ['200', '304', '404'],
};

/** One scope's webhook routes (`/orgs/{org}/hooks`, `/repos/{owner}/{repo}/hooks`): a repository's also has tests, and a blocked repository's 403. */
function hookRoutes(base: string, repository: boolean): Record<string, string[]> {
  return {
    [`GET ${base}`]: ['200', '404'],
    [`POST ${base}`]: repository ? ['201', '403', '404', '422'] : ['201', '404', '422'],
    [`GET ${base}/{hook_id}`]: ['200', '404'],
    [`PATCH ${base}/{hook_id}`]: ['200', '404', '422'],
    [`DELETE ${base}/{hook_id}`]: ['204', '404'],
    [`GET ${base}/{hook_id}/config`]: ['200'],
    [`PATCH ${base}/{hook_id}/config`]: ['200'],
    [`GET ${base}/{hook_id}/deliveries`]: ['200', '400', '422'],
    [`GET ${base}/{hook_id}/deliveries/{delivery_id}`]: ['200', '404*'],
    [`POST ${base}/{hook_id}/deliveries/{delivery_id}/attempts`]: ['202', '422'],
    [`POST ${base}/{hook_id}/pings`]: ['204', '404'],
    ...(repository ? { [`POST ${base}/{hook_id}/tests`]: ['204', '404'] } : {}),
  };
}

/** Feeds and webhooks (`emulator-feed-hook-schemas.test.ts`). */
export const PROMISED_FEEDS_HOOKS: Record<string, string[]> = {
  'GET /events': ['200', '304', '403', '503'],
  'GET /networks/{owner}/{repo}/events': ['200', '301', '304', '403', '404'],
  'GET /orgs/{org}/events': ['200', '304*', '404*'],
  'GET /repos/{owner}/{repo}/events': ['200', '304*', '404*'],
  'GET /users/{username}/events': ['200', '304*', '404*'],
  'GET /users/{username}/events/orgs/{org}': ['200', '304*'],
  'GET /users/{username}/events/public': ['200', '304*'],
  'GET /users/{username}/received_events': ['200', '304*'],
  'GET /users/{username}/received_events/public': ['200', '304*'],
  ...hookRoutes('/orgs/{org}/hooks', false),
  ...hookRoutes('/repos/{owner}/{repo}/hooks', true),
};

export interface UnservedStatus {
  /** `METHOD template`. */
  route: string;
  status: string;
  reason: string;
}

const DELIVERY_ERRORS =
  "the description attaches its shared 400 (bad_request) and 422 (validation_failed) answers to every webhook-delivery route; GitHub documents no condition that sends them for one delivery or a redelivery request (an unknown or malformed delivery id is a 404, as the emulator answers). The conditions it has on the list — an invalid cursor (400) and per_page out of range (422) — are served there, and a spammed redelivery is the 422 served on attempts";

/** Statuses the description lists for a served route that the emulator does not answer, with the reason. */
export const UNSERVED_STATUSES: readonly UnservedStatus[] = ['/orgs/{org}/hooks', '/repos/{owner}/{repo}/hooks'].flatMap((base) => [
  { route: `GET ${base}/{hook_id}/deliveries/{delivery_id}`, status: '400', reason: DELIVERY_ERRORS },
  { route: `GET ${base}/{hook_id}/deliveries/{delivery_id}`, status: '422', reason: DELIVERY_ERRORS },
  { route: `POST ${base}/{hook_id}/deliveries/{delivery_id}/attempts`, status: '400', reason: DELIVERY_ERRORS },
]);
