/**
 * The archive download against the emulator's API and storage origin, without Temporal around it (the
 * activity adds only the heartbeat and the cancellation signal): what is on disk at the end, what storage
 * served, and the typed failure of every case that cannot end well.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_STALLS, NOT_ARCHIVE_REASKS } from '../../src/archive/download';
import { archiveDownloader } from '../../src/processes/org-migration/activities/archive';
import { ArchiveFailure } from '../../src/archive/storage/checks';
import type { Emulator, EmulatorOptions } from '@longhaul/emulator';
import type { StorageFault } from '../../packages/emulator/src/storage/faults';
import { emulatorDeps, startTestEmulator, TEST_TOKEN } from '../helpers/emulator';
import { currentBootId } from '../../src/archive/boot-id';
import type { UploadProgress } from '../../src/archive/to-store';
import { failureOf } from '../helpers/failures';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const MIB = 1024 * 1024;

let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function setup(options: EmulatorOptions & { archiveBytes?: number } = {}) {
  emulator = await startTestEmulator({ ...options, migrations: { exportMs: 0, archiveBytes: options.archiveBytes ?? 4 * MIB, ...options.migrations } });
  const e = emulator;
  const res = await fetch(`${e.apiUrl}/orgs/octo-org/migrations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ repositories: ['alpha'] }),
  });
  const { id, guid } = (await res.json()) as { id: number; guid: string };
  const deps = await emulatorDeps(e);
  const download = archiveDownloader(deps);
  const input = { org: 'octo-org', migrationId: id, path: 'archives/a.tar.gz' };
  const path = join(deps.dataDir, input.path);
  const key = `migrations/${id}/${guid}.tar.gz`;
  await mkdir(dirname(path), { recursive: true });
  return {
    e,
    path,
    key,
    expected: () => e.storage.bytesOf(key)!,
    archiveCalls: () => e.stats.byRoute['GET /orgs/:org/migrations/:id/archive'] ?? 0,
    run: (signal?: AbortSignal, previous?: UploadProgress) => download(input, { heartbeat: () => undefined, signal, previous }),
    faults: (faults: StorageFault[]) => e.storage.setFaults(faults),
  };
}


async function onlyTheArchiveIsLeft(path: string) {
  const dir = join(path, '..');
  expect((await readdir(dir)).sort()).toEqual(['a.tar.gz']);
}

describe('archive download', () => {
  it('streams the archive to disk with its SHA-256 and leaves no .part, .part.json or lock behind', async () => {
    const s = await setup();
    const result = await s.run();
    expect(result).toMatchObject({ bytes: 4 * MIB, resumedFrom: 0, fetchedBytes: 4 * MIB, sha256: sha256(s.expected()) });
    expect(sha256(await readFile(s.path))).toBe(sha256(s.expected()));
    expect(s.e.stats.storage.bytesServed).toBe(4 * MIB);
    expect(s.e.stats.storage.rejectedWithAuthorization).toBe(0);
    await onlyTheArchiveIsLeft(s.path);
  });

  it('refuses a 200 text/html "AccessDenied" page after fresh URLs, naming what it received, and writes nothing as the archive', async () => {
    const s = await setup();
    const page = '<html><body><h1>AccessDenied</h1></body></html>';
    s.faults([{ kind: 'page', contentType: 'text/html', body: page }]);
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.NotAnArchive);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('content type text/html');
    expect(err.message).toContain('AccessDenied');
    expect(err.message).toContain(`${page.length} bytes`);
    expect(s.archiveCalls()).toBe(1 + NOT_ARCHIVE_REASKS);
    expect(existsSync(s.path)).toBe(false);
  });

  it('asks the API for a fresh URL after an error page and downloads the archive when storage recovers', async () => {
    const s = await setup();
    s.faults([{ kind: 'page', contentType: 'text/html', body: '<html>AccessDenied</html>', times: 1 }]);
    const result = await s.run();
    expect(result.sha256).toBe(sha256(s.expected()));
    expect(s.archiveCalls()).toBe(2);
  });

  it.each([
    ['application/json', '{"message":"Forbidden"}'],
    ['application/xml', '<?xml version="1.0"?><Error><Code>AccessDenied</Code></Error>'],
  ])('refuses a body of content type %s', async (contentType, body) => {
    const s = await setup();
    s.faults([{ kind: 'page', contentType, body }]);
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.NotAnArchive);
    expect(err.message).toContain(`content type ${contentType}`);
  });

  it('refuses the real bytes served under a wrong content type', async () => {
    const s = await setup();
    s.faults([{ kind: 'content-type', contentType: 'text/plain; charset=utf-8' }]);
    expect((await failureOf(s.run())).type).toBe(ArchiveFailure.NotAnArchive);
  });

  it('refuses an octet-stream body without the gzip magic bytes', async () => {
    const s = await setup();
    s.faults([{ kind: 'page', contentType: 'application/octet-stream', body: 'PK\u0003\u0004 not a gzip file' }]);
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.NotAnArchive);
    expect(err.message).toContain('gzip magic bytes 1f 8b');
    expect(existsSync(s.path)).toBe(false);
  });

  it('keeps the bytes of short answers and resumes: "announce 4 MiB, send 1 MiB and close" every time still ends with the archive', async () => {
    const s = await setup();
    s.faults([{ kind: 'short', sendBytes: MIB }]);
    const result = await s.run();
    expect(result.sha256).toBe(sha256(s.expected()));
    // Answers of 1 MiB each; every resume asks one byte early (the overlap check), so nothing else is re-read.
    expect(s.e.stats.storage.rangeRequests).toBe(4);
    expect(s.e.stats.storage.bytesServed).toBe(4 * MIB + s.e.stats.storage.rangeRequests);
  });

  it('reports a transfer that keeps breaking at the same byte as such, with what storage announced and sent', async () => {
    const s = await setup();
    s.faults([{ kind: 'short', untilOffset: MIB }]);
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.TransferBroken);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain(`storage announced ${4 * MIB} bytes, sent ${MIB} and closed`);
    expect(err.message).toContain(`${MAX_STALLS} times in a row`);
    expect(err.message).not.toMatch(/ignored the Range/i);
    expect(s.e.stats.storage.requests).toBe(1 + MAX_STALLS);
  });

  it('counts an answer that starts over at byte 0 and stops at the same byte as a break without progress (a store that ignores Range)', async () => {
    const s = await setup();
    s.faults([{ kind: 'ignore-range' }, { kind: 'short', untilOffset: MIB }]);
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.TransferBroken);
    expect(err.message).toContain(`never past byte ${MIB}, ${MAX_STALLS} times in a row; storage ignored the Range header`);
    expect(err.details?.[0]).toMatchObject({ total: 4 * MIB, highWater: MIB, lastOffset: MIB, rangeIgnored: true });
    // One answer that gained 1 MiB, then MAX_STALLS that re-sent it from byte 0.
    expect(s.e.stats.storage.requests).toBe(1 + MAX_STALLS);
    expect(s.e.storage.faults.fired('ignore-range')).toBe(MAX_STALLS);
  });

  it('keeps the high-water mark of an earlier attempt: re-fetching bytes that attempt had is no progress', async () => {
    const s = await setup();
    const id = s.e.migrations.all()[0].id;
    const etag = (await fetch(s.e.migrations.archiveUrl(id)!, { method: 'HEAD' })).headers.get('etag')!;
    // An earlier attempt reached 2 MiB, then started over and was interrupted at 512 KiB.
    await writeFile(`${s.path}.part`, s.expected().subarray(0, MIB / 2));
    await writeFile(`${s.path}.part.json`, JSON.stringify({ source: `octo-org/${id}`, validator: etag, total: 4 * MIB, reached: 2 * MIB, bootId: await currentBootId() }));
    s.faults([{ kind: 'ignore-range' }, { kind: 'short', untilOffset: MIB }]);
    const before = s.e.stats.storage.requests;
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.TransferBroken);
    expect(err.message).toContain(`never past byte ${2 * MIB}`);
    // Not one of its answers got past 2 MiB: every one was a break without progress.
    expect(s.e.stats.storage.requests - before).toBe(MAX_STALLS);
  });

  it.each([
    ['file:///etc/passwd', 'not file'],
    ['ftp://files.example.test/archive.tar.gz', 'not ftp'],
    ['data:application/gzip;base64,H4sIAAAAAAAAAw==', 'not data'],
  ])('fails at once, non-retryable, when the API redirects to %s', async (location, says) => {
    const s = await setup();
    s.faults([{ kind: 'presign', location }]);
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.LocationUnusable);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('only downloads archives over http(s)');
    expect(err.message).toContain(says);
    expect(s.e.stats.storage.requests).toBe(0);
  });

  it('fails at once, non-retryable, when the API redirects to something that is not a URL', async () => {
    const s = await setup();
    s.faults([{ kind: 'presign', location: 'http://[not-a-host' }]);
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.LocationUnusable);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('not a URL');
    expect(s.e.stats.storage.requests).toBe(0);
  });

  it('fails at once, non-retryable, when storage redirects in a circle', async () => {
    const s = await setup();
    s.faults([{ kind: 'redirect' }]);
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.RedirectLoop);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('redirects in a circle');
    // The signature never appears in a message.
    expect(err.message).not.toContain('X-Signature');
    expect(s.e.stats.storage.requests).toBe(1);
  });

  it('restarts cleanly from byte 0 when the object changed between two answers (If-Range no longer matches)', async () => {
    const s = await setup();
    const original = sha256(s.expected());
    s.faults([
      { kind: 'short', sendBytes: 2 * MIB, times: 1 },
      { kind: 'change', skip: 1, times: 1 },
    ]);
    const result = await s.run();
    expect(result.sha256).not.toBe(original);
    expect(result.sha256).toBe(sha256(s.expected()));
    expect(sha256(await readFile(s.path))).toBe(result.sha256);
    // The resume asked for a Range; the changed object answered 200 with all of its bytes.
    expect(s.e.stats.storage.bytesServed).toBe(2 * MIB + 4 * MIB);
  });

  it('resumes a download interrupted mid-stream from the .part length, re-reading almost nothing', async () => {
    const s = await setup({ storageBytesPerSecond: 4 * MIB });
    const abort = new AbortController();
    const first = s.run(abort.signal);
    const part = `${s.path}.part`;
    let partSize = 0;
    while (partSize < 1.3 * MIB) {
      await new Promise((r) => setTimeout(r, 10));
      partSize = await readFile(part).then((b) => b.length, () => 0);
    }
    abort.abort(new Error('worker stopped'));
    await expect(first).rejects.toThrow('worker stopped');
    s.e.storage.bytesPerSecond = 0;
    const result = await s.run();
    expect(result.resumedFrom).toBeGreaterThanOrEqual(partSize);
    expect(result.sha256).toBe(sha256(s.expected()));
    const reRead = s.e.stats.storage.bytesServed - 4 * MIB;
    expect(reRead).toBeLessThan(0.05 * 4 * MIB);
    await onlyTheArchiveIsLeft(s.path);
  });

  it('after a restart of the machine cuts the .part back to its synced checkpoint; a .part.json of 0.4.0 (no boot id) to the last heartbeat', async () => {
    const s = await setup({ archiveBytes: 2 * MIB });
    const id = s.e.migrations.all()[0].id;
    const etag = (await fetch(s.e.migrations.archiveUrl(id)!, { method: 'HEAD' })).headers.get('etag')!;
    // 1 MiB synced, then a tail a power loss can leave: blocks that were never written (zeros).
    const unwritten = Buffer.concat([s.expected().subarray(0, MIB), Buffer.alloc(MIB / 2)]);
    await writeFile(`${s.path}.part`, unwritten);
    await writeFile(`${s.path}.part.json`, JSON.stringify({ source: `octo-org/${id}`, validator: etag, total: 2 * MIB, synced: MIB, bootId: 'another-boot' }));
    let served = s.e.stats.storage.bytesServed;
    let result = await s.run();
    expect(result).toMatchObject({ resumedFrom: MIB, fetchedBytes: MIB, sha256: sha256(s.expected()) });
    expect(s.e.stats.storage.bytesServed - served).toBe(MIB + 1);

    // 0.4.0 recorded no boot id and no synced checkpoint: its last heartbeat's offset is the checkpoint.
    await writeFile(`${s.path}.part`, unwritten);
    await writeFile(`${s.path}.part.json`, JSON.stringify({ source: `octo-org/${id}`, validator: etag, total: 2 * MIB }));
    served = s.e.stats.storage.bytesServed;
    result = await s.run(undefined, { offset: MIB / 2, total: 2 * MIB });
    expect(result).toMatchObject({ resumedFrom: MIB / 2, fetchedBytes: 1.5 * MIB, sha256: sha256(s.expected()) });
    expect(s.e.stats.storage.bytesServed - served).toBe(1.5 * MIB + 1);
  });

  it('restarts a stale .part longer than the object', async () => {
    const s = await setup({ archiveBytes: MIB });
    await writeFile(`${s.path}.part`, Buffer.concat([s.expected(), Buffer.alloc(100)]));
    const etag = (await fetch(s.e.migrations.archiveUrl(s.e.migrations.all()[0].id)!, { method: 'HEAD' })).headers.get('etag')!;
    await writeFile(`${s.path}.part.json`, JSON.stringify({ source: `octo-org/${s.e.migrations.all()[0].id}`, validator: etag, total: MIB + 100, bootId: await currentBootId() }));
    const result = await s.run();
    expect(result).toMatchObject({ bytes: MIB, resumedFrom: 0, fetchedBytes: MIB, sha256: sha256(s.expected()) });
  });

  it('restarts a .part whose last byte does not match the object (corrupt), and one recorded for another version of it', async () => {
    const s = await setup({ archiveBytes: MIB });
    const id = s.e.migrations.all()[0].id;
    const prefix = Buffer.from(s.expected().subarray(0, MIB / 2));
    prefix[prefix.length - 1] ^= 0xff;
    await writeFile(`${s.path}.part`, prefix);
    const etag = (await fetch(s.e.migrations.archiveUrl(id)!, { method: 'HEAD' })).headers.get('etag')!;
    await writeFile(`${s.path}.part.json`, JSON.stringify({ source: `octo-org/${id}`, validator: etag, total: MIB, bootId: await currentBootId() }));
    expect((await s.run()).sha256).toBe(sha256(s.expected()));

    await writeFile(`${s.path}.part`, s.expected().subarray(0, MIB / 2));
    await writeFile(`${s.path}.part.json`, JSON.stringify({ source: `octo-org/${id}`, validator: '"an-older-version"', total: MIB, bootId: await currentBootId() }));
    const served = s.e.stats.storage.bytesServed;
    expect((await s.run()).sha256).toBe(sha256(s.expected()));
    // If-Range did not match: the whole object came back (200), nothing of the old prefix was kept.
    expect(s.e.stats.storage.bytesServed - served).toBe(MIB);
  });

  it('refuses to write while a live process holds the lock, and takes over the lock of a dead one', async () => {
    const s = await setup({ archiveBytes: MIB });
    await writeFile(`${s.path}.lock`, JSON.stringify({ host: hostname(), pid: process.pid, token: 'someone-else' }));
    const err = await failureOf(s.run());
    expect(err.type).toBe(ArchiveFailure.Busy);
    expect(err.nonRetryable).toBe(false);
    expect(s.e.stats.storage.requests).toBe(0);

    // A pid far above pid_max: no such process on this host.
    await writeFile(`${s.path}.lock`, JSON.stringify({ host: hostname(), pid: 2 ** 30, token: 'dead' }));
    expect((await s.run()).sha256).toBe(sha256(s.expected()));
    await onlyTheArchiveIsLeft(s.path);
  });
});
