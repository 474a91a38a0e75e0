/**
 * The status polls of GitHub's long processes answer conditional requests as GitHub does: an ETag that
 * changes whenever the body changes, 304 with no body for a matching `If-None-Match`, and a 304 that does not
 * count against the primary limit (`x-ratelimit-used`/`-remaining` unchanged) — the same rule as the feeds.
 */
import { describe, expect, it } from 'vitest';
import type { Emulator } from '@longhaul/emulator';
import { call, clockedEmulators, type RawResponse } from '../../helpers/emulator-http';

const START = Date.UTC(2026, 10, 24, 0, 0, 0);
const em = clockedEmulators(START);

/** A conditional GET at `atMs` after START. */
async function poll(e: Emulator, path: string, atMs: number, etag?: string): Promise<RawResponse> {
  em.now = START + atMs;
  return call(e.apiUrl, 'GET', path, etag ? { headers: { 'if-none-match': etag } } : {});
}

function expectNotCounted(first: RawResponse, again: RawResponse): void {
  expect(again.status).toBe(304);
  expect(again.text).toBe('');
  expect(again.headers.etag).toBe(first.headers.etag);
  expect(Number(again.headers['x-ratelimit-used'])).toBe(Number(first.headers['x-ratelimit-used']));
  expect(Number(again.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']));
}

describe('conditional status polls', () => {
  it('migration status: 304 while the export state is unchanged, a counted 200 with a new ETag once it changes', async () => {
    const e = await em.start({ migrations: { exportMs: 10_000, pendingFraction: 0.2 } });
    em.now = START;
    const created = await call(e.apiUrl, 'POST', '/orgs/octo-org/migrations', { body: { repositories: ['alpha'] } });
    const path = `/orgs/octo-org/migrations/${(created.json as { id: number }).id}?exclude=repositories`;
    const first = await poll(e, path, 1_000);
    expect(first.status).toBe(200);
    expect(first.headers.etag).toMatch(/^W\/"[0-9a-f]{40}"$/);
    expect((first.json as { state: string }).state).toBe('pending');
    const before = e.stats.notCounted;
    expectNotCounted(first, await poll(e, path, 1_500, first.headers.etag));
    expect(e.stats.notCounted).toBe(before + 1);

    const exporting = await poll(e, path, 5_000, first.headers.etag);
    expect(exporting.status).toBe(200);
    expect((exporting.json as { state: string }).state).toBe('exporting');
    expect(exporting.headers.etag).not.toBe(first.headers.etag);
    expect(Number(exporting.headers['x-ratelimit-used'])).toBe(Number(first.headers['x-ratelimit-used']) + 1);
    expectNotCounted(exporting, await poll(e, path, 9_999, exporting.headers.etag));
    const exported = await poll(e, path, 10_000, exporting.headers.etag);
    expect((exported.json as { state: string }).state).toBe('exported');
    // Without If-None-Match (or with a stale ETag) the answer is always a full, counted one.
    expect((await poll(e, path, 10_001)).status).toBe(200);
    expect((await poll(e, path, 10_002, 'W/"stale"')).status).toBe(200);
  });

  it('import status: 304 while the body is unchanged, 200 as soon as the progress moves', async () => {
    const e = await em.start({ imports: { detectingMs: 1_000, importingMs: 10_000, mappingMs: 2_000, pushingMs: 4_000 } });
    em.now = START;
    const path = '/repos/octo-org/alpha/import';
    expect((await call(e.apiUrl, 'PUT', path, { body: { vcs_url: 'https://svn.example.test/repos/happy' } })).status).toBe(201);
    const detecting = await poll(e, path, 100);
    expect((detecting.json as { status: string }).status).toBe('detecting');
    expectNotCounted(detecting, await poll(e, path, 900, detecting.headers.etag));
    const importing = await poll(e, path, 6_000, detecting.headers.etag);
    expect(importing.status).toBe(200);
    expect(importing.json).toMatchObject({ status: 'importing', percent: 50 });
    // The percentage moved: a new body, a new ETag.
    const later = await poll(e, path, 8_000, importing.headers.etag);
    expect(later.status).toBe(200);
    expect(later.headers.etag).not.toBe(importing.headers.etag);
  });
});
