/**
 * The emulator's storage origin as an object store: validators (`ETag`, `Last-Modified`), `Range` with
 * `If-Range` per RFC 9110 §13.1.5, generated content readable at any offset, and the faults that make it
 * misbehave on purpose.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startEmulator, type Emulator } from '@longhaul/emulator';
import { contentBytes, generatedArchive } from '../../../packages/emulator/src/storage/archive-content';
import { startReverseProxy, type ReverseProxy } from '../../helpers/reverse-proxy';

let emulator: Emulator | undefined;
let proxy: ReverseProxy | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  await proxy?.close();
  proxy = undefined;
});

const SIZE = 3 * 1024 * 1024 + 123;

async function setup() {
  let now = Date.parse('2026-11-23T09:00:00Z');
  emulator = await startEmulator({ clock: () => now });
  emulator.storage.put('a.tar.gz', { bytes: generatedArchive('seed', SIZE), contentType: 'application/gzip' });
  const e = emulator;
  return { e, url: () => e.storage.presign('a.tar.gz', 60_000), tick: (ms: number) => (now += ms) };
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { headers });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers as Record<string, string>, bytes };
}

describe('storage origin', () => {
  it('hands out pre-signed archive links under its configured public URL, which work through what serves that address', async () => {
    // A front end that serves the object store under `/archives/…` of its own host.
    const front = (proxy = await startReverseProxy(() => emulator!.storage.baseUrl, '/archives'));
    emulator = await startEmulator({ storagePublicUrl: `${front.url}/`, migrations: { exportMs: 0, archiveBytes: 70_000 } });
    const auth = { authorization: 'Bearer t' };
    const created = await request(`${emulator.apiUrl}/orgs/octo-org/migrations`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ repositories: ['alpha'] }) });
    const { id } = (await created.body.json()) as { id: number };
    const archive = await request(`${emulator.apiUrl}/orgs/octo-org/migrations/${id}/archive`, { headers: auth });
    await archive.body.dump();
    expect(archive.statusCode).toBe(302);
    const link = archive.headers.location as string;
    // The configured address (its trailing slash dropped), not the one the origin listens on.
    expect(link.startsWith(`${front.url}/`)).toBe(true);
    expect(emulator.storage.publicUrl).toBe(front.url);
    expect(emulator.storage.baseUrl).not.toBe(front.url);
    const download = await get(link);
    expect(download.status).toBe(200);
    expect(download.bytes.length).toBe(70_000);
    expect(download.bytes.equals(emulator.storage.bytesOf(decodeURIComponent(new URL(link).pathname.replace(/^\/archives\//, '')))!)).toBe(true);
    expect(front.forwarded).toHaveLength(1);
    expect(emulator.stats.storage.requests).toBe(1);
  });

  it('serves generated content that starts with the gzip magic and is the same at every offset', async () => {
    const { url } = await setup();
    const all = await get(url());
    expect(all.status).toBe(200);
    expect(all.bytes.length).toBe(SIZE);
    expect(all.bytes.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(all.bytes.equals(contentBytes(generatedArchive('seed', SIZE)))).toBe(true);
    const part = await get(url(), { range: 'bytes=1048570-' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 1048570-${SIZE - 1}/${SIZE}`);
    expect(part.bytes.equals(all.bytes.subarray(1048570))).toBe(true);
  });

  it('honours Range only while If-Range names the current ETag or Last-Modified, and answers 200 with everything otherwise', async () => {
    const { url } = await setup();
    const head = await get(url());
    const { etag, 'last-modified': lastModified } = head.headers;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    expect(lastModified).toBe('Mon, 23 Nov 2026 09:00:00 GMT');
    expect((await get(url(), { range: 'bytes=100-', 'if-range': etag })).status).toBe(206);
    expect((await get(url(), { range: 'bytes=100-', 'if-range': lastModified })).status).toBe(206);
    const stale = await get(url(), { range: 'bytes=100-', 'if-range': '"another"' });
    expect(stale.status).toBe(200);
    expect(stale.bytes.length).toBe(SIZE);
    expect((await get(url(), { range: 'bytes=100-', 'if-range': `W/${etag}` })).status).toBe(200);
    expect((await get(url(), { range: 'bytes=100-', 'if-range': 'Mon, 23 Nov 2026 08:59:59 GMT' })).status).toBe(200);
  });

  it('a changed object gets a new ETag and a later Last-Modified, so an old If-Range no longer matches', async () => {
    const { e, url } = await setup();
    const before = await get(url());
    e.storage.setFaults([{ kind: 'change', times: 1 }]);
    const after = await get(url(), { range: 'bytes=10-', 'if-range': before.headers.etag });
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(Date.parse(after.headers['last-modified'])).toBeGreaterThan(Date.parse(before.headers['last-modified']));
    expect(after.bytes.equals(before.bytes)).toBe(false);
    expect(after.bytes.equals(e.storage.bytesOf('a.tar.gz')!)).toBe(true);
  });

  it('answers 416 with the total for a range past the end', async () => {
    const { url } = await setup();
    const res = await get(url(), { range: `bytes=${SIZE}-` });
    expect(res.status).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${SIZE}`);
  });

  it('misbehaves on purpose: error pages, other content types, redirects, pre-signed URLs it was told to hand out', async () => {
    const { e, url } = await setup();
    e.storage.setFaults([{ kind: 'page', contentType: 'text/html', body: '<html>AccessDenied</html>', times: 1 }]);
    const page = await get(url());
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html');
    expect(page.bytes.toString()).toBe('<html>AccessDenied</html>');
    expect((await get(url())).bytes.length).toBe(SIZE);

    e.storage.setFaults([{ kind: 'content-type', contentType: 'application/json' }]);
    expect((await get(url())).headers['content-type']).toBe('application/json');

    e.storage.setFaults([{ kind: 'redirect' }]);
    const target = url();
    const loop = await get(target);
    expect(loop.status).toBe(302);
    expect(loop.headers.location).toBe(target);

    e.storage.setFaults([{ kind: 'presign', location: 'file:///etc/passwd' }]);
    expect(url()).toBe('file:///etc/passwd');
  });

  it('a short answer announces the full length and closes the connection after the bytes it was told to send', async () => {
    const { e, url } = await setup();
    e.storage.setFaults([{ kind: 'short', sendBytes: 1000 }]);
    const res = await request(url());
    expect(res.headers['content-length']).toBe(String(SIZE));
    let received = 0;
    await expect(
      (async () => {
        for await (const chunk of res.body) received += (chunk as Buffer).length;
      })(),
    ).rejects.toThrow();
    expect(received).toBe(1000);
    expect(e.stats.storage.bytesServed).toBe(1000);
  });

  it('ignore-range answers 200 with the whole object from byte 0 to a Range it was told to ignore, and counts only ranged requests', async () => {
    const { e, url } = await setup();
    e.storage.setFaults([{ kind: 'ignore-range', skip: 1, times: 1 }]);
    const plain = await get(url());
    const etag = plain.headers.etag;
    expect((await get(url(), { range: 'bytes=100-', 'if-range': etag })).status).toBe(206); // skipped
    const ignored = await get(url(), { range: 'bytes=100-', 'if-range': etag });
    expect(ignored.status).toBe(200);
    expect(ignored.headers['content-range']).toBeUndefined();
    expect(ignored.bytes.equals(plain.bytes)).toBe(true);
    expect((await get(url(), { range: 'bytes=100-', 'if-range': etag })).status).toBe(206); // spent
    expect(e.storage.faults.fired('ignore-range')).toBe(1);
  });
});
