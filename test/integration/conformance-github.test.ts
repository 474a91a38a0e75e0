/**
 * Conformance (issue 12): GitHub's own client, `@octokit/rest`, drives the emulator through every seeded
 * GitHub flow longhaul uses, and every answer of the emulator's API is validated against GitHub's official
 * OpenAPI description (`@octokit/openapi`) by the client's request hooks (`conforming-octokit.ts`). Where the
 * seed and the description disagree the seed wins, and only the exceptions named in `github-schema-ledger.ts`
 * are forgiven; the file prints the routes × statuses covered, the flows and the exceptions used.
 *
 * One `describe` per flow, each on its own emulator with an injected clock (state moves by setting the time,
 * never by waiting); further flows append their own `describe` and use the same ledger.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator, EmulatorOptions } from '@longhaul/emulator';
import { startTestEmulator } from '../helpers/emulator';
import { SchemaLedger } from '../helpers/github-schema-ledger';
import { conformingOctokit, type ConformingOctokit } from '../helpers/conforming-octokit';
import { testGithubApiVersion } from '../helpers/api-version';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const ledger = new SchemaLedger();
const flows: string[] = [];

/** An emulator on its own clock with a validating octokit, closed after the describe block. */
function flowStack(name: string, options: EmulatorOptions) {
  const stack = { now: START, emulator: undefined as unknown as Emulator, client: undefined as unknown as ConformingOctokit };
  beforeAll(async () => {
    stack.emulator = await startTestEmulator({ ...options, clock: () => stack.now });
    stack.client = await conformingOctokit(stack.emulator.apiUrl, ledger);
  });
  afterAll(async () => {
    await stack.emulator?.close();
    if (stack.client) {
      flows.push(`${name}${stack.client.foreignAnswers.length ? ` (followed: ${stack.client.foreignAnswers.join('; ')})` : ''}`);
      expect(stack.client.problems).toEqual([]);
    }
  });
  return stack;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('flow: organization migration (start, poll, repositories, archive via 302, delete, unlock)', () => {
  const s = flowStack('organization migration', { migrations: { exportMs: 10_000, pendingFraction: 0.2, archiveBytes: 64 * 1024 } });
  const org = 'octo-org';
  let migrationId = 0;

  it('starts an export with locked repositories', async () => {
    const { data, status } = await s.client.octokit.rest.migrations.startForOrg({ org, repositories: ['alpha', 'beta'], lock_repositories: true });
    expect(status).toBe(201);
    expect(data.state).toBe('pending');
    expect(data.repositories.map((r) => r.full_name)).toEqual(['octo-org/alpha', 'octo-org/beta']);
    migrationId = data.id;
  });

  it('finds it in the organization’s list (as the lookup after an unknown start outcome does)', async () => {
    const { data } = await s.client.octokit.rest.migrations.listForOrg({ org, per_page: 100 });
    expect(data.map((m) => m.guid)).toHaveLength(1);
    expect(data[0].id).toBe(migrationId);
  });

  it('polls until exported, without the repositories (longhaul’s poll)', async () => {
    const states: string[] = [];
    for (let i = 0; i < 10 && states.at(-1) !== 'exported'; i++) {
      const { data } = await s.client.octokit.rest.migrations.getStatusForOrg({ org, migration_id: migrationId, exclude: ['repositories'] });
      expect(data).not.toHaveProperty('repositories');
      states.push(data.state ?? '');
      s.now += 2_500;
    }
    expect([...new Set(states)]).toEqual(['pending', 'exporting', 'exported']);
  });

  it('lists the migration’s repositories: full repository objects under 2022-11-28, simple ones under 2026-03-10', async () => {
    const { data } = await s.client.octokit.rest.migrations.listReposForOrg({ org, migration_id: migrationId });
    expect(data.map((r) => r.name)).toEqual(['alpha', 'beta']);
    if (testGithubApiVersion() === '2022-11-28') expect(data[0].clone_url).toMatch(/\/octo-org\/alpha\.git$/);
    else expect('clone_url' in data[0]).toBe(false);
  });

  it('answers the archive download with a 302 to the storage origin', async () => {
    const res = await s.client.octokit.rest.migrations.downloadArchiveForOrg({ org, migration_id: migrationId, request: { redirect: 'manual' } });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.location ?? '').origin).not.toBe(new URL(s.emulator.apiUrl).origin);
    // GitHub repeats the URL as the body of the redirect.
    expect(res.data as unknown).toBe(res.headers.location);
  });

  it('downloads the archive when octokit follows the 302 (fetch drops the token on the cross-origin hop)', async () => {
    const res = await s.client.octokit.rest.migrations.downloadArchiveForOrg({ org, migration_id: migrationId });
    expect(res.status).toBe(200);
    expect(sha256(new Uint8Array(res.data as ArrayBuffer))).toBe(sha256(s.emulator.migrations.archiveBytes(migrationId)!));
    expect(s.emulator.stats.storage.rejectedWithAuthorization).toBe(0);
  });

  it('deletes the archive, after which its download is a 404', async () => {
    expect((await s.client.octokit.rest.migrations.deleteArchiveForOrg({ org, migration_id: migrationId })).status).toBe(204);
    await expect(s.client.octokit.rest.migrations.downloadArchiveForOrg({ org, migration_id: migrationId, request: { redirect: 'manual' } })).rejects.toMatchObject({ status: 404 });
  });

  it('unlocks each repository', async () => {
    for (const repo_name of ['alpha', 'beta']) {
      expect((await s.client.octokit.rest.migrations.unlockRepoForOrg({ org, migration_id: migrationId, repo_name })).status).toBe(204);
      expect(s.emulator.migrations.isLocked(org, repo_name)).toBe(false);
    }
  });
});

/**
 * Source imports: `@octokit/rest` 22 no longer names these endpoints (GitHub retired them in 2024), so the flow
 * uses the client's `request` with the documented routes; the description still holds their schemas.
 */
describe('flow: source import (start, poll, author mapping, large-file preference, cancel)', () => {
  const s = flowStack('source import', { imports: { detectingMs: 1_000, importingMs: 10_000, mappingMs: 2_000, pushingMs: 4_000 } });
  const repo = { owner: 'octo-org', repo: 'alpha' };
  const status = async () => (await s.client.octokit.request('GET /repos/{owner}/{repo}/import', repo)).data as { status: string; has_large_files?: boolean };

  it('starts an import', async () => {
    const res = await s.client.octokit.request('PUT /repos/{owner}/{repo}/import', { ...repo, vcs_url: 'https://svn.example.test/repos/large-files' });
    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({ status: 'detecting', use_lfs: 'undecided' });
  });

  it('polls the status until the import holds for a decision on large files', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 20 && !(seen.at(-1) === 'mapping' && s.now >= START + 13_000); i++) {
      seen.push((await status()).status);
      s.now += 1_000;
    }
    expect([...new Set(seen)]).toEqual(['detecting', 'importing', 'mapping']);
    expect(await status()).toMatchObject({ status: 'mapping', has_large_files: true });
  });

  it('maps a commit author', async () => {
    const { data: authors } = await s.client.octokit.request('GET /repos/{owner}/{repo}/import/authors', repo);
    expect(authors.length).toBeGreaterThan(0);
    const { data: mapped } = await s.client.octokit.request('PATCH /repos/{owner}/{repo}/import/authors/{author_id}', {
      ...repo,
      author_id: authors[0].id,
      name: 'Alice Liddell',
      email: 'alice@example.com',
    });
    expect(mapped).toMatchObject({ id: authors[0].id, name: 'Alice Liddell', email: 'alice@example.com' });
  });

  it('lists the large files and sets the large-file preference, which lets the push go on', async () => {
    const { data: files } = await s.client.octokit.request('GET /repos/{owner}/{repo}/import/large_files', repo);
    expect(files.length).toBeGreaterThan(0);
    const { data } = await s.client.octokit.request('PATCH /repos/{owner}/{repo}/import/lfs', { ...repo, use_lfs: 'opt_in' });
    expect(data).toMatchObject({ status: 'pushing', use_lfs: 'opt_in' });
    s.now += 4_000;
    expect((await status()).status).toBe('complete');
  });

  it('cancels an import', async () => {
    expect((await s.client.octokit.request('DELETE /repos/{owner}/{repo}/import', repo)).status).toBe(204);
    await expect(status()).rejects.toMatchObject({ status: 404 });
  });
});

describe('flow: source import updates (credentials, project choice, restart after an error)', () => {
  const s = flowStack('source import updates', { imports: { detectingMs: 1_000, importingMs: 10_000, mappingMs: 2_000, pushingMs: 4_000 } });
  const start = async (repo: string, vcs_url: string) =>
    expect((await s.client.octokit.request('PUT /repos/{owner}/{repo}/import', { owner: 'octo-org', repo, vcs_url })).status).toBe(201);
  const statusOf = async (repo: string) => ((await s.client.octokit.request('GET /repos/{owner}/{repo}/import', { owner: 'octo-org', repo })).data as { status: string }).status;
  const update = async (repo: string, body: Record<string, string>) =>
    ((await s.client.octokit.request('PATCH /repos/{owner}/{repo}/import', { owner: 'octo-org', repo, ...body })).data as { status: string }).status;

  it('sends credentials when detection needs them', async () => {
    await start('alpha', 'https://svn.example.test/repos/needs-auth');
    s.now = START + 1_000;
    expect(await statusOf('alpha')).toBe('detection_needs_auth');
    expect(await update('alpha', { vcs_username: 'svn-user', vcs_password: 'secret' })).toBe('detecting');
  });

  it('chooses one of several projects found', async () => {
    await start('beta', 'https://svn.example.test/repos/multiple-projects');
    s.now += 1_000;
    expect(await statusOf('beta')).toBe('detection_found_multiple');
    expect(await update('beta', { vcs: 'tfvc', tfvc_project: 'Fabrikam', human_name: 'Fabrikam (tfs)' })).toBe('importing');
  });

  it('restarts an import that failed', async () => {
    await start('gamma', 'https://svn.example.test/repos/error-importing');
    s.now += 6_000;
    expect(await statusOf('gamma')).toBe('error');
    expect(await update('gamma', {})).toBe('importing');
  });
});

describe('flow: what a client reads first (the token’s user, an organization, a repository, a user, the rate-limit status)', () => {
  const s = flowStack('client start-up', { rateLimit: { limit: 50 } });

  it('answers each in GitHub’s documented shape, consistent with the rate-limit headers', async () => {
    const { rest } = s.client.octokit;
    expect((await rest.users.getAuthenticated()).data.login).toBe('octocat');
    expect((await rest.orgs.get({ org: 'octo-org' })).data).toMatchObject({ login: 'octo-org', type: 'Organization' });
    expect((await rest.repos.get({ owner: 'octo-org', repo: 'alpha' })).data.full_name).toBe('octo-org/alpha');
    expect((await rest.users.getByUsername({ username: 'octocat' })).data.login).toBe('octocat');
    await expect(rest.orgs.get({ org: 'no-such-org' })).rejects.toMatchObject({ status: 404 });
    const limit = await rest.rateLimit.get();
    // Five requests so far, the status itself not counted; the headers of the same answer agree.
    expect(limit.data.resources.core).toMatchObject({ limit: 50, used: 5, remaining: 45 });
    expect(limit.data.resources.core.reset).toBe(Number(limit.headers['x-ratelimit-reset']));
    // The deprecated copy of resources.core: still sent under 2022-11-28, removed by 2026-03-10.
    expect('rate' in limit.data).toBe(testGithubApiVersion() === '2022-11-28');
    expect(limit.headers['x-ratelimit-remaining']).toBe('45');
  });

  it('follows a renamed repository’s 301 to where it lives now, or shows it when told not to follow', async () => {
    const { rest } = s.client.octokit;
    const followed = await rest.repos.get({ owner: 'octo-org', repo: 'alpha-legacy' });
    expect(followed.data.full_name).toBe('octo-org/alpha');
    expect(followed.url).toBe(`${s.emulator.apiUrl}/repositories/2001`);
    const moved = await rest.repos.get({ owner: 'octo-org', repo: 'alpha-legacy', request: { redirect: 'manual' } });
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toBe(`${s.emulator.apiUrl}/repositories/2001`);
  });
});

afterAll(() => {
  console.log(`${ledger.table('@octokit/rest against the emulator, answers checked against @octokit/openapi')}\nflows: ${flows.join(' | ')}`);
});
