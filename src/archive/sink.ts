/**
 * Where the storage body goes: copied into four reused 1 MiB staging buffers, each hashed (on this thread)
 * and written at its file position when it is full. With a `BlockWriter` the write thread writes it
 * (`writer.ts`, which says why), beside the socket reads; without one, `fs.write` on libuv's thread
 * pool. Either way the blocks land in file order, one after the other: what is on disk is always a prefix
 * of the object, which is what a resume trusts. The socket reads straight into the free tail of the filling
 * buffer (`readTarget`), so a chunk costs no copy (only the first bytes, checked before they land, are
 * copied), and nothing is allocated per chunk. A buffer is reused once it is both written and hashed. When
 * every staging buffer waits, the body is paused (backpressure): memory stays bounded at `BUFFERS` ×
 * `STAGE_BYTES`. `position` counts what is on disk and hashed.
 *
 * It also checks what it writes: the first two bytes of the object must be the gzip magic (when expected),
 * and a resumed body's first byte, which overlaps the last byte on disk, must equal it.
 */
import type { FileHandle } from 'node:fs/promises';
import type { StorageBody } from './storage/transport';
import { isGzipMagic } from './storage/checks';
import type { BlockWriter } from './writer';

/** What the sink and the `.part` re-hash feed, in order (node's `Hash`, or a test's stand-in). */
export interface BlockHash {
  /** Feeds `bytes` at once; throws when it cannot. */
  update(bytes: Buffer): unknown;
}

/**
 * One write and one hash block: large enough that handing a block over costs little per byte, small enough
 * that it is still in the CPU's cache when it is hashed and written after the socket wrote it (bench:download
 * measured 1 MiB faster than 2 and 4 MiB, and 512 KiB slower, when the hash ran on a thread of its own).
 */
export const STAGE_BYTES = 1024 * 1024;
/** Staging buffers before the body pauses: one filling, the others hashed, in the kernel or queued. */
export const BUFFERS = 4;
/**
 * @format milliseconds — a staging buffer that has not filled within this time is written as it is: on a
 * slow link the bytes reach the disk (and a resume after a SIGKILL) without waiting for a full buffer.
 */
const STAGE_MAX_AGE_MS = 250;

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
  /** Writes the blocks on the write thread (`writer.ts`); without it, `fs.write` from libuv's pool. */
  writer?: BlockWriter;
}

export class ArchiveSink {
  /** The next file position: everything before it is on disk (and hashed). */
  position: number;
  private overlapByte?: number;
  /** Until the first two bytes were checked: the magic may be split across chunks. */
  private checkMagic: boolean;
  private held = Buffer.alloc(0);
  private current?: Buffer;
  private filled = 0;
  /** File position of `current`'s first byte. */
  private staged: number;
  private free: Buffer[] = [];
  private allocated = 0;
  /** Buffers handed to the disk and not written yet. */
  private queued = 0;
  /** The writes in order: `position` advances as each lands. */
  private writes: Promise<void> = Promise.resolve();
  private failure?: Error;
  private paused = false;
  private body?: StorageBody;
  /** Whether a buffer went to the disk since the last age check. */
  private stagedRecently = false;
  private readonly writer?: BlockWriter;

  constructor(
    private readonly file: FileHandle,
    private readonly path: string,
    private readonly hash: BlockHash,
    opts: SinkOptions,
  ) {
    this.position = opts.position;
    this.staged = opts.position;
    this.overlapByte = opts.overlapByte;
    this.checkMagic = opts.expectGzip && opts.position === 0;
    this.writer = opts.writer;
  }

  /**
   * Reads `body` to its end and resolves, once every byte received is on disk (also when the body broke
   * off: the resume keeps them), with what went wrong: `BodyRefused`, `DiskWriteFailed`, the break's error,
   * or undefined.
   */
  async drain(body: StorageBody): Promise<Error | undefined> {
    this.body = body;
    const aging = setInterval(() => {
      if (!this.stagedRecently && !this.failure) this.stage();
      this.stagedRecently = false;
    }, STAGE_MAX_AGE_MS);
    const broken = await body.deliver((chunk) => this.accept(chunk), () => this.readTarget()).finally(() => clearInterval(aging));
    // A body shorter than the magic: refuse it rather than write one byte.
    if (!this.failure && this.checkMagic && this.held.length > 0) this.failure = new BodyRefused('not-gzip', this.held);
    if (!this.failure) this.stage();
    await this.writes;
    return this.failure ?? broken;
  }

  /** One chunk (a view valid only during the call); false asks the body to pause. */
  private accept(chunk: Buffer): boolean {
    if (this.failure) return false;
    let bytes = chunk;
    if (this.overlapByte !== undefined) {
      if (bytes.length === 0) return true;
      if (bytes[0] !== this.overlapByte) return this.fail(new BodyRefused('overlap-mismatch', Buffer.from(bytes.subarray(0, 200))));
      this.overlapByte = undefined;
      bytes = bytes.subarray(1);
    }
    if (this.checkMagic) {
      this.held = Buffer.concat([this.held, bytes]);
      if (this.held.length < 2) return true;
      if (!isGzipMagic(this.held)) return this.fail(new BodyRefused('not-gzip', this.held.subarray(0, 200)));
      this.checkMagic = false;
      bytes = this.held;
      this.held = Buffer.alloc(0);
    }
    if (this.current && bytes.buffer === this.current.buffer && bytes.byteOffset === this.current.byteOffset + this.filled) {
      // The socket read straight into the free tail of `current` (`readTarget`): nothing to copy.
      this.filled += bytes.length;
      if (this.filled === this.current.length) this.stage();
      bytes = bytes.subarray(bytes.length);
    }
    for (let at = 0; at < bytes.length; ) {
      this.current ??= this.take();
      const copied = bytes.copy(this.current, this.filled, at);
      at += copied;
      this.filled += copied;
      if (this.filled === this.current.length) this.stage();
    }
    // Paused while all but the filling buffer wait for the disk; the completion of a write resumes it.
    this.paused = this.queued >= BUFFERS - 1;
    return !this.paused;
  }

  /**
   * Lends the free tail of the filling buffer to the next socket read. Not while the magic or the overlap
   * byte is still to be checked (those bytes are looked at before they may land), nor when a new buffer
   * would be needed and none is free (the transport's own buffer takes that read, copied as before). A
   * tail whose buffer was staged meanwhile (the age flush) is never read again: that chunk is copied.
   */
  private readTarget(): Buffer | undefined {
    if (this.failure || this.checkMagic || this.overlapByte !== undefined) return undefined;
    if (!this.current && this.free.length === 0 && this.allocated >= BUFFERS) return undefined;
    this.current ??= this.take();
    return this.current.subarray(this.filled);
  }

  private take(): Buffer {
    // Never more than BUFFERS: the body pauses once BUFFERS - 1 are queued, and what is left of that read
    // goes into the last one.
    // Shared memory: the write thread reads the buffer where it is, without a copy.
    const free = this.free.pop();
    if (free) return free;
    this.allocated++;
    return Buffer.from(new SharedArrayBuffer(STAGE_BYTES));
  }

  /** Queues the filled part of `current` for the disk. */
  private stage(): void {
    const buffer = this.current;
    const length = this.filled;
    if (!buffer || length === 0) return;
    const at = this.staged;
    this.staged += length;
    this.stagedRecently = true;
    this.queued++;
    this.current = undefined;
    this.filled = 0;
    const bytes = buffer.subarray(0, length);
    // On the write thread (when there is one) the write is queued at once, behind the blocks before it, and
    // runs while the block is hashed here, in file order. The buffer is reused once it is written.
    const fd = this.writer && typeof this.file.fd === 'number' ? this.file.fd : undefined;
    const onThread = fd !== undefined ? settled(this.writer!.write(bytes, fd, at)) : undefined;
    const hashFailed = hashed(this.hash, bytes);
    this.writes = this.writes.then(async () => {
      // Failed already: this block is not used, but a write already queued on the thread is waited for, so
      // that none is still running when the download closes the file (its fd number could be reused).
      if (this.failure) return void (await onThread);
      try {
        if (onThread) {
          const writeFailed = await onThread;
          if (writeFailed) return void this.fail(new DiskWriteFailed(this.path, writeFailed));
        } else {
          await writeAll(this.file, buffer, length, at);
        }
        // A failed hash takes effect in file order, as a failed write does.
        if (hashFailed) return void this.fail(hashFailed);
        this.position = at + length;
        this.free.push(buffer);
        this.queued--;
        if (this.paused && this.queued < BUFFERS - 1) {
          this.paused = false;
          this.body?.resume();
        }
      } catch (err) {
        this.fail(new DiskWriteFailed(this.path, err as Error));
      }
    });
  }

  private fail(err: Error): false {
    this.failure ??= err;
    this.body?.destroy(err);
    return false;
  }
}

/** Feeds `bytes` to `hash`: undefined, or the error it threw. */
function hashed(hash: BlockHash, bytes: Buffer): Error | undefined {
  try {
    hash.update(bytes);
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/** Undefined once `result` settled well, else its error. */
async function settled(result: Promise<void>): Promise<Error | undefined> {
  try {
    await result;
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/** Writes `buffer[0, length)` at `position` until every byte is on disk (a regular file may take fewer). */
async function writeAll(file: FileHandle, buffer: Buffer, length: number, position: number): Promise<void> {
  for (let written = 0; written < length; ) written += (await file.write(buffer, written, length - written, position + written)).bytesWritten;
}
