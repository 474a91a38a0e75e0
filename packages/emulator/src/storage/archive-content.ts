/**
 * Deterministic archive content of any size, readable at any offset without holding it in memory, so the
 * storage origin can serve a 1 GiB archive (bench:download) and tests can check a download byte for byte.
 *
 * The content starts with a gzip member header (`1f 8b`, as a real `.tar.gz` does) and continues with a
 * pseudo-random 1 MiB pattern in which every 4 KiB carries its own offset: a resume that appends bytes at
 * the wrong offset, or keeps a prefix of another object, changes the SHA-256.
 */
import { createHash } from 'node:crypto';

/** Content produced on demand: `size` bytes, read by ranges. */
export interface GeneratedContent {
  size: number;
  /** Identifies the content (same seed and size ⇒ same bytes). */
  seed: string;
  /** Writes the bytes from `position` on into `target` (as many as fit, up to the end). Returns how many. */
  fill(target: Buffer, position: number): number;
  /** The bytes `[start, end)` in fresh chunks of at most 1 MiB. */
  chunks(start: number, end: number): Generator<Buffer>;
}

/** The pattern repeats every 1 MiB (its offset stamps do not). */
const PATTERN = 1024 * 1024;
const STAMP_EVERY = 4096;
const STAMP_BYTES = 6;
/** A gzip member header: magic, deflate, no flags, no mtime, no extra flags, OS unknown. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);

export function generatedArchive(seed: string, size: number): GeneratedContent {
  let pattern: Buffer | undefined;
  const base = () => {
    if (pattern) return pattern;
    pattern = Buffer.alloc(PATTERN);
    let digest = createHash('sha256').update(seed).digest();
    for (let offset = 0; offset < PATTERN; offset += digest.length) {
      digest.copy(pattern, offset);
      digest = createHash('sha256').update(digest).digest();
    }
    return pattern;
  };
  const stamp = Buffer.alloc(STAMP_BYTES);
  /** Copies `bytes` (which belong at object offset `at`) into the part of `target` that covers it. */
  const overlay = (target: Buffer, position: number, bytes: Buffer, at: number) => {
    const from = Math.max(at, position);
    const to = Math.min(at + bytes.length, position + target.length);
    if (from < to) bytes.copy(target, from - position, from - at, to - at);
  };
  const fill = (target: Buffer, position: number): number => {
    const length = Math.max(0, Math.min(target.length, size - position));
    const view = target.subarray(0, length);
    const pat = base();
    for (let done = 0; done < length; ) {
      const inPattern = (position + done) % PATTERN;
      done += pat.copy(view, done, inPattern, Math.min(PATTERN, inPattern + length - done));
    }
    for (let at = Math.floor(position / STAMP_EVERY) * STAMP_EVERY; at < position + length; at += STAMP_EVERY) {
      stamp.writeUIntLE(at, 0, STAMP_BYTES);
      overlay(view, position, stamp, at);
    }
    overlay(view, position, GZIP_HEADER, 0);
    return length;
  };
  return {
    size,
    seed,
    fill,
    *chunks(start: number, end: number) {
      for (let at = Math.max(0, start); at < Math.min(end, size); ) {
        const chunk = Buffer.allocUnsafe(Math.min(PATTERN, Math.min(end, size) - at));
        at += fill(chunk, at);
        yield chunk;
      }
    },
  };
}

/** All bytes of generated content (for small objects: tests' expected bytes). */
export function contentBytes(content: GeneratedContent): Buffer {
  return Buffer.concat([...content.chunks(0, content.size)]);
}
