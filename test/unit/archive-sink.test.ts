/**
 * The archive sink on its own: a real storage body from a local server into a file whose writes the test
 * holds, so backpressure and the order of what reaches the disk are observable.
 */
import { createHash, type Hash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ArchiveSink, BodyRefused, BUFFERS, DiskWriteFailed, STAGE_BYTES } from '../../src/archive/sink';
import { BlockWriter } from '../../src/archive/writer';
import { storageGet } from '../../src/archive/storage/transport';

const MIB = 1024 * 1024;
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

async function bodyOf(payload: Buffer) {
  server = createServer((_req, res) => res.writeHead(200, { 'content-length': payload.length }).end(payload));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (await storageGet(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/o`), {})).body;
}

/** A file whose writes wait until the test releases them; it records what landed where. */
function heldFile() {
  const disk = Buffer.alloc(64 * MIB);
  const waiting: (() => void)[] = [];
  let held = true;
  let landed = 0;
  const file = {
    write: async (buffer: Buffer, offset: number, length: number, position: number) => {
      if (held) await new Promise<void>((r) => waiting.push(r));
      buffer.copy(disk, position, offset, offset + length);
      landed = Math.max(landed, position + length);
      return { bytesWritten: length, buffer };
    },
  } as unknown as FileHandle;
  return {
    file,
    disk: () => disk.subarray(0, landed),
    waiting: () => waiting.length,
    release: () => {
      held = false;
      for (const go of waiting.splice(0)) go();
    },
  };
}

/** Counts what the sink hashed: everything it accepted. */
function countingHash(): { hash: Hash; bytes: () => number } {
  const real = createHash('sha256');
  let bytes = 0;
  const hash = { update: (b: Buffer) => ((bytes += b.length), real.update(b)), digest: (e: 'hex') => real.digest(e) } as unknown as Hash;
  return { hash, bytes: () => bytes };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

describe('archive sink', () => {
  it('pauses the body while the disk holds its buffers, then writes every byte in order at its position', async () => {
    const payload = Buffer.alloc(40 * MIB);
    for (let i = 0; i < payload.length; i += 4096) payload.writeUInt32LE(i, i);
    payload[0] = 0x1f;
    payload[1] = 0x8b;
    const disk = heldFile();
    const counted = countingHash();
    const sink = new ArchiveSink(disk.file, 'x.part', counted.hash, { position: 0, expectGzip: true });
    const drained = sink.drain(await bodyOf(payload));
    // The first write waits, the others are queued behind it; the body is paused with the last buffer
    // taking what was left of that read, and stays paused.
    await until(() => disk.waiting() === 1 && counted.bytes() >= (BUFFERS - 1) * STAGE_BYTES);
    await new Promise((r) => setTimeout(r, 200));
    expect(counted.bytes()).toBeLessThanOrEqual(BUFFERS * STAGE_BYTES);
    expect(sink.position).toBe(0);
    disk.release();
    expect(await drained).toBeUndefined();
    expect(sink.position).toBe(payload.length);
    expect(disk.disk().equals(payload)).toBe(true);
    expect(counted.hash.digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
  });

  it('writes on the write thread exactly the bytes it hashes, at a resumed position', async () => {
    const payload = Buffer.alloc(9 * MIB + 12_345);
    for (let i = 0; i < payload.length; i += 4096) payload.writeUInt32LE(i, i);
    const dir = await mkdtemp(join(tmpdir(), 'archive-sink-'));
    const file = await open(join(dir, 'x.part'), 'w+');
    try {
      const hash = createHash('sha256');
      const sink = new ArchiveSink(file, 'x.part', hash, { position: 100, overlapByte: payload[0], expectGzip: true, writer: new BlockWriter() });
      expect(await sink.drain(await bodyOf(payload))).toBeUndefined();
      expect(sink.position).toBe(100 + payload.length - 1);
      expect((await readFile(join(dir, 'x.part'))).subarray(100).equals(payload.subarray(1))).toBe(true);
      expect(hash.digest('hex')).toBe(createHash('sha256').update(payload.subarray(1)).digest('hex'));
    } finally {
      await file.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a body without the gzip magic and a resumed body whose first byte differs, writing nothing', async () => {
    const disk = heldFile();
    disk.release();
    const notGzip = new ArchiveSink(disk.file, 'x.part', createHash('sha256'), { position: 0, expectGzip: true });
    const refused = await notGzip.drain(await bodyOf(Buffer.from('<html>AccessDenied</html>')));
    expect(refused).toBeInstanceOf(BodyRefused);
    expect((refused as BodyRefused).head.toString()).toContain('AccessDenied');
    const resumed = new ArchiveSink(disk.file, 'x.part', createHash('sha256'), { position: 10, overlapByte: 0x41, expectGzip: true });
    expect(((await resumed.drain(await bodyOf(Buffer.from('Bcontinued')))) as BodyRefused).reason).toBe('overlap-mismatch');
    expect(disk.disk().length).toBe(0);
  });

  it('reports a failed write as DiskWriteFailed and stops reading', async () => {
    const file = { write: async () => Promise.reject(new Error('ENOSPC: no space left on device')) } as unknown as FileHandle;
    const sink = new ArchiveSink(file, '/data/a.tar.gz.part', createHash('sha256'), { position: 0, expectGzip: false });
    const failure = await sink.drain(await bodyOf(Buffer.alloc(9 * MIB, 1)));
    expect(failure).toBeInstanceOf(DiskWriteFailed);
    expect(failure?.message).toBe('writing /data/a.tar.gz.part failed: ENOSPC: no space left on device');
    expect(sink.position).toBe(0);
  });

  it('returns only once every write queued on the write thread has settled, also after a failure', async () => {
    const payload = Buffer.alloc(3 * MIB, 7);
    let landFirst = () => {};
    let release = () => {};
    const first = new Promise<void>((r) => (landFirst = r));
    const held = new Promise<void>((r) => (release = r));
    let writes = 0;
    // The first block's write lands when the test says so, the later ones after that; its hash fails.
    const writer = { write: () => (++writes === 1 ? first : held), end: () => {} } as unknown as BlockWriter;
    const failingHash = {
      update: () => {
        throw new Error('hash broke');
      },
    };
    const file = { fd: 42 } as unknown as FileHandle;
    const sink = new ArchiveSink(file, 'x.part', failingHash, { position: 0, expectGzip: false, writer });
    let drained = false;
    const result = sink.drain(await bodyOf(payload)).then((failure) => ((drained = true), failure));
    // A second block's write is queued on the thread while the first is still being written.
    await until(() => writes >= 2);
    landFirst();
    await new Promise((r) => setTimeout(r, 100));
    expect(drained).toBe(false);
    release();
    expect((await result)?.message).toBe('hash broke');
  });

  it('completes short writes: every byte lands at its position when the file takes fewer than asked', async () => {
    const payload = Buffer.alloc(3 * MIB + 777);
    for (let i = 0; i < payload.length; i += 4096) payload.writeUInt32LE(i + 1, i);
    const disk = Buffer.alloc(payload.length);
    let calls = 0;
    // At most 50 000 bytes per call, as a regular file may (a full disk, a signal).
    const file = {
      write: async (buffer: Buffer, offset: number, length: number, position: number) => {
        calls++;
        const n = Math.min(length, 50_000);
        buffer.copy(disk, position, offset, offset + n);
        return { bytesWritten: n, buffer };
      },
    } as unknown as FileHandle;
    const sink = new ArchiveSink(file, 'x.part', createHash('sha256'), { position: 0, expectGzip: false });
    expect(await sink.drain(await bodyOf(payload))).toBeUndefined();
    expect(disk.equals(payload)).toBe(true);
    expect(sink.position).toBe(payload.length);
    expect(calls).toBeGreaterThanOrEqual(Math.ceil(payload.length / 50_000));
  });
});
