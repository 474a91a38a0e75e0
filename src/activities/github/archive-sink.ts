/**
 * Where the storage body goes: hashed inline and written at an explicit file position with `writev` of at
 * least 1 MiB. While one write is in the kernel, the chunks arriving meanwhile queue up (up to
 * `HIGH_WATER_MARK`) and go out with the next `writev`, so the per-chunk cost is a hash update and an array
 * push. `position` counts what is on disk.
 *
 * It also checks what it writes: the first two bytes of the object must be the gzip magic (when expected),
 * and a resumed body's first byte, which overlaps the last byte on disk, must equal it.
 */
import type { Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { isGzipMagic } from './archive-checks';

const HIGH_WATER_MARK = 4 * 1024 * 1024;
/** Bytes gathered before one `writev`. */
const MIN_WRITE = 1024 * 1024;

/** Why the sink refused the body (the download decides what failure that is). */
export class BodyRefused extends Error {
  constructor(
    readonly reason: 'not-gzip' | 'overlap-mismatch',
    /** The first bytes received, for the message. */
    readonly head: Buffer,
  ) {
    super(reason === 'not-gzip' ? 'the body does not start with the gzip magic bytes 1f 8b' : 'the resumed body does not continue the bytes on disk');
    this.name = 'BodyRefused';
  }
}

/** Writing to the `.part` file failed (not the network). */
export class DiskWriteFailed extends Error {
  constructor(path: string, cause: Error) {
    super(`writing ${path} failed: ${cause.message}`, { cause });
    this.name = 'DiskWriteFailed';
  }
}

export interface SinkOptions {
  /** File position of the first byte to write. */
  position: number;
  /** The byte already on disk that the body's first byte repeats (a resume asks one byte early). */
  overlapByte?: number;
  /** Check the gzip magic (when `position` is 0). */
  expectGzip: boolean;
}

export class ArchiveSink extends Writable {
  /** The next file position: everything before it is on disk (and hashed). */
  position: number;
  private overlapByte?: number;
  private held: Buffer[] = [];
  /** Until the first two bytes were checked. */
  private checkMagic: boolean;
  /** The write in the kernel: a broken body must not be resumed before it landed (the hash has its bytes). */
  private inflight: Promise<void> = Promise.resolve();
  /** Hashed, not yet written (less than MIN_WRITE). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly path: string,
    private readonly hash: Hash,
    opts: SinkOptions,
  ) {
    super({ highWaterMark: HIGH_WATER_MARK });
    this.position = opts.position;
    this.overlapByte = opts.overlapByte;
    this.checkMagic = opts.expectGzip && opts.position === 0;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.writeChunks([chunk], done);
  }

  override _writev(entries: { chunk: Buffer }[], done: (err?: Error | null) => void): void {
    this.writeChunks(
      entries.map((e) => e.chunk),
      done,
    );
  }

  private writeChunks(incoming: Buffer[], done: (err?: Error | null) => void): void {
    let chunks = incoming;
    if (this.overlapByte !== undefined) {
      const first = chunks.find((c) => c.length > 0);
      if (!first) return done();
      if (first[0] !== this.overlapByte) return done(new BodyRefused('overlap-mismatch', first.subarray(0, 200)));
      this.overlapByte = undefined;
      chunks = chunks.slice(chunks.indexOf(first));
      chunks[0] = first.subarray(1);
    }
    if (this.checkMagic) {
      // Hold bytes until two arrived: the magic may be split across chunks.
      this.held.push(...chunks);
      const head = Buffer.concat(this.held);
      if (head.length < 2) return done();
      if (!isGzipMagic(head)) return done(new BodyRefused('not-gzip', head.subarray(0, 200)));
      chunks = this.held;
      this.held = [];
      this.checkMagic = false;
    }
    for (const chunk of chunks) {
      this.hash.update(chunk);
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
    }
    // Small writes cost a promise and a syscall each: gather at least MIN_WRITE before writing.
    if (this.pendingBytes < MIN_WRITE) return done();
    this.flush(done);
  }

  private flush(done: (err?: Error | null) => void): void {
    const chunks = this.pending;
    const length = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    if (length === 0) return done();
    this.inflight = writeAll(this.file, chunks, this.position, length).then(
      () => {
        this.position += length;
        done();
      },
      (err: Error) => done(new DiskWriteFailed(this.path, err)),
    );
  }

  /** Resolves once no write is in flight (after the body ended or broke off). */
  settled(): Promise<void> {
    return this.inflight;
  }

  override _final(done: (err?: Error | null) => void): void {
    // A body shorter than the magic: refuse it rather than write one byte.
    if (this.held.length > 0) return done(new BodyRefused('not-gzip', Buffer.concat(this.held)));
    // What was gathered goes to disk, also when the body broke off: the resume keeps it.
    this.flush(done);
  }
}

/** `writev` until every byte is on disk (a regular file may take fewer bytes than asked). */
async function writeAll(file: FileHandle, chunks: Buffer[], position: number, length: number): Promise<void> {
  let written = (await file.writev(chunks, position)).bytesWritten;
  if (written === length) return;
  const rest = Buffer.concat(chunks).subarray(written);
  while (written < length) written += (await file.write(rest, written - (length - rest.length), length - written, position + written)).bytesWritten;
}
