/** The archive's SHA-256: digests equal node's own, whatever memory the bytes live in. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { archiveHash } from '../../src/activities/github/archive-hash';

const sha256 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest('hex');

function pattern(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}

describe('archiveHash', () => {
  it('hashes shared and ordinary buffers in the order given, two hashes interleaved', async () => {
    const shared = Buffer.from(new SharedArrayBuffer(3 * 1024 * 1024));
    pattern(shared.length, 7).copy(shared);
    const plain = pattern(1_000_003, 11);
    const a = archiveHash();
    const b = archiveHash();
    // Views into the middle of both kinds of memory: only the view's bytes count.
    await Promise.all([a.update(shared.subarray(5, 2 * 1024 * 1024)), b.update(plain.subarray(3))]);
    await Promise.all([a.update(plain), b.update(shared)]);
    await a.update(Buffer.alloc(0));
    expect(await a.digest()).toBe(sha256(shared.subarray(5, 2 * 1024 * 1024), plain));
    expect(await b.digest()).toBe(sha256(plain.subarray(3), shared));
  });
});
