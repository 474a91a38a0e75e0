/**
 * The emulated source-import API over real HTTP on an injected clock: the status machine of every
 * scenario (chosen by the last segment of `vcs_url`), progress fields at exact instants, authors with
 * `since`, the pushed result, large files and LFS, maintenance, retirement and strict validation.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VCS_TYPES } from '../../../packages/emulator/src/github/source-import/model';
import { IMPORT_VCS_TYPES } from '../../../src/processes/source-import/model';
import type { Emulator } from '@longhaul/emulator';
import { call, clockedEmulators, everyImportRoute, messageOf, type RawResponse } from '../../helpers/emulator-http';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const em = clockedEmulators(START);

// detecting 1 s, importing 10 s, mapping 2 s, pushing 4 s.
const TIMING = { detectingMs: 1_000, importingMs: 10_000, mappingMs: 2_000, pushingMs: 4_000 };
const PATH = '/repos/octo-org/alpha/import';
const SVN = 'https://svn.example.test/repos';

interface ImportBody {
  status: string;
  status_text: string;
  vcs: string | null;
  vcs_url: string;
  use_lfs: string;
  percent: number | null;
  commit_count: number | null;
  push_percent: number | null;
  authors_count: number;
  has_large_files: boolean;
  large_files_count: number;
  failed_step?: string;
  error_message?: string;
  project_choices?: { vcs: string; tfvc_project?: string; human_name: string }[];
  tfvc_project?: string;
  repository_url: string;
}
interface AuthorBody {
  id: number;
  remote_id: string;
  name: string;
  email: string;
}

const start = (options: Parameters<typeof em.start>[0] = {}) => em.start({ ...options, imports: { ...TIMING, ...options.imports } });
const body = (res: RawResponse) => res.json as ImportBody;

async function put(e: Emulator, input: Record<string, unknown>, path = PATH): Promise<RawResponse> {
  return call(e.apiUrl, 'PUT', path, { body: input });
}
async function at(e: Emulator, ms: number, path = PATH): Promise<ImportBody> {
  em.now = START + ms;
  const res = await call(e.apiUrl, 'GET', path);
  expect(res.status).toBe(200);
  return body(res);
}
async function authors(e: Emulator, since?: number): Promise<AuthorBody[]> {
  const res = await call(e.apiUrl, 'GET', `${PATH}/authors${since === undefined ? '' : `?since=${since}`}`);
  expect(res.status).toBe(200);
  return res.json as AuthorBody[];
}
async function patch(e: Emulator, ms: number, input: Record<string, unknown>, path = PATH): Promise<RawResponse> {
  em.now = START + ms;
  return call(e.apiUrl, 'PATCH', path, { body: input });
}

describe('emulated import status machine', () => {
  it('runs detecting → importing → mapping → pushing → complete with progress at the right instants', async () => {
    const e = await start();
    const created = await put(e, { vcs_url: `${SVN}/happy` });
    expect(created.status).toBe(201);
    expect(body(created)).toMatchObject({ status: 'detecting', vcs: null, percent: null, commit_count: null, push_percent: null, use_lfs: 'undecided' });

    expect((await at(e, 999)).status).toBe('detecting');
    expect(await at(e, 1_000)).toMatchObject({ status: 'importing', vcs: 'subversion', percent: 0, commit_count: 1_234 });
    expect(await at(e, 6_000)).toMatchObject({ status: 'importing', percent: 50 });
    expect(await at(e, 10_999)).toMatchObject({ status: 'importing', percent: 99 });
    expect(await at(e, 11_000)).toMatchObject({ status: 'mapping', percent: 100, push_percent: null });
    expect(await at(e, 13_000)).toMatchObject({ status: 'pushing', push_percent: 0 });
    expect(await at(e, 15_000)).toMatchObject({ status: 'pushing', push_percent: 50 });
    const done = await at(e, 17_000);
    expect(done).toMatchObject({ status: 'complete', push_percent: 100, authors_count: 4, repository_url: `${e.apiUrl}/repos/octo-org/alpha` });
    const pushes = e.imports.pushes('octo-org', 'alpha');
    expect(pushes).toHaveLength(1);
    expect(pushes[0].at).toBe(START + 13_000);
    expect(pushes[0].authors.reduce((sum, a) => sum + a.commits, 0)).toBe(1_234);
  });

  it('skips detection when the start request names the VCS', async () => {
    const e = await start();
    expect(body(await put(e, { vcs_url: 'https://git.example.test/x/happy', vcs: 'git' }))).toMatchObject({ status: 'importing', vcs: 'git', percent: 0 });
  });

  it('scales every step with timeScale', async () => {
    const e = await start({ imports: { timeScale: 0.001 } });
    await put(e, { vcs_url: `${SVN}/happy` });
    expect((await at(e, 16)).status).toBe('pushing');
    expect((await at(e, 17)).status).toBe('complete');
  });

  it('reveals authors while importing and pages them with since', async () => {
    const e = await start({ imports: { authorsPageSize: 2 } });
    await put(e, { vcs_url: `${SVN}/happy`, vcs: 'subversion' });
    expect(await authors(e)).toEqual([]);
    expect((await at(e, 2_000)).authors_count).toBe(1);
    const first = await authors(e);
    expect(first.map((a) => a.remote_id)).toEqual(['alice']);
    expect(await authors(e, first[0].id)).toEqual([]);
    expect((await at(e, 8_000)).authors_count).toBe(4);
    const page = await authors(e, first[0].id);
    expect(page.map((a) => a.remote_id)).toEqual(['bob', 'carol']);
    expect((await authors(e, page[1].id)).map((a) => a.remote_id)).toEqual(['dave']);
    const bad = await call(e.apiUrl, 'GET', `${PATH}/authors?since=abc`);
    expect(bad.status).toBe(422);
    expect(messageOf(bad)).toContain('"since" must be a non-negative integer');
  });

  it('pushes author identities as mapped before the push, and rewrites and pushes again after a late mapping', async () => {
    const e = await start();
    await put(e, { vcs_url: `${SVN}/happy`, vcs: 'subversion' });
    await at(e, 9_000);
    const [alice, bob] = await authors(e);
    const mapped = await patch(e, 9_500, { name: 'Alice Liddell', email: 'alice@example.com' }, `${PATH}/authors/${alice.id}`);
    expect(mapped.status).toBe(200);
    expect(mapped.json).toMatchObject({ id: alice.id, remote_id: 'alice', name: 'Alice Liddell', email: 'alice@example.com' });

    // Pushing began at 12 s; a PATCH at 14 s sees the push that already happened, then triggers a rewrite.
    const late = await patch(e, 14_000, { name: 'Bob Builder' }, `${PATH}/authors/${bob.id}`);
    expect(late.status).toBe(200);
    const pushes = e.imports.pushes('octo-org', 'alpha');
    expect(pushes).toHaveLength(1);
    expect(pushes[0].at).toBe(START + 12_000);
    expect(pushes[0].authors.find((a) => a.remoteId === 'alice')).toMatchObject({ name: 'Alice Liddell', email: 'alice@example.com' });
    expect(pushes[0].authors.find((a) => a.remoteId === 'bob')?.name).toBe('bob');
    expect((await at(e, 14_000)).status).toBe('mapping');
    expect((await at(e, 20_000)).status).toBe('complete');
    const again = e.imports.pushes('octo-org', 'alpha');
    expect(again).toHaveLength(2);
    expect(again[1].authors.find((a) => a.remoteId === 'bob')?.name).toBe('Bob Builder');
  });

  it('validates author updates strictly', async () => {
    const e = await start();
    await put(e, { vcs_url: `${SVN}/happy`, vcs: 'subversion' });
    await at(e, 9_000);
    const [alice] = await authors(e);
    const cases: [Record<string, unknown>, number, string][] = [
      [{ email: 'not an email' }, 422, 'is not an email address'],
      [{ name: 'Eve <eve@x>' }, 422, '"name" must be a non-empty name'],
      [{}, 422, 'Give "email", "name" or both.'],
      [{ login: 'alice' }, 422, '"login" is not a permitted key'],
    ];
    for (const [input, status, message] of cases) {
      const res = await patch(e, 9_000, input, `${PATH}/authors/${alice.id}`);
      expect(res.status).toBe(status);
      expect(messageOf(res)).toContain(message);
    }
    expect((await patch(e, 9_000, { name: 'X' }, `${PATH}/authors/999`)).status).toBe(404);
    expect((await patch(e, 9_000, { name: 'X' }, `${PATH}/authors/abc`)).status).toBe(404);
  });

  it('stops in detection_needs_auth without credentials and detects again once they arrive, never echoing them', async () => {
    const e = await start({ imports: { requiredCredentials: { username: 'svn-user', password: 'right-password' } } });
    await put(e, { vcs_url: `${SVN}/needs-auth` });
    expect((await at(e, 1_000)).status).toBe('detection_needs_auth');
    expect((await at(e, 5_000)).status).toBe('detection_needs_auth');
    const res = await patch(e, 5_000, { vcs_username: 'svn-user', vcs_password: 'right-password' });
    expect(res.status).toBe(200);
    expect(body(res).status).toBe('detecting');
    expect(res.text).not.toContain('right-password');
    expect(res.text).not.toContain('svn-user');
    expect((await at(e, 6_000)).status).toBe('importing');
    expect(e.imports.get('octo-org', 'alpha')!.credentials?.username).toBe('svn-user');
  });

  it('fails authentication 10 % into importing, again with wrong credentials, and goes on with the right ones', async () => {
    const e = await start({ imports: { requiredCredentials: { username: 'svn-user', password: 'right-password' } } });
    await put(e, { vcs_url: `${SVN}/needs-auth`, vcs: 'subversion', vcs_username: 'svn-user', vcs_password: 'wrong' });
    expect((await at(e, 999)).status).toBe('importing');
    expect(await at(e, 1_000)).toMatchObject({ status: 'auth_failed', percent: 10 });
    expect(body(await patch(e, 3_000, { vcs_username: 'svn-user', vcs_password: 'still-wrong' })).status).toBe('importing');
    expect((await at(e, 4_000)).status).toBe('auth_failed');
    expect(body(await patch(e, 4_000, { vcs_username: 'svn-user', vcs_password: 'right-password' })).status).toBe('importing');
    expect((await at(e, 14_000)).status).toBe('mapping');
    const half = await patch(e, 14_000, { vcs_username: 'svn-user' });
    expect(half.status).toBe(422);
    expect(messageOf(half)).toContain('must be given together');
  });

  it('offers project_choices and accepts exactly one of them', async () => {
    const e = await start();
    await put(e, { vcs_url: 'https://tfs.example.test/c/multiple-projects' });
    const found = await at(e, 1_000);
    expect(found.status).toBe('detection_found_multiple');
    expect(found.project_choices?.map((c) => c.human_name)).toEqual(['Subversion', 'Git', 'Fabrikam (tfs)', 'Contoso (tfs)']);
    expect((await patch(e, 1_500, { vcs: 'tfvc' })).status).toBe(422);
    expect((await patch(e, 1_500, { vcs: 'tfvc', tfvc_project: 'Nope' })).status).toBe(422);
    const chosen = await patch(e, 2_000, { vcs: 'tfvc', tfvc_project: 'Contoso', human_name: 'Contoso (tfs)' });
    expect(chosen.status).toBe(200);
    expect(body(chosen)).toMatchObject({ status: 'importing', vcs: 'tfvc', tfvc_project: 'Contoso' });
    expect(body(chosen).project_choices).toBeUndefined();
  });

  it('reports detection_found_nothing until the import is cancelled, after which it is gone', async () => {
    const e = await start();
    await put(e, { vcs_url: `${SVN}/nothing-found` });
    expect((await at(e, 1_000)).status).toBe('detection_found_nothing');
    expect((await call(e.apiUrl, 'DELETE', PATH)).status).toBe(204);
    expect((await call(e.apiUrl, 'GET', PATH)).status).toBe(404);
    expect((await call(e.apiUrl, 'DELETE', PATH)).status).toBe(404);
    // A new start after cancelling is a fresh import.
    expect(body(await put(e, { vcs_url: `${SVN}/happy` })).status).toBe('detecting');
  });

  it('fails at the chosen step with failed_step and a message, as often as fail_times says, and restarts on an empty PATCH', async () => {
    const e = await start();
    await put(e, { vcs_url: `${SVN}/error-importing?fail_times=2`, vcs: 'subversion' });
    expect((await at(e, 4_999)).status).toBe('importing');
    const failed = await at(e, 5_000);
    expect(failed).toMatchObject({ status: 'error', failed_step: 'importing', percent: 50 });
    expect(failed.error_message).toContain('the remote end hung up unexpectedly');
    expect((await at(e, 60_000)).status).toBe('error');
    expect(body(await patch(e, 60_000, {})).status).toBe('importing');
    expect((await at(e, 65_000)).status).toBe('error');
    expect(body(await patch(e, 65_000, {})).status).toBe('importing');
    expect((await at(e, 81_000)).status).toBe('complete');
    expect(e.imports.get('octo-org', 'alpha')!.restarts).toBe(2);
  });

  it('finds large files half way through importing and holds the push until use_lfs is decided', async () => {
    const e = await start();
    await put(e, { vcs_url: `${SVN}/large-files`, vcs: 'subversion' });
    expect((await at(e, 4_999)).has_large_files).toBe(false);
    expect((await call(e.apiUrl, 'GET', `${PATH}/large_files`)).json).toEqual([]);
    expect(await at(e, 5_000)).toMatchObject({ has_large_files: true, large_files_count: 2 });
    const files = (await call(e.apiUrl, 'GET', `${PATH}/large_files`)).json as { path: string; size: number; oid: string }[];
    expect(files.map((f) => f.path)).toEqual(['assets/video/intro.mov', 'data/dump.sql']);
    expect(files.every((f) => /^[0-9a-f]{40}$/.test(f.oid) && f.size > 100 * 1024 * 1024)).toBe(true);

    const held = await at(e, 60_000);
    expect(held.status).toBe('mapping');
    expect(held.status_text).toContain('Waiting for a decision on large files');
    expect(e.imports.pushes('octo-org', 'alpha')).toEqual([]);
    const bad = await patch(e, 60_000, { use_lfs: 'maybe' }, `${PATH}/lfs`);
    expect(bad.status).toBe(422);
    const decided = await patch(e, 60_000, { use_lfs: 'opt_out' }, `${PATH}/lfs`);
    expect(body(decided)).toMatchObject({ status: 'pushing', use_lfs: 'opt_out' });
    expect((await at(e, 64_000)).status).toBe('complete');
    const [push] = e.imports.pushes('octo-org', 'alpha');
    expect(push).toMatchObject({ useLfs: 'opt_out', removedFiles: ['assets/video/intro.mov', 'data/dump.sql'], lfsObjects: [] });
  });

  it('finds no large files in git imports (large-file handling applies to Subversion, Mercurial and TFS)', async () => {
    const e = await start();
    await put(e, { vcs_url: 'https://git.example.test/x/large-files', vcs: 'git' });
    expect((await at(e, 30_000)).status).toBe('complete');
    expect((await at(e, 30_000)).has_large_files).toBe(false);
  });
});

describe('emulated import endpoints: refusals', () => {
  it("knows the VCS values of GitHub's description, as longhaul does, each written on its own side", () => {
    const doc = JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: { properties: Record<string, { enum?: string[] }> } }> } }>>;
    };
    const described = doc.paths['/repos/{owner}/{repo}/import'].put.requestBody.content['application/json'].schema.properties.vcs.enum;
    expect([...VCS_TYPES].sort()).toEqual([...described!].sort());
    expect([...IMPORT_VCS_TYPES].sort()).toEqual([...described!].sort());
  });

  it('refuses to start an import into a repository with workflows enabled (422) or an unknown one (404)', async () => {
    const e = await start();
    const actions = await put(e, { vcs_url: `${SVN}/happy` }, '/repos/octo-org/with-actions/import');
    expect(actions.status).toBe(422);
    expect(messageOf(actions)).toContain('workflows enabled');
    expect((await put(e, { vcs_url: `${SVN}/happy` }, '/repos/octo-org/nope/import')).status).toBe(404);
    expect((await call(e.apiUrl, 'GET', PATH)).status).toBe(404);
  });

  it('validates the start request strictly', async () => {
    const e = await start();
    const cases: [Record<string, unknown>, string][] = [
      [{}, '"vcs_url" wasn\'t supplied'],
      [{ vcs_url: 'not a url' }, '"vcs_url" must be a URL'],
      [{ vcs_url: 'ftp://x.test/repo' }, 'unsupported scheme'],
      [{ vcs_url: `${SVN}/happy`, vcs: 'cvs' }, '"vcs" must be one of subversion, git, mercurial, tfvc'],
      [{ vcs_url: `${SVN}/happy`, vcs: 'git', tfvc_project: 'P' }, '"tfvc_project" applies only to "vcs": "tfvc"'],
      [{ vcs_url: `${SVN}/happy`, vcs_password: 'x' }, 'must be given together'],
      [{ vcs_url: `${SVN}/happy`, branch: 'main' }, '"branch" is not a permitted key'],
      [{ vcs_url: 42 }, 'is not a string'],
    ];
    for (const [input, message] of cases) {
      const res = await put(e, input);
      expect(res.status, JSON.stringify(input)).toBe(422);
      expect(messageOf(res)).toContain(message);
    }
    expect(e.imports.all()).toEqual([]);
  });

  it('answers a repeated start with the existing import and refuses a start from another URL', async () => {
    const e = await start();
    expect((await put(e, { vcs_url: `${SVN}/happy` })).status).toBe(201);
    em.now = START + 2_000;
    const again = await put(e, { vcs_url: `${SVN}/happy` });
    expect(again.status).toBe(201);
    expect(body(again).status).toBe('importing');
    const other = await put(e, { vcs_url: `${SVN}/other` });
    expect(other.status).toBe(422);
    expect(messageOf(other)).toContain('already exists');
    expect(e.imports.all()).toHaveLength(1);
    expect(e.imports.get('octo-org', 'alpha')!.events.filter((x) => x.kind === 'put')).toHaveLength(1);
  });

  it('answers 503 on every import endpoint inside a maintenance window and serves again after it', async () => {
    const e = await start({ imports: { maintenanceWindows: [{ fromMs: START + 1_000, untilMs: START + 3_000 }], maintenanceRetryAfterSeconds: 30 } });
    await put(e, { vcs_url: `${SVN}/happy` });
    em.now = START + 1_000;
    for (const [method, path, input] of everyImportRoute(PATH, `${SVN}/happy`)) {
      const res = await call(e.apiUrl, method, path, { body: input });
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.headers['retry-after']).toBe('30');
      expect(messageOf(res)).toContain('under maintenance');
    }
    expect((await at(e, 3_000)).status).toBe('importing');
    e.imports.startMaintenance(500);
    expect((await call(e.apiUrl, 'GET', PATH)).status).toBe(503);
    expect((await at(e, 3_500)).status).toBe('importing');
  });

  it('answers 404 on every import endpoint once the API is retired', async () => {
    const e = await start({ imports: { retired: true } });
    const res = await put(e, { vcs_url: `${SVN}/happy` });
    expect(res.status).toBe(404);
    expect(messageOf(res)).toBe('Not Found');
    expect((await call(e.apiUrl, 'GET', `${PATH}/authors`)).status).toBe(404);
  });
});
