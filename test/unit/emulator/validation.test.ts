/**
 * The emulator validates like the real service: bearer auth first, then unknown orgs and ids (404),
 * malformed bodies (400), unknown fields, wrong types and out-of-range `per_page` (422, with a message).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '@longhaul/emulator';
import { startTestEmulator } from '../../helpers/emulator';
import { call, messageOf } from '../../helpers/emulator-http';

let emulator: Emulator;
const START = Date.UTC(2026, 2, 1, 12, 0, 0);

beforeAll(async () => {
  emulator = await startTestEmulator({ port: 0, clock: () => START });
});
afterAll(async () => {
  await emulator?.close();
});

const MIGRATIONS = '/orgs/octo-org/migrations';

describe('emulator authentication', () => {
  it('answers 401 "Requires authentication" without a bearer token, before revealing whether the org exists', async () => {
    for (const path of [MIGRATIONS, '/orgs/no-such-org/migrations', '/no/such/route']) {
      const res = await call(emulator.apiUrl, 'GET', path, { token: null });
      expect(res.status).toBe(401);
      expect(messageOf(res)).toBe('Requires authentication');
    }
  });

  it('answers 401 "Bad credentials" for a token other than the configured one', async () => {
    const res = await call(emulator.apiUrl, 'GET', MIGRATIONS, { token: 'someone-else' });
    expect(res.status).toBe(401);
    expect(messageOf(res)).toBe('Bad credentials');
  });

  it('rejects an Authorization header that is not a bearer token', async () => {
    const res = await call(emulator.apiUrl, 'GET', MIGRATIONS, { token: null, headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(res.status).toBe(401);
  });

  it('accepts any non-empty token when none is configured', async () => {
    const open = await startTestEmulator({ port: 0, token: undefined });
    try {
      expect((await call(open.apiUrl, 'GET', MIGRATIONS, { token: 'anything' })).status).toBe(200);
      expect((await call(open.apiUrl, 'GET', MIGRATIONS, { token: null })).status).toBe(401);
    } finally {
      await open.close();
    }
  });
});

describe('emulator request validation', () => {
  it('answers 422 naming an unknown field', async () => {
    const res = await call(emulator.apiUrl, 'POST', MIGRATIONS, { body: { repositories: ['alpha'], lock_repos: true } });
    expect(res.status).toBe(422);
    expect(messageOf(res)).toContain('"lock_repos" is not a permitted key');
  });

  it('answers 422 for a field of the wrong type', async () => {
    const res = await call(emulator.apiUrl, 'POST', MIGRATIONS, { body: { repositories: ['alpha'], lock_repositories: 'yes' } });
    expect(res.status).toBe(422);
    expect(messageOf(res)).toContain('lock_repositories');
  });

  it('answers 422 when repositories is missing, or empty without org_metadata_only', async () => {
    const missing = await call(emulator.apiUrl, 'POST', MIGRATIONS, { body: { lock_repositories: true } });
    expect(missing.status).toBe(422);
    expect(messageOf(missing)).toContain('"repositories" wasn\'t supplied');
    const empty = await call(emulator.apiUrl, 'POST', MIGRATIONS, { body: { repositories: [] } });
    expect(empty.status).toBe(422);
    const metadataOnly = await call(emulator.apiUrl, 'POST', MIGRATIONS, { body: { repositories: [], org_metadata_only: true } });
    expect(metadataOnly.status).toBe(201);
  });

  it('answers 422 for a repository the organization does not have', async () => {
    const res = await call(emulator.apiUrl, 'POST', MIGRATIONS, { body: { repositories: ['alpha', 'nope'] } });
    expect(res.status).toBe(422);
    expect(messageOf(res)).toContain('octo-org/nope');
  });

  it('answers 400 "Problems parsing JSON" for a malformed body', async () => {
    const res = await call(emulator.apiUrl, 'POST', MIGRATIONS, { rawBody: '{"repositories": [' });
    expect(res.status).toBe(400);
    expect(messageOf(res)).toBe('Problems parsing JSON');
  });

  it('answers 422 for a JSON body that is not an object', async () => {
    const res = await call(emulator.apiUrl, 'POST', MIGRATIONS, { rawBody: '["alpha"]' });
    expect(res.status).toBe(422);
  });

  it.each(['101', '0', 'ten', '-1'])('answers 422 for per_page=%s and accepts up to 100', async (perPage) => {
    const bad = await call(emulator.apiUrl, 'GET', `${MIGRATIONS}?per_page=${perPage}`);
    expect(bad.status).toBe(422);
    expect(messageOf(bad)).toContain('per_page');
    expect((await call(emulator.apiUrl, 'GET', `${MIGRATIONS}?per_page=100`)).status).toBe(200);
  });

  it('answers 404 for an unknown organization, migration id or route, and 405 for a wrong method', async () => {
    expect((await call(emulator.apiUrl, 'GET', '/orgs/no-such-org/migrations')).status).toBe(404);
    expect((await call(emulator.apiUrl, 'POST', '/orgs/no-such-org/migrations', { body: { repositories: ['alpha'] } })).status).toBe(404);
    expect((await call(emulator.apiUrl, 'GET', `${MIGRATIONS}/999999`)).status).toBe(404);
    expect((await call(emulator.apiUrl, 'GET', `${MIGRATIONS}/not-a-number`)).status).toBe(404);
    expect((await call(emulator.apiUrl, 'DELETE', `${MIGRATIONS}/999999/repos/alpha/lock`)).status).toBe(404);
    const unknown = await call(emulator.apiUrl, 'GET', '/no/such/route');
    expect(unknown.status).toBe(404);
    expect(messageOf(unknown)).toBe('Not Found');
    expect((await call(emulator.apiUrl, 'PATCH', MIGRATIONS, { body: {} })).status).toBe(405);
  });

  it('sends rate-limit headers and a Date from its clock on every API answer, errors included', async () => {
    const res = await call(emulator.apiUrl, 'GET', `${MIGRATIONS}/999999`);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
    expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    expect(res.headers.date).toBe(new Date(START).toUTCString());
  });
});
