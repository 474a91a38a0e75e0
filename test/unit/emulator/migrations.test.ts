/**
 * The emulated migrations API over real HTTP on an injected clock: the export state machine, repository
 * locks, the archive's 302 to a separate storage origin, and that origin's pre-signed, expiring,
 * `Range`-capable, credential-rejecting downloads.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { Emulator } from '@longhaul/emulator';
import { call, clockedEmulators, messageOf, type RawResponse } from '../../helpers/emulator-http';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const em = clockedEmulators(START);
const start = em.start;

interface MigrationBody {
  id: number;
  state: string;
  lock_repositories: boolean;
  repositories?: { name: string; full_name: string }[];
  archive_url?: string;
  created_at: string;
}

const body = (res: RawResponse) => res.json as MigrationBody;

async function createMigration(e: Emulator, input: Record<string, unknown>): Promise<MigrationBody> {
  const res = await call(e.apiUrl, 'POST', '/orgs/octo-org/migrations', { body: input });
  expect(res.status).toBe(201);
  return body(res);
}

async function stateAt(e: Emulator, id: number, atMs: number): Promise<string> {
  em.now = atMs;
  const res = await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${id}`);
  expect(res.status).toBe(200);
  return body(res).state;
}

describe('emulated migration state machine', () => {
  it('goes pending → exporting → exported on the configured timing', async () => {
    const e = await start({ migrations: { exportMs: 10_000, pendingFraction: 0.2 } });
    const m = await createMigration(e, { repositories: ['alpha', 'beta'], lock_repositories: true });
    expect(m.state).toBe('pending');
    expect(m.lock_repositories).toBe(true);
    expect(m.repositories?.map((r) => r.full_name)).toEqual(['octo-org/alpha', 'octo-org/beta']);
    expect(m.created_at).toBe(new Date(START).toISOString());

    expect(await stateAt(e, m.id, START + 1_999)).toBe('pending');
    expect(await stateAt(e, m.id, START + 2_000)).toBe('exporting');
    expect(await stateAt(e, m.id, START + 9_999)).toBe('exporting');
    expect(await stateAt(e, m.id, START + 10_000)).toBe('exported');
    const done = body(await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${m.id}`));
    expect(done.archive_url).toBe(`${e.apiUrl}/orgs/octo-org/migrations/${m.id}/archive`);
  });

  it('ends failed for exports that include a failing repository, and has no archive', async () => {
    const e = await start({ migrations: { exportMs: 1_000, failRepositories: ['beta'] } });
    const failing = await createMigration(e, { repositories: ['alpha', 'beta'] });
    const fine = await createMigration(e, { repositories: ['gamma'] });
    expect(await stateAt(e, failing.id, START + 1_000)).toBe('failed');
    expect(await stateAt(e, fine.id, START + 1_000)).toBe('exported');
    expect((await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${failing.id}/archive`)).status).toBe(404);
  });

  it('picks each export time deterministically within a configured range', async () => {
    const e = await start({ migrations: { exportMs: [2_000, 10_000] } });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await createMigration(e, { repositories: ['alpha'] })).id);
    for (const id of ids) {
      const exportMs = e.migrations.get(id)!.exportMs;
      expect(exportMs).toBeGreaterThanOrEqual(2_000);
      expect(exportMs).toBeLessThanOrEqual(10_000);
      expect(await stateAt(e, id, START + exportMs - 1)).not.toBe('exported');
      expect(await stateAt(e, id, START + exportMs)).toBe('exported');
    }
  });

  it('lists migrations newest first with Link pagination and can leave out repositories', async () => {
    const e = await start();
    const a = await createMigration(e, { repositories: ['alpha'] });
    const b = await createMigration(e, { repositories: ['beta'] });
    const page1 = await call(e.apiUrl, 'GET', '/orgs/octo-org/migrations?per_page=1&exclude=repositories');
    expect((page1.json as MigrationBody[]).map((m) => m.id)).toEqual([b.id]);
    expect((page1.json as MigrationBody[])[0].repositories).toBeUndefined();
    const next = /<([^>]+)>;\s*rel="next"/.exec(page1.headers.link)?.[1];
    expect(next).toBeDefined();
    const page2 = await call(e.apiUrl, 'GET', next!);
    expect((page2.json as MigrationBody[]).map((m) => m.id)).toEqual([a.id]);
    expect(/rel="next"/.test(page2.headers.link ?? '')).toBe(false);
  });
});

describe('emulated repository locks', () => {
  it('locks repositories until each is unlocked, refusing a second locking migration meanwhile', async () => {
    const e = await start();
    const m = await createMigration(e, { repositories: ['alpha', 'beta'], lock_repositories: true });
    expect(e.migrations.isLocked('octo-org', 'alpha')).toBe(true);
    expect(e.migrations.isLocked('octo-org', 'beta')).toBe(true);

    const second = await call(e.apiUrl, 'POST', '/orgs/octo-org/migrations', { body: { repositories: ['beta'], lock_repositories: true } });
    expect(second.status).toBe(422);
    expect(messageOf(second)).toContain('already locked');

    expect((await call(e.apiUrl, 'DELETE', `/orgs/octo-org/migrations/${m.id}/repos/alpha/lock`)).status).toBe(204);
    expect(e.migrations.isLocked('octo-org', 'alpha')).toBe(false);
    expect(e.migrations.isLocked('octo-org', 'beta')).toBe(true);
    // Unlocking again (a retry after a lost answer) is harmless.
    expect((await call(e.apiUrl, 'DELETE', `/orgs/octo-org/migrations/${m.id}/repos/alpha/lock`)).status).toBe(204);
    // A repository outside the migration is not found.
    expect((await call(e.apiUrl, 'DELETE', `/orgs/octo-org/migrations/${m.id}/repos/gamma/lock`)).status).toBe(404);
  });

  it('locks nothing without lock_repositories', async () => {
    const e = await start();
    await createMigration(e, { repositories: ['alpha'] });
    expect(e.migrations.isLocked('octo-org', 'alpha')).toBe(false);
  });
});

describe('emulated archive download', () => {
  async function exported(e: Emulator): Promise<{ id: number; location: string }> {
    const m = await createMigration(e, { repositories: ['alpha'] });
    em.now = START + 10_000;
    const res = await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${m.id}/archive`);
    expect(res.status).toBe(302);
    return { id: m.id, location: res.headers.location };
  }

  it('answers 404 for the archive until the export is done', async () => {
    const e = await start({ migrations: { exportMs: 5_000 } });
    const m = await createMigration(e, { repositories: ['alpha'] });
    em.now = START + 4_999;
    expect((await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${m.id}/archive`)).status).toBe(404);
  });

  it('redirects to a separate storage origin that serves the archive bytes without credentials', async () => {
    const e = await start({ migrations: { exportMs: 5_000, archiveBytes: 10_000 } });
    const { id, location } = await exported(e);
    const url = new URL(location);
    expect(url.origin).toBe(e.storage.baseUrl);
    expect(url.origin).not.toBe(new URL(e.apiUrl).origin);

    const res = await rawGet(location);
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe('10000');
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.bytes.equals(e.migrations.archiveBytes(id)!)).toBe(true);
    expect(e.stats.storage.bytesServed).toBe(10_000);
  });

  it('serves byte ranges with 206 and answers 416 past the end', async () => {
    const e = await start({ migrations: { exportMs: 5_000, archiveBytes: 1_000 } });
    const { id, location } = await exported(e);
    const bytes = e.migrations.archiveBytes(id)!;
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

    const tail = await rawGet(location, { range: 'bytes=600-' });
    expect(tail.status).toBe(206);
    expect(tail.headers['content-range']).toBe('bytes 600-999/1000');
    expect(sha(tail.bytes)).toBe(sha(bytes.subarray(600)));

    const middle = await rawGet(location, { range: 'bytes=10-19' });
    expect(middle.headers['content-range']).toBe('bytes 10-19/1000');
    expect(middle.bytes.equals(bytes.subarray(10, 20))).toBe(true);

    const suffix = await rawGet(location, { range: 'bytes=-5' });
    expect(suffix.bytes.equals(bytes.subarray(995))).toBe(true);

    const past = await rawGet(location, { range: 'bytes=1000-' });
    expect(past.status).toBe(416);
    expect(past.headers['content-range']).toBe('bytes */1000');
    expect(e.stats.storage.rangeRequests).toBe(4);
  });

  it('rejects any request that carries Authorization, as pre-signed object-store URLs do', async () => {
    const e = await start({ migrations: { exportMs: 5_000 } });
    const { location } = await exported(e);
    const res = await rawGet(location, { authorization: 'Bearer leaked-token' });
    expect(res.status).toBe(400);
    expect(res.bytes.toString()).toContain('Only one auth mechanism allowed');
    expect(e.stats.storage.rejectedWithAuthorization).toBe(1);
  });

  it('answers 403 once the pre-signed URL expired, and a fresh 302 gives a working URL', async () => {
    const e = await start({ migrations: { exportMs: 5_000, archiveUrlTtlMs: 60_000 } });
    const { id, location } = await exported(e);
    em.now = START + 10_000 + 61_000;
    const expired = await rawGet(location);
    expect(expired.status).toBe(403);
    expect(expired.bytes.toString()).toContain('Request has expired');
    expect(e.stats.storage.expired).toBe(1);

    const again = await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${id}/archive`);
    expect((await rawGet(again.headers.location)).status).toBe(200);
  });

  it('answers 403 for a tampered signature', async () => {
    const e = await start({ migrations: { exportMs: 5_000 } });
    const { location } = await exported(e);
    const tampered = location.replace(/X-Signature=([0-9a-f])/, (_m, c: string) => `X-Signature=${c === '0' ? '1' : '0'}`);
    const res = await rawGet(tampered);
    expect(res.status).toBe(403);
    expect(res.bytes.toString()).toContain('SignatureDoesNotMatch');
  });

  it('deletes the archive: the API answers 404 and the storage object is gone', async () => {
    const e = await start({ migrations: { exportMs: 5_000 } });
    const { id, location } = await exported(e);
    expect((await call(e.apiUrl, 'DELETE', `/orgs/octo-org/migrations/${id}/archive`)).status).toBe(204);
    expect((await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${id}/archive`)).status).toBe(404);
    expect((await call(e.apiUrl, 'DELETE', `/orgs/octo-org/migrations/${id}/archive`)).status).toBe(404);
    expect((await rawGet(location)).status).toBe(404);
  });

  it('expires archives after the retention period', async () => {
    const e = await start({ migrations: { exportMs: 5_000, archiveRetentionMs: 3_600_000 } });
    const m = await createMigration(e, { repositories: ['alpha'] });
    em.now = START + 5_000 + 3_600_000;
    expect((await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${m.id}/archive`)).status).toBe(302);
    em.now += 1;
    expect((await call(e.apiUrl, 'GET', `/orgs/octo-org/migrations/${m.id}/archive`)).status).toBe(404);
  });
});

/** A GET to the storage origin returning the raw bytes. */
async function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string>; bytes: Buffer }> {
  const res = await request(url, { method: 'GET', headers });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers as Record<string, string>, bytes };
}
