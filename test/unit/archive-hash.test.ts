/**
 * The SHA-256 thread: digests equal node's own, whatever memory the bytes live in, with several hashes at
 * once on the one thread.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashOnThread, InlineHash, ThreadHash } from '../../src/activities/github/archive-hash';

const sha256 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest('hex');

function pattern(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}

describe.each([
  ['ThreadHash', () => new ThreadHash()],
  ['InlineHash', () => new InlineHash()],
])('%s', (_name, make) => {
  it('hashes shared and ordinary buffers in the order given, two hashes interleaved', async () => {
    const shared = Buffer.from(new SharedArrayBuffer(3 * 1024 * 1024));
    pattern(shared.length, 7).copy(shared);
    const plain = pattern(1_000_003, 11);
    const a = make();
    const b = make();
    // Views into the middle of both kinds of memory: only the view's bytes count.
    await Promise.all([a.update(shared.subarray(5, 2 * 1024 * 1024)), b.update(plain.subarray(3))]);
    await Promise.all([a.update(plain), b.update(shared)]);
    await a.update(Buffer.alloc(0));
    expect(await a.digest()).toBe(sha256(shared.subarray(5, 2 * 1024 * 1024), plain));
    expect(await b.digest()).toBe(sha256(plain.subarray(3), shared));
  });
});

describe('ThreadHash', () => {
  it('copies an ordinary buffer when it is handed over, so the caller may reuse it at once', async () => {
    const buffer = pattern(64 * 1024, 3);
    const expected = sha256(buffer);
    const hash = new ThreadHash();
    const done = hash.update(buffer);
    buffer.fill(0);
    await done;
    expect(await hash.digest()).toBe(expected);
  });

  it('starts over after a digest and forgets a discarded hash', async () => {
    const hash = new ThreadHash();
    await hash.update(Buffer.from('abc'));
    expect(await hash.digest()).toBe(sha256(Buffer.from('abc')));
    expect(await hash.digest()).toBe(sha256());
    const dropped = new ThreadHash();
    await dropped.update(Buffer.from('xyz'));
    dropped.discard();
    expect(await dropped.digest()).toBe(sha256());
  });
});

describe('hashOnThread', () => {
  it('hashes beside the socket reads only when a second core can run the thread', () => {
    expect(hashOnThread(1)).toBe(false);
    expect(hashOnThread(2)).toBe(true);
    expect(hashOnThread(64)).toBe(true);
  });
});
