/**
 * Issue 12, schema-exact GitHub: every answer of the emulator's migration and source-import routes, in every
 * status the flows reach, validates against GitHub's official OpenAPI description (`@octokit/openapi`) for that
 * route and status. Where spec 002 and the description disagree the seed wins, and only the exceptions named
 * in `github-schema-ledger.ts` are forgiven. Error statuses the description does not list for a route (rate
 * limits, a maintenance 404 after retirement) are checked against its generic error schemas.
 *
 * The file prints the routes × statuses it covered and the exceptions it needed, and fails when a route or
 * status it promises is missing or an exception is no longer needed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Emulator } from '@longhaul/emulator';
import { call, clockedEmulators, everyImportRoute, type RawResponse } from '../helpers/emulator-http';
import { GITHUB_SCHEMA_EXCEPTIONS, SchemaLedger } from '../helpers/github-schema-ledger';
import { PROMISED_CORE } from '../helpers/github-route-coverage';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const em = clockedEmulators(START);
const ledger = new SchemaLedger();

// detecting 1 s, importing 10 s, mapping 2 s, pushing 4 s.
const TIMING = { detectingMs: 1_000, importingMs: 10_000, mappingMs: 2_000, pushingMs: 4_000 };
const IMPORT = '/repos/octo-org/alpha/import';
const SVN = 'https://svn.example.test/repos';
const MIGRATIONS = '/orgs/octo-org/migrations';

/** One call at emulator time `atMs` (when given), its answer checked against the description and recorded. */
async function hit(e: Emulator, method: string, path: string, expected: number, body?: unknown, atMs?: number): Promise<RawResponse> {
  if (atMs !== undefined) em.now = START + atMs;
  const res = await call(e.apiUrl, method, path, { body });
  expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(expected);
  const answered = res.text === '' ? undefined : (res.json ?? res.text);
  expect(ledger.check(method, path, res.status, answered), `${method} ${path} ${res.status}`).toEqual([]);
  return res;
}

const startImports = (imports: Record<string, unknown> = {}) => em.start({ imports: { ...TIMING, ...imports } });

describe('organization migration answers', () => {
  it('every state of a migration, its repositories (full repository objects) and each error answer', async () => {
    const e = await em.start({ migrations: { exportMs: 10_000, pendingFraction: 0.2, failRepositories: ['gamma'] } });
    const created = await hit(e, 'POST', MIGRATIONS, 201, { repositories: ['alpha', 'beta'], lock_repositories: true, exclude_attachments: true });
    const m = created.json as { id: number; repositories: Record<string, unknown>[]; owner: { login: string } };
    // The objects are the real thing, not a name and an id: the fields the issue found missing are there.
    expect(m.repositories.map((r) => r.full_name)).toEqual(['octo-org/alpha', 'octo-org/beta']);
    expect(m.repositories[0]).toMatchObject({ assignees_url: `${e.apiUrl}/repos/octo-org/alpha/assignees{/user}`, private: false, owner: { login: 'octo-org' } });
    expect(m.owner.login).toBe('octo-org');
    const id = m.id;

    await hit(e, 'POST', '/orgs/no-such-org/migrations', 404, { repositories: ['alpha'] });
    await hit(e, 'POST', MIGRATIONS, 422, { repositories: ['no-such-repo'] });
    await hit(e, 'POST', MIGRATIONS, 422, { repositories: [] });
    await hit(e, 'POST', MIGRATIONS, 422, { repositories: ['beta'], lock_repositories: true });
    await hit(e, 'POST', MIGRATIONS, 201, { repositories: [], org_metadata_only: true });
    const failing = (await hit(e, 'POST', MIGRATIONS, 201, { repositories: ['gamma'] })).json as { id: number };

    expect((await hit(e, 'GET', `${MIGRATIONS}/${id}`, 200, undefined, 0)).json).toMatchObject({ state: 'pending' });
    await hit(e, 'GET', `${MIGRATIONS}/${id}/archive`, 404);
    await hit(e, 'DELETE', `${MIGRATIONS}/${id}/archive`, 404);
    expect((await hit(e, 'GET', `${MIGRATIONS}/${id}`, 200, undefined, 5_000)).json).toMatchObject({ state: 'exporting' });
    expect((await hit(e, 'GET', `${MIGRATIONS}/${id}`, 200, undefined, 10_000)).json).toMatchObject({ state: 'exported', archive_url: `${e.apiUrl}${MIGRATIONS}/${id}/archive` });
    expect((await hit(e, 'GET', `${MIGRATIONS}/${failing.id}`, 200)).json).toMatchObject({ state: 'failed' });
    // longhaul polls without the repositories (spec 002's `exclude`): the one named exception.
    expect((await hit(e, 'GET', `${MIGRATIONS}/${id}?exclude=repositories`, 200)).json).not.toHaveProperty('repositories');
    await hit(e, 'GET', `${MIGRATIONS}/999999`, 404);

    expect(((await hit(e, 'GET', `${MIGRATIONS}?per_page=100`, 200)).json as unknown[]).length).toBe(3);
    await hit(e, 'GET', `${MIGRATIONS}?exclude=repositories`, 200);

    const listed = (await hit(e, 'GET', `${MIGRATIONS}/${id}/repositories`, 200)).json as Record<string, unknown>[];
    expect(listed).toEqual(m.repositories);
    await hit(e, 'GET', `${MIGRATIONS}/999999/repositories`, 404);

    const redirect = await hit(e, 'GET', `${MIGRATIONS}/${id}/archive`, 302);
    expect(redirect.headers.location).toMatch(/^http:\/\//);
    // As GitHub answers it: the URL in Location and as the body (clients that do not follow read it there).
    expect(redirect.text).toBe(redirect.headers.location);
    await hit(e, 'DELETE', `${MIGRATIONS}/${id}/archive`, 204);
    await hit(e, 'DELETE', `${MIGRATIONS}/${id}/archive`, 404);
    await hit(e, 'GET', `${MIGRATIONS}/${id}/archive`, 404);

    await hit(e, 'DELETE', `${MIGRATIONS}/${id}/repos/alpha/lock`, 204);
    await hit(e, 'DELETE', `${MIGRATIONS}/${id}/repos/gamma/lock`, 404);
  });

  it('rate-limit and authentication errors carry GitHub’s error body', async () => {
    const primary = await em.start({ rateLimit: { limit: 1 } });
    await hit(primary, 'GET', MIGRATIONS, 200);
    await hit(primary, 'GET', MIGRATIONS, 403);
    await primary.close();
    const secondary = await em.start({ rateLimit: { secondary: { pointsPerWindow: 1, status: 429 } } });
    await hit(secondary, 'GET', MIGRATIONS, 200);
    await hit(secondary, 'GET', MIGRATIONS, 429);
    const unauthenticated = await call(secondary.apiUrl, 'GET', MIGRATIONS, { token: null });
    expect(unauthenticated.status).toBe(401);
    expect(ledger.check('GET', MIGRATIONS, 401, unauthenticated.json)).toEqual([]);
  });
});

describe('source import answers', () => {
  it('every step of an import, its authors and large files, and each error answer', async () => {
    const e = await startImports();
    await hit(e, 'PUT', IMPORT, 201, { vcs_url: `${SVN}/happy` }, 0);
    const steps: { status: string; push_percent: number | null }[] = [];
    // 14 333 ms is a third of the push: whole percents, as git reports them and the description types them.
    for (const ms of [500, 6_000, 12_000, 13_000 + 4_000 / 3, 17_000]) steps.push((await hit(e, 'GET', IMPORT, 200, undefined, ms)).json as (typeof steps)[number]);
    expect(steps.map((s) => s.status)).toEqual(['detecting', 'importing', 'mapping', 'pushing', 'complete']);
    expect(steps.map((s) => s.push_percent)).toEqual([null, null, null, 33, 100]);

    const authors = (await hit(e, 'GET', `${IMPORT}/authors`, 200)).json as { id: number }[];
    expect(authors.length).toBe(4);
    await hit(e, 'PATCH', `${IMPORT}/authors/${authors[0].id}`, 200, { name: 'Alice Liddell', email: 'alice@example.com' });
    await hit(e, 'PATCH', `${IMPORT}/authors/1`, 404, { name: 'Nobody' });
    await hit(e, 'PATCH', `${IMPORT}/authors/${authors[1].id}`, 422, { email: 'not an address' });
    expect((await hit(e, 'GET', `${IMPORT}/large_files`, 200)).json).toEqual([]);

    await hit(e, 'PUT', IMPORT, 422, { vcs_url: `${SVN}/other` });
    await hit(e, 'PUT', '/repos/octo-org/with-actions/import', 422, { vcs_url: `${SVN}/happy` });
    await hit(e, 'PUT', '/repos/octo-org/beta/import', 422, { vcs_url: 'not a url' });
    await hit(e, 'PUT', '/repos/octo-org/no-such-repo/import', 404, { vcs_url: `${SVN}/happy` });
    await hit(e, 'DELETE', IMPORT, 204);
    await hit(e, 'GET', IMPORT, 404);
    await hit(e, 'GET', `${IMPORT}/authors`, 404);
  });

  it('large files and the LFS choice (use_lfs and large_files_size as spec 002 gives them)', async () => {
    const e = await startImports();
    await hit(e, 'PUT', IMPORT, 201, { vcs_url: `${SVN}/large-files` }, 0);
    const found = (await hit(e, 'GET', IMPORT, 200, undefined, 12_000)).json as Record<string, unknown>;
    expect(found).toMatchObject({ status: 'mapping', has_large_files: true, large_files_count: 2, use_lfs: 'undecided' });
    expect(Number.isInteger(found.large_files_size)).toBe(false);
    expect(((await hit(e, 'GET', `${IMPORT}/large_files`, 200)).json as unknown[]).length).toBe(2);
    await hit(e, 'PATCH', `${IMPORT}/lfs`, 422, { use_lfs: 'maybe' }, 13_000);
    expect((await hit(e, 'PATCH', `${IMPORT}/lfs`, 200, { use_lfs: 'opt_in' })).json).toMatchObject({ status: 'pushing', use_lfs: 'opt_in' });
    expect((await hit(e, 'GET', IMPORT, 200, undefined, 15_000)).json).toMatchObject({ status: 'pushing', push_percent: 50 });
  });

  it('the blocking states and the updates that resolve them', async () => {
    const e = await startImports();
    const statusOf = (res: RawResponse) => (res.json as { status: string }).status;

    await hit(e, 'PUT', IMPORT, 201, { vcs_url: `${SVN}/needs-auth` }, 0);
    expect(statusOf(await hit(e, 'GET', IMPORT, 200, undefined, 1_000))).toBe('detection_needs_auth');
    expect(statusOf(await hit(e, 'PATCH', IMPORT, 200, { vcs_username: 'svn-user', vcs_password: 'secret' }))).toBe('detecting');
    await hit(e, 'DELETE', IMPORT, 204);

    await hit(e, 'PUT', IMPORT, 201, { vcs_url: `${SVN}/needs-auth`, vcs: 'subversion' }, 0);
    expect(statusOf(await hit(e, 'GET', IMPORT, 200, undefined, 1_000))).toBe('auth_failed');
    await hit(e, 'DELETE', IMPORT, 204);

    await hit(e, 'PUT', IMPORT, 201, { vcs_url: `${SVN}/multiple-projects` }, 0);
    const multiple = (await hit(e, 'GET', IMPORT, 200, undefined, 1_000)).json as { status: string; project_choices: unknown[] };
    expect(multiple.status).toBe('detection_found_multiple');
    expect(multiple.project_choices.length).toBeGreaterThan(1);
    await hit(e, 'PATCH', IMPORT, 422, { vcs: 'tfvc' });
    expect(statusOf(await hit(e, 'PATCH', IMPORT, 200, { vcs: 'tfvc', tfvc_project: 'Fabrikam' }))).toBe('importing');
    await hit(e, 'DELETE', IMPORT, 204);

    await hit(e, 'PUT', IMPORT, 201, { vcs_url: `${SVN}/nothing-found` }, 0);
    expect(statusOf(await hit(e, 'GET', IMPORT, 200, undefined, 1_000))).toBe('detection_found_nothing');
    await hit(e, 'DELETE', IMPORT, 204);

    await hit(e, 'PUT', IMPORT, 201, { vcs_url: `${SVN}/error-importing` }, 0);
    expect((await hit(e, 'GET', IMPORT, 200, undefined, 7_000)).json).toMatchObject({ status: 'error', failed_step: 'importing' });
    expect(statusOf(await hit(e, 'PATCH', IMPORT, 200, {}))).toBe('importing');
  });

  it('maintenance 503s and the retired API’s 404s on every import route', async () => {
    const routes = everyImportRoute(IMPORT, `${SVN}/happy`);
    const e = await startImports();
    e.imports.startMaintenance(60_000);
    for (const [method, path, body] of routes) await hit(e, method, path, 503, body);
    await e.close();
    const retired = await startImports({ retired: true });
    for (const [method, path, body] of routes) await hit(retired, method, path, 404, body);
  });
});

describe('what clients call on their own', () => {
  it('the authenticated user, users, organizations and repositories, conditionally, and 404 for unknown ones', async () => {
    const e = await em.start();
    const me = (await hit(e, 'GET', '/user', 200)).json as { login: string; user_view_type: string };
    expect(me).toMatchObject({ login: 'octocat', user_view_type: 'private' });
    const etag = (await call(e.apiUrl, 'GET', '/user')).headers.etag;
    const unchanged = await call(e.apiUrl, 'GET', '/user', { headers: { 'if-none-match': etag } });
    expect(unchanged.status).toBe(304);
    expect(ledger.check('GET', '/user', 304, undefined)).toEqual([]);
    const unauthenticated = await call(e.apiUrl, 'GET', '/user', { token: null });
    expect(unauthenticated.status).toBe(401);
    expect(ledger.check('GET', '/user', 401, unauthenticated.json)).toEqual([]);

    expect((await hit(e, 'GET', '/users/octocat', 200)).json).toMatchObject({ login: 'octocat', type: 'User', public_repos: 1 });
    expect((await hit(e, 'GET', '/users/OCTO-ORG', 200)).json).toMatchObject({ login: 'octo-org', type: 'Organization' });
    await hit(e, 'GET', '/users/nobody-here', 404);

    expect((await hit(e, 'GET', '/orgs/octo-org', 200)).json).toMatchObject({ login: 'octo-org', public_repos: 3, total_private_repos: 1 });
    await hit(e, 'GET', '/orgs/octocat', 404);
    await hit(e, 'GET', '/orgs/no-such-org', 404);

    // The same object a migration embeds for the repository.
    const repo = (await hit(e, 'GET', '/repos/octo-org/beta', 200)).json as Record<string, unknown>;
    const created = (await hit(e, 'POST', MIGRATIONS, 201, { repositories: ['beta'] })).json as { repositories: unknown[] };
    expect(created.repositories[0]).toEqual(repo);
    await hit(e, 'GET', '/repos/octo-org/no-such-repo', 404);
    // An embedded owner's url is under /users/ for an organization too, as GitHub's are, and leads somewhere.
    const ownerUrl = (repo.owner as { url: string }).url;
    expect(ownerUrl).toBe(`${e.apiUrl}/users/octo-org`);
    expect((await hit(e, 'GET', new URL(ownerUrl).pathname, 200)).json).toMatchObject({ login: 'octo-org', type: 'Organization' });
  });

  it("an organization's repositories, every page with its Link, by type, for a generated organization of thousands", async () => {
    const e = await em.start({ organizations: { 'big-org': { repositories: 1_234 } } });
    const names: string[] = [];
    let path: string | undefined = '/orgs/big-org/repos?type=all&per_page=100&sort=full_name';
    let pages = 0;
    while (path) {
      const res = await hit(e, 'GET', path, 200);
      pages++;
      const items = res.json as { name: string; full_name: string; id: number; private: boolean; visibility: string; fork: boolean; archived: boolean; size: number; default_branch: string }[];
      for (const r of items) {
        expect(r.full_name).toBe(`big-org/${r.name}`);
        expect(typeof r.size).toBe('number');
        expect(r.default_branch).toBe('main');
      }
      names.push(...items.map((r) => r.name));
      const next = /<([^>]+)>; rel="next"/.exec(res.headers.link ?? '');
      if (pages === 1) expect(res.headers.link).toMatch(/[?&]page=13[^>]*>; rel="last"/);
      path = next ? new URL(next[1]).pathname + new URL(next[1]).search : undefined;
    }
    expect(pages).toBe(13);
    expect(names).toHaveLength(1_234);
    expect(new Set(names).size).toBe(1_234);
    expect(names[0]).toBe('repo-00001');
    const page = async (query: string) => (await hit(e, 'GET', `/orgs/big-org/repos?per_page=100&${query}`, 200)).json as { name: string; private: boolean; visibility: string; fork: boolean }[];
    expect((await page('type=forks')).every((r) => r.fork)).toBe(true);
    expect((await page('type=sources')).some((r) => r.fork)).toBe(false);
    const priv = await page('type=private');
    expect(priv.every((r) => r.private)).toBe(true);
    expect(priv.some((r) => r.visibility === 'internal')).toBe(true);
    expect((await page('type=public')).some((r) => r.private)).toBe(false);
    // Default sort: created, newest first.
    expect((await page('page=1'))[0].name).toBe('repo-01234');
    expect((await hit(e, 'GET', '/orgs/octo-org/repos', 200)).json).toHaveLength(4);
    await hit(e, 'GET', '/orgs/no-such-org/repos', 404);
    await hit(e, 'GET', '/orgs/big-org/repos?type=everything', 422);
  });

  it('a renamed repository answers 301 to its lasting address, which serves it; a former name taken again is the new repository', async () => {
    const e = await em.start();
    const moved = await hit(e, 'GET', '/repos/octo-org/alpha-legacy', 301);
    // As api.github.com answers it: Location and the body's url name /repositories/{id}.
    expect(moved.headers.location).toBe(`${e.apiUrl}/repositories/2001`);
    expect(moved.json).toMatchObject({ message: 'Moved Permanently', url: moved.headers.location });
    const current = (await hit(e, 'GET', new URL(moved.headers.location).pathname, 200)).json as Record<string, unknown>;
    expect(current).toEqual((await hit(e, 'GET', '/repos/octo-org/alpha', 200)).json);
    expect(current.full_name).toBe('octo-org/alpha');
    await hit(e, 'GET', '/repositories/999999', 404);
    // Only the routes whose description documents the 301 redirect; the others answer for a name that does not exist.
    await hit(e, 'GET', '/repos/octo-org/alpha-legacy/import', 404);
    await hit(e, 'POST', MIGRATIONS, 422, { repositories: ['alpha-legacy'] });
    await e.close();

    const fixture = defaultGithubFixture();
    fixture.repositories.push({ id: 2077, name: 'alpha-legacy', owner: 'octo-org', private: false, workflowsEnabled: false });
    const reused = await em.start({ fixture });
    expect((await hit(reused, 'GET', '/repos/octo-org/alpha-legacy', 200)).json).toMatchObject({ id: 2077 });
  });

  it('a blocked repository answers 403 with its block, on every route under it', async () => {
    const fixture = defaultGithubFixture();
    fixture.repositories.push({ id: 2066, name: 'taken-down', owner: 'octo-org', private: false, workflowsEnabled: false, blocked: { reason: 'tos', createdAt: '2025-06-08T01:02:15Z' } });
    const e = await em.start({ fixture });
    const blocked = await hit(e, 'GET', '/repos/octo-org/taken-down', 403);
    expect(blocked.json).toMatchObject({ message: 'Repository access blocked', block: { reason: 'tos', created_at: '2025-06-08T01:02:15Z', html_url: 'https://github.com/tos' } });
    await hit(e, 'GET', '/repositories/2066', 403);
    await hit(e, 'GET', '/repos/octo-org/taken-down/import', 403);
  });

  it('an installation token (ghs_…) is refused GET /user, as GitHub refuses an app acting for no user', async () => {
    const e = await em.start({ token: undefined });
    const refused = await call(e.apiUrl, 'GET', '/user', { token: 'ghs_16C7e42F292c6912E7710c838347Ae178B4a' });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ message: 'Resource not accessible by integration' });
    expect(ledger.check('GET', '/user', 403, refused.json)).toEqual([]);
    // The same token reads what an installation may.
    expect((await call(e.apiUrl, 'GET', '/repos/octo-org/alpha', { token: 'ghs_16C7e42F292c6912E7710c838347Ae178B4a' })).status).toBe(200);
  });

  it('with rate limiting disabled (an Enterprise Server setting) GET /rate_limit is 404 and no answer carries x-ratelimit headers', async () => {
    const e = await em.start({ rateLimit: { enabled: false, limit: 1 } });
    const absent = await hit(e, 'GET', '/rate_limit', 404);
    expect(absent.json).toMatchObject({ message: 'Rate limiting is not enabled.' });
    for (let i = 0; i < 3; i++) {
      const res = await hit(e, 'GET', MIGRATIONS, 200);
      expect(Object.keys(res.headers).filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
    }
  });

  it('GET /user is the user the feeds treat as the caller (feeds.authenticatedUser)', async () => {
    const e = await em.start({ fixture: { accounts: [{ id: 7, login: 'hubot', type: 'User' }], repositories: [] }, feeds: { authenticatedUser: 'hubot' } });
    expect((await hit(e, 'GET', '/user', 200)).json).toMatchObject({ login: 'hubot', id: 7 });
  });

  it('the rate-limit status is the limiter’s own window, costs nothing and is answered while limited', async () => {
    const e = await em.start({ rateLimit: { limit: 3, windowMs: 60_000 } });
    await hit(e, 'GET', MIGRATIONS, 200);
    const first = await hit(e, 'GET', '/rate_limit', 200);
    const status = first.json as { rate: Record<string, number>; resources: { core: Record<string, number> } };
    expect(status.rate).toEqual({ limit: 3, remaining: 2, used: 1, reset: Number(first.headers['x-ratelimit-reset']) });
    expect(status.resources.core).toEqual(status.rate);
    await hit(e, 'GET', MIGRATIONS, 200);
    await hit(e, 'GET', MIGRATIONS, 200);
    await hit(e, 'GET', MIGRATIONS, 403);
    const limited = await hit(e, 'GET', '/rate_limit', 200);
    expect((limited.json as typeof status).rate).toMatchObject({ remaining: 0, used: 3 });
    // Nothing changed since: 304 to the ETag of the last answer; a request that counts changes it.
    const unchanged = await call(e.apiUrl, 'GET', '/rate_limit', { headers: { 'if-none-match': limited.headers.etag } });
    expect(unchanged.status).toBe(304);
    expect(ledger.check('GET', '/rate_limit', 304, undefined)).toEqual([]);
    expect((await call(e.apiUrl, 'GET', '/rate_limit', { headers: { 'if-none-match': first.headers.etag } })).status).toBe(200);
  });
});

describe('coverage', () => {
  it('checked every promised route and status, and every named exception is still needed', () => {
    const covered = ledger.covered();
    for (const [route, statuses] of Object.entries(PROMISED_CORE)) expect(covered.get(route), route).toEqual(expect.arrayContaining(statuses));
    expect([...covered.keys()].sort()).toEqual(Object.keys(PROMISED_CORE).sort());
    expect([...ledger.exceptionsUsed].sort()).toEqual(GITHUB_SCHEMA_EXCEPTIONS.map((x) => x.name).sort());
  });
});

afterAll(() => {
  console.log(ledger.table('GitHub answers checked against @octokit/openapi (migrations, source imports, what clients call first)'));
});
