/**
 * The archive's write thread: each block lands at its position, in pieces, after the blocks before it; a
 * failed block stops that download's later ones (the file stays a prefix); an idle thread lets the process end.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { BlockWriteFailed, BlockWriter, WRITE_PIECE_BYTES, writeOnThread } from '../../src/archive/writer';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function tempPath(name: string): Promise<string> {
  dir ??= await mkdtemp(join(tmpdir(), 'archive-writer-'));
  return join(dir, name);
}

function sharedBlock(length: number, seed: number): Buffer {
  const bytes = Buffer.from(new SharedArrayBuffer(length));
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}

describe('BlockWriter', () => {
  it('writes each block at its position, blocks of any size and ordinary memory too, queued without waiting', async () => {
    const path = await tempPath('x.part');
    const file = await open(path, 'w+');
    try {
      // Sizes that are not multiples of the piece size; the first block at a resumed position.
      const blocks = [sharedBlock(3 * WRITE_PIECE_BYTES + 5, 1), sharedBlock(1024 * 1024, 2), Buffer.from('ordinary memory')];
      const writer = new BlockWriter();
      let at = 100;
      const writes = blocks.map((b) => {
        const done = writer.write(b, file.fd, at);
        at += b.length;
        return done;
      });
      await Promise.all(writes);
      writer.end();
      const onDisk = await readFile(path);
      expect(onDisk.length).toBe(at);
      expect(onDisk.subarray(100).equals(Buffer.concat(blocks))).toBe(true);
    } finally {
      await file.close();
    }
  });

  it('fails a write with the file\u2019s error and writes no later block of that download; other writers go on', async () => {
    const path = await tempPath('ro');
    await (await open(path, 'w+')).close();
    const readOnly = await open(path, 'r');
    const other = await open(await tempPath('other'), 'w+');
    try {
      const writer = new BlockWriter();
      const block = sharedBlock(1024, 5);
      const failed = await writer.write(block, readOnly.fd, 0).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(BlockWriteFailed);
      expect((failed as BlockWriteFailed).code).toBe('EBADF');
      // A later block of the same download is refused unwritten, even to a file that would take it.
      const later = await writer.write(block, other.fd, 0).catch((err: unknown) => err);
      expect((later as Error).message).toBe('an earlier block could not be written');
      expect((await other.stat()).size).toBe(0);
      const fine = new BlockWriter();
      await fine.write(block, other.fd, 0);
      expect((await other.stat()).size).toBe(1024);
      writer.end();
      fine.end();
    } finally {
      await readOnly.close();
      await other.close();
    }
  });

  it('leaves no thread keeping the process alive once the writes are done, or when none was made', async () => {
    const path = await tempPath('alive.part');
    const script = [
      `const { BlockWriter } = require(${JSON.stringify(resolve(__dirname, '../../src/archive/writer.ts'))});`,
      `const fd = require('node:fs').openSync(${JSON.stringify(path)}, 'w+');`,
      'const used = new BlockWriter(); new BlockWriter();',
      'used.write(Buffer.from("abc"), fd, 0).then(() => console.log("written"));',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script], { timeout: 30_000 });
    expect(stdout.trim()).toBe('written');
    expect((await readFile(path)).toString()).toBe('abc');
  });
});

describe('writeOnThread', () => {
  it('writes beside the socket reads only when a second core can run the thread', () => {
    expect(writeOnThread(1)).toBe(false);
    expect(writeOnThread(2)).toBe(true);
    expect(writeOnThread(64)).toBe(true);
  });
});
