/**
 * The emulator serves GitHub's two REST API versions by `X-GitHub-Api-Version` (issue 39): 2022-11-28 when the header
 * is absent, 400 for a version GitHub does not serve, and on every GitHub route it serves the answer of the version
 * asked for, checked against that version's description (`test/helpers/github-openapi.ts`: the 2026-03-10 document
 * forbids what it removes, so a field left in fails there).
 */
import { describe, expect, it } from 'vitest';
import { call, clockedEmulators } from '../../helpers/emulator-http';
import { checkGithubAnswer, checkGithubSchema, useGithubApiVersion, type GithubApiVersion } from '../../helpers/github-openapi';
import { checkEventPage } from '../../helpers/github-event-schemas';
import { GITHUB_API_VERSIONS } from '../../../src/config';

const em = clockedEmulators(Date.UTC(2026, 2, 20, 12, 0, 0));
const versioned = (v: GithubApiVersion) => ({ headers: { 'x-github-api-version': v } });

describe('REST API versions in the emulator', () => {
  it('answers an unknown version 400 with GitHub\'s message, whatever the route, and serves 2022-11-28 when the header is absent', async () => {
    const e = await em.start();
    for (const path of ['/rate_limit', '/orgs/octo-org/migrations', '/no/such/route']) {
      const res = await call(e.apiUrl, 'GET', path, { headers: { 'x-github-api-version': '2023-01-01' } });
      expect(res.status, path).toBe(400);
      expect(res.json).toEqual({
        message: 'The version you specified in the "X-GitHub-Api-Version" request header, "2023-01-01", is not a supported version. The following versions are currently supported: "2026-03-10" (most recent), "2022-11-28".',
        documentation_url: 'https://docs.github.com/rest/about-the-rest-api/api-versions',
        status: '400',
      });
      expect(checkGithubSchema('basic-error', res.json).errors).toEqual([]);
    }
    const absent = await call(e.apiUrl, 'GET', '/rate_limit');
    expect(Object.keys(absent.json as object).sort()).toEqual(['rate', 'resources']);
  });

  for (const version of GITHUB_API_VERSIONS) {
    it(`serves ${version} on every route it changes, as that version's description documents`, async () => {
      const e = await em.start({ feeds: { initialEvents: 0, eventsPerMinute: 0 } });
      const h = versioned(version);
      const next = version === '2026-03-10';
      const ok = async (method: string, path: string, status: number, body?: unknown) => {
        const res = await call(e.apiUrl, method, path, { ...h, body });
        expect(res.status, `${method} ${path}`).toBe(status);
        expect(checkGithubAnswer(method, path, status, res.json, version).errors, `${method} ${path}`).toEqual([]);
        return res.json as Record<string, unknown>;
      };

      const rate = await ok('GET', '/rate_limit', 200);
      expect('rate' in rate).toBe(!next);
      expect((rate.resources as { core: { limit: number } }).core.limit).toBeGreaterThan(0);

      const repo = await ok('GET', '/repos/octo-org/alpha', 200);
      expect('has_downloads' in repo).toBe(!next);
      // Where a rename's 301 leads (no path of the description): the same repository, checked as `full-repository`.
      const byId = (await call(e.apiUrl, 'GET', `/repositories/${String(repo.id)}`, h)).json;
      expect(checkGithubSchema('full-repository', byId, version).errors).toEqual([]);
      await ok('GET', '/orgs/octo-org', 200);

      const started = await ok('POST', '/orgs/octo-org/migrations', 201, { repositories: ['alpha', 'beta'] });
      const listed = (await call(e.apiUrl, 'GET', '/orgs/octo-org/migrations', h)).json as Record<string, unknown>[];
      expect(checkGithubAnswer('GET', '/orgs/octo-org/migrations', 200, listed, version).errors).toEqual([]);
      const one = await ok('GET', `/orgs/octo-org/migrations/${String(started.id)}`, 200);
      const repos = await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${String(started.id)}/repositories`, h);
      expect(checkGithubAnswer('GET', `/orgs/octo-org/migrations/${String(started.id)}/repositories`, 200, repos.json, version).errors).toEqual([]);
      for (const m of [started, listed[0], one]) {
        const entries = m.repositories as Record<string, unknown>[];
        // What the start lookup compares is there in both versions: each repository's name and full name.
        expect(entries.map((r) => [r.name, r.full_name])).toEqual([['alpha', 'octo-org/alpha'], ['beta', 'octo-org/beta']]);
        // 2026-03-10 gives `simple-repository`: the repository's details (size, flags, dates) are gone.
        expect(entries.every((r) => 'size' in r && 'pushed_at' in r)).toBe(!next);
      }

      e.feeds.burst('/repos/octo-org/alpha/events', 120);
      const events = (await call(e.apiUrl, 'GET', '/repos/octo-org/alpha/events?per_page=100', h)).json as { id: string; type: string; payload: { issue?: object } }[];
      useGithubApiVersion(version);
      try {
        expect(checkEventPage('/repos/octo-org/alpha/events', events).problems).toEqual([]);
      } finally {
        useGithubApiVersion('2022-11-28');
      }
      const issues = events.filter((ev) => ev.payload.issue).map((ev) => ev.payload.issue!);
      expect(issues.length).toBeGreaterThan(0);
      expect(issues.every((i) => 'assignee' in i)).toBe(!next);
      expect(events.some((ev) => ev.type === 'DiscussionEvent')).toBe(true);
    });
  }
});
