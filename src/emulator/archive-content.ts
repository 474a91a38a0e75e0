/**
 * Deterministic archive content of any size, readable at any offset without holding it in memory, so the
 * storage origin can serve a 1 GiB archive (bench:download) and tests can check a download byte for byte.
 *
 * The content starts with a gzip member header (`1f 8b`, as a real `.tar.gz` does) and continues with a
 * pseudo-random 64 KiB pattern in which every 4 KiB carries its own offset: a resume that appends bytes at
 * the wrong offset, or keeps a prefix of another object, changes the SHA-256.
 */
import { createHash } from 'node:crypto';

/** Content produced on demand: `size` bytes, read by ranges. */
export interface GeneratedContent {
  size: number;
  /** Identifies the content (same seed and size ⇒ same bytes). */
  seed: string;
  /** The bytes `[start, end)` in chunks of at most 64 KiB. */
  chunks(start: number, end: number): Generator<Buffer>;
}

const BLOCK = 64 * 1024;
const STAMP_EVERY = 4096;
/** A gzip member header: magic, deflate, no flags, no mtime, no extra flags, OS unknown. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);

export function generatedArchive(seed: string, size: number): GeneratedContent {
  let pattern: Buffer | undefined;
  const base = () => {
    if (pattern) return pattern;
    pattern = Buffer.alloc(BLOCK);
    let digest = createHash('sha256').update(seed).digest();
    for (let offset = 0; offset < BLOCK; offset += digest.length) {
      digest.copy(pattern, offset);
      digest = createHash('sha256').update(digest).digest();
    }
    return pattern;
  };
  const block = (index: number): Buffer => {
    const out = Buffer.allocUnsafe(BLOCK);
    base().copy(out);
    for (let at = 0; at < BLOCK; at += STAMP_EVERY) out.writeUIntLE(index * BLOCK + at, at, 6);
    if (index === 0) GZIP_HEADER.copy(out);
    return out;
  };
  return {
    size,
    seed,
    *chunks(start: number, end: number) {
      const last = Math.min(end, size);
      for (let at = Math.max(0, start); at < last; ) {
        const index = Math.floor(at / BLOCK);
        const from = at - index * BLOCK;
        const to = Math.min(BLOCK, last - index * BLOCK);
        yield block(index).subarray(from, to);
        at = index * BLOCK + to;
      }
    },
  };
}

/** All bytes of generated content (for small objects: tests' expected bytes). */
export function contentBytes(content: GeneratedContent): Buffer {
  return Buffer.concat([...content.chunks(0, content.size)]);
}
