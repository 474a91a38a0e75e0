/**
 * `uploadArchive`: one pass from a source stream into an object store, bounded, resumable on any host.
 *
 * - Bytes are cut into parts of `partBytes` and at most `partsInFlight` parts are being stored at once, so the
 *   process holds at most `partBytes × (partsInFlight + 1)` of the archive (the one more is the part being
 *   filled). Nothing is written to local disk.
 * - The whole archive's SHA-256 is computed on the way and recorded with the object; each part also carries
 *   its own SHA-256 where the store checks one (S3).
 * - The object appears under its final key only when complete (CompleteMultipartUpload, the GCS session's
 *   last chunk, Azure's commitBlockList). An object already there with the same size and SHA-256 is kept.
 * - Progress is a checkpoint (`UploadCheckpoint`, for heartbeat details): the upload id, how many bytes from
 *   byte 0 are stored, and the SHA-256 state after them. A later attempt, on any host, checks the store's own
 *   list of parts and re-reads the source only from the checkpoint (`openSource(offset)`); parts stored after
 *   it (stored before the last heartbeat arrived) are re-read for the hash but not sent again.
 *
 * Why the hash state travels in the checkpoint: the bytes already uploaded cannot be read back (S3 parts, a GCS
 * session and Azure's uncommitted blocks are invisible until complete), and re-reading them from the source
 * would defeat the resume. Node's OpenSSL hash cannot export its state, so the SHA-256 runs in hash-wasm, whose
 * state (a few hundred bytes) can be saved and loaded: it costs more CPU per GiB than OpenSSL (docs/org-migration.md
 * has the figures) and no extra byte on the wire. A digest of part digests would be cheaper but is not the
 * archive's SHA-256 that anyone can check with `sha256sum`.
 *
 * Failures: a store that fails transiently (connection refused, 5xx, 429) is retried with backoff for
 * `retryForMs`, then the error is thrown as it is (retryable: the next attempt resumes). A permanent failure
 * (`ApplicationFailure` non-retryable: access denied, missing bucket, wrong size) or a cancellation aborts the
 * upload so no parts are left behind.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import { BACKOFF, backoffMs } from '../../common/backoff';
import { WALL_CLOCK, type Clock, type Sleep } from '../../common/clock';
import { objectKey, objectUrl, parseDestination, type ArchiveDestination } from './destination';
import { HashThread } from './hash-thread';
import { storageFailure } from '../storage/failures';
import { isTransient, type StoredPart } from './stores/store';
import { storeFor } from './stores';
import { DEFAULT_PART_BYTES, DEFAULT_PARTS_IN_FLIGHT, MAX_PARTS, MIN_PART_BYTES, PART_MULTIPLE } from '../../common/object-store-limits';

/** @format milliseconds — how long a failing store is waited out before the attempt gives up (retryable). */
export const DEFAULT_RETRY_FOR_MS = 10 * 60_000;
/** @format milliseconds */
const BEAT_MS = 1_000;

/** Heartbeat details of an upload: enough for any host to continue it. Carries no secret. */
export interface UploadCheckpoint {
  /** The object (`s3://bucket/key`). */
  url: string;
  size: number;
  partBytes: number;
  /** The store's upload id (S3), session fingerprint (GCS) or block-id prefix (Azure). */
  upload: string;
  /** Bytes from byte 0 that are stored and hashed: a part boundary. */
  offset: number;
  /** SHA-256 state after `offset` bytes (hash-wasm `save()`, base64). */
  hashState: string;
  /** Bytes sent to the store by this upload so far, in all attempts (progress). */
  sentBytes: number;
  /** The archive's SHA-256, once the object is complete. */
  sha256?: string;
}

/** Where a source's bytes come from: opened at `offset`, it yields the archive's bytes from there to the end. */
export type OpenSource = (offset: number, signal: AbortSignal) => Promise<AsyncIterable<Uint8Array>>;

export interface ArchiveUploadOptions {
  /** `s3://BUCKET/PREFIX`, `gs://BUCKET/PREFIX` or `azblob://CONTAINER/PREFIX`. */
  destination: string;
  /** The object's name under the prefix. */
  name: string;
  /** @format bytes — the archive's size, as the source announced it. */
  size: number;
  contentType?: string;
  openSource: OpenSource;
  /** The last heartbeat details of an earlier attempt. */
  checkpoint?: UploadCheckpoint;
  heartbeat(checkpoint: UploadCheckpoint): void;
  signal?: AbortSignal;
  /** @format bytes */
  partBytes?: number;
  partsInFlight?: number;
  /** @format milliseconds */
  retryForMs?: number;
  /** What `retryForMs` is measured on (default: the wall clock), and the waits between tries (default: a timer). */
  clock?: Clock;
  sleep?: Sleep;
  /** The environment the store's SDK is configured from (default: the process's). */
  env?: NodeJS.ProcessEnv;
  /**
   * Told once, when the upload continues a checkpoint: where (`from`), and how many bytes past it the store already
   * holds (parts stored after the checkpoint was taken: read from the source again for the hash, not sent again).
   */
  resumed?(resume: { from: number; reRead: number }): void;
}

export interface ArchiveObject {
  url: string;
  bytes: number;
  sha256: string;
  /** S3 and Azure ETag, GCS generation. */
  version?: string;
  storeChecksum?: string;
  /** The object was already there, complete, with this size and SHA-256: nothing was uploaded. */
  alreadyThere: boolean;
  /** Bytes this call read from the source. */
  readBytes: number;
  /** Bytes this call sent to the store. */
  uploadedBytes: number;
  /** Bytes kept from an earlier attempt (0 when it started from byte 0). */
  resumedFrom: number;
}

/** Part size for `size`: the configured one, grown (in 256 KiB steps) so the archive fits in the parts allowed. */
export function partSizeFor(size: number, configured = DEFAULT_PART_BYTES): number {
  const atLeast = Math.max(configured, MIN_PART_BYTES, Math.ceil(size / MAX_PARTS));
  return Math.ceil(atLeast / PART_MULTIPLE) * PART_MULTIPLE;
}

function partCount(size: number, partBytes: number): number {
  return Math.max(1, Math.ceil(size / partBytes));
}

/** A real timer: the wait on the wall clock (`src/common/clock.ts` says why a test's wait may differ). */
export const WALL_SLEEP: Sleep = (ms, signal) => sleep(ms, undefined, { signal });

/** Calls `run` until it succeeds, a permanent failure, or `retryForMs` (on `clock`) of transient ones. */
async function retrying<T>(run: () => Promise<T>, retryForMs: number, signal: AbortSignal, clock: Clock, wait: Sleep): Promise<T> {
  const deadline = clock() + retryForMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (signal.aborted || !isTransient(err) || clock() >= deadline) throw err;
      await wait(backoffMs(BACKOFF.objectStoreRetry, attempt + 1), signal);
    }
  }
}

function toBase64(state: Uint8Array): string {
  return Buffer.from(state).toString('base64');
}

/**
 * Uploads the archive `options.openSource` yields; see the module comment. Heartbeats every second from the
 * start, also while the store is asked, waited out or an object already there is compared: with the latest
 * checkpoint, or before the first one with the earlier attempt's (or one that counts nothing stored).
 */
export async function uploadArchive(options: ArchiveUploadOptions): Promise<ArchiveObject> {
  const destination = parseDestination(options.destination);
  const key = objectKey(destination, options.name);
  const url = objectUrl(destination, key);
  let latest: UploadCheckpoint = options.checkpoint ?? { url, size: options.size, partBytes: 0, upload: '', offset: 0, hashState: '', sentBytes: 0 };
  const beat = setInterval(() => options.heartbeat(latest), BEAT_MS);
  try {
    return await upload({ ...options, heartbeat: (c) => options.heartbeat((latest = c)) }, key, url, destination);
  } finally {
    clearInterval(beat);
  }
}

async function upload(options: ArchiveUploadOptions, key: string, url: string, destination: ArchiveDestination): Promise<ArchiveObject> {
  const store = await storeFor(destination, options.env);
  const size = options.size;
  const contentType = options.contentType ?? 'application/gzip';
  const retryForMs = options.retryForMs ?? DEFAULT_RETRY_FOR_MS;
  const inner = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, inner.signal]) : inner.signal;
  const retry = <T>(run: () => Promise<T>) => retrying(run, retryForMs, signal, options.clock ?? WALL_CLOCK, options.sleep ?? WALL_SLEEP);
  // Already there, complete? Compare with what a finished attempt recorded; else hash the source to compare.
  const there = await retry(() => store.head(key));
  const previous = options.checkpoint?.url === url && options.checkpoint.size === size ? options.checkpoint : undefined;
  if (there && there.bytes === size && there.sha256) {
    let readBytes = 0;
    let sha256 = previous?.sha256;
    if (!sha256) {
      const check = new HashThread();
      try {
        for await (const chunk of await options.openSource(0, signal)) {
          await check.update(chunk);
          readBytes += chunk.length;
        }
        sha256 = await check.digest();
      } finally {
        await check.end();
      }
    }
    if (sha256 === there.sha256) {
      return { url, bytes: size, sha256, version: there.version, storeChecksum: there.storeChecksum, alreadyThere: true, readBytes, uploadedBytes: 0, resumedFrom: 0 };
    }
  }

  // Continue the checkpoint's upload when the store still has every part it counts; else start afresh.
  let partBytes = previous?.partBytes ?? partSizeFor(size, options.partBytes);
  let upload: string | undefined;
  let offset = 0;
  let stored = new Map<number, StoredPart>();
  let sentBefore = 0;
  let hashState: string | undefined;
  if (previous?.upload && !previous.sha256) {
    const parts = await retry(() => store.stored(key, previous.upload, previous.partBytes, size, previous.offset));
    const counted = previous.offset / previous.partBytes;
    if (parts && [...Array(counted).keys()].every((i) => parts.has(i + 1))) {
      upload = previous.upload;
      offset = previous.offset;
      stored = parts;
      sentBefore = previous.sentBytes;
      hashState = offset > 0 ? previous.hashState : undefined;
    }
  }
  if (!upload) {
    partBytes = partSizeFor(size, options.partBytes);
    await retry(() => store.abandon(key));
    upload = await retry(() => store.begin(key, contentType));
  }
  const uploadId = upload;
  const total = partCount(size, partBytes);
  if (previous?.upload && !previous.sha256) {
    let stale = offset;
    for (let n = offset / partBytes + 1; stale < size && stored.has(n); n++) stale += stored.get(n)!.bytes;
    options.resumed?.({ from: offset, reRead: stale - offset });
  }
  const inFlightLimit = store.concurrentParts ? Math.max(1, options.partsInFlight ?? DEFAULT_PARTS_IN_FLIGHT) : 1;

  const progress = new Progress(url, size, partBytes, uploadId, offset, hashState ?? '', sentBefore, (c) => options.heartbeat(c));
  const hash = new HashThread(hashState ? Buffer.from(hashState, 'base64') : undefined);
  let readBytes = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  // Part buffers, reused: one per part in flight and the one being filled. Shared with the hash thread (no copy).
  const free: Buffer[] = [];
  let allocated = 0;
  const take = async (): Promise<Buffer> => {
    while (!free.length && allocated > inFlightLimit) await Promise.race(inFlight);
    if (free.length) return free.pop()!;
    allocated++;
    return Buffer.from(new SharedArrayBuffer(partBytes));
  };
  try {
    options.heartbeat(progress.checkpoint());
    const emit = async (partNumber: number, buffer: Buffer, length: number) => {
      const body = buffer.subarray(0, length);
      // Hashed in order on the hash thread; stored once hashed (the part's SHA-256 goes with it).
      const hashed = hash.update(body, true);
      // Awaited by the part's job below, unless the upload fails before it starts (then the thread ends unheard).
      hashed.catch(() => undefined);
      while (inFlight.size >= inFlightLimit) await Promise.race(inFlight);
      if (failure) throw failure;
      signal.throwIfAborted();
      const job = hashed
        .then(async ({ state, part }) => {
          const kept = stored.get(partNumber);
          // A part stored after the checkpoint's heartbeat: the same bytes (the source is the same object) need
          // not be sent again when the store confirms its size and, where it keeps one, its SHA-256.
          const same = kept && kept.bytes === length && (kept.sha256 === undefined || kept.sha256 === part!.toString('base64')) && partNumber !== total;
          if (!same) await retry(() => store.put(key, uploadId, { partNumber, offset: (partNumber - 1) * partBytes, body, sha256: part!, last: partNumber === total, size }, signal));
          progress.stored(partNumber, same ? 0 : length, toBase64(state));
        })
        .then(
          () => void free.push(buffer),
          (err: unknown) => {
            free.push(buffer);
            failure ??= err;
            inner.abort(err);
          },
        );
      inFlight.add(job);
      void job.finally(() => inFlight.delete(job));
    };

    let partNumber = offset / partBytes + 1;
    let position = offset;
    let buffer = await take();
    let filled = 0;
    if (position < size) {
      for await (const chunk of await options.openSource(offset, signal)) {
        let from = 0;
        readBytes += chunk.length;
        while (from < chunk.length) {
          if (position + filled >= size) throw sizeMismatch(url, size, `more than ${size} bytes`);
          const length = Math.min(partBytes, size - position);
          const n = Math.min(length - filled, chunk.length - from);
          buffer.set(chunk.subarray(from, from + n), filled);
          filled += n;
          from += n;
          if (filled === length) {
            await emit(partNumber, buffer, length);
            position += filled;
            partNumber++;
            filled = 0;
            if (position < size) buffer = await take();
          }
        }
        if (failure) throw failure;
      }
    } else if (size === 0) {
      await emit(1, buffer, 0);
    }
    if (position + filled !== size) throw sizeMismatch(url, size, `${position + filled} bytes`);
    await Promise.all(inFlight);
    if (failure) throw failure;
    signal.throwIfAborted();
    const sha256 = await hash.digest();
    const object = await retry(() => store.complete(key, uploadId, total, sha256, size, contentType));
    progress.finished(sha256);
    options.heartbeat(progress.checkpoint());
    return {
      url,
      bytes: size,
      sha256,
      version: object.version,
      storeChecksum: object.storeChecksum,
      alreadyThere: false,
      readBytes,
      uploadedBytes: progress.sentBytes - sentBefore,
      resumedFrom: offset,
    };
  } catch (err) {
    // A cancellation is the cause whatever broke first (the source stream it destroyed, a part it interrupted).
    const cause = options.signal?.aborted ? options.signal.reason : signal.aborted && !(err instanceof ApplicationFailure) ? (inner.signal.reason ?? err) : err;
    // Permanent failures and cancellations leave nothing behind; a transient one keeps the parts for the next attempt.
    if (options.signal?.aborted || (cause instanceof ApplicationFailure && cause.nonRetryable)) {
      // Parts still being sent would land after the abort and be orphaned: let them end first. On a permanent
      // failure they run to their answer: one cut off mid-request can still be stored by the server after the
      // abort below (an uncommitted block in Azurite, once, under load). A cancellation cuts them off at once
      // (the workflow's abortArchiveUpload removes what lands late).
      if (!options.signal?.aborted) await Promise.allSettled(inFlight);
      inner.abort(cause);
      await Promise.allSettled(inFlight);
      await store.abort(key, uploadId).catch(() => undefined);
      await store.abandon(key).catch(() => undefined);
    }
    throw cause;
  } finally {
    await hash.end();
  }
}

/**
 * One call to the store `destination` names, before anything is sent: the bucket (container) exists and the
 * worker's credentials reach it (`PartStore.check`). Throws `ArchiveBucketNotFound`, `ArchiveStoreAccessDenied`,
 * `ArchiveStoreNotConfigured` (non-retryable), or the store's own transient error.
 */
export async function checkDestination(destination: string, env?: NodeJS.ProcessEnv): Promise<ArchiveDestination> {
  const parsed = parseDestination(destination);
  await (await storeFor(parsed, env)).check();
  return parsed;
}

/**
 * Drops every upload still open for the object `name` under `destination` (S3 multipart uploads, the GCS
 * session, Azure's uncommitted blocks): what a migration that failed or was cancelled mid-upload leaves, when
 * no attempt was alive to abort it. A complete object is not touched.
 */
export async function abortUploads(destination: string, name: string, env?: NodeJS.ProcessEnv): Promise<void> {
  const parsed = parseDestination(destination);
  await (await storeFor(parsed, env)).abandon(objectKey(parsed, name));
}

function sizeMismatch(url: string, size: number, got: string): ApplicationFailure {
  return storageFailure('objectStore', 'SizeMismatch', `uploading ${url}: the source announced ${size} bytes and delivered ${got}`);
}

/** The checkpoint as parts are hashed and stored: it advances over parts stored without a gap. */
class Progress {
  private readonly hashStates = new Map<number, string>();
  private readonly done = new Set<number>();
  private sha256?: string;

  constructor(
    private readonly url: string,
    private readonly size: number,
    private readonly partBytes: number,
    private readonly upload: string,
    private offset: number,
    private hashState: string,
    public sentBytes: number,
    /** Told each time the checkpoint advances (the heartbeat: a later attempt continues from there). */
    private readonly advanced: (checkpoint: UploadCheckpoint) => void,
  ) {}

  /** Part `partNumber` is stored (`sent` bytes sent for it now); `state`: the running hash's after it. */
  stored(partNumber: number, sent: number, state: string): void {
    this.hashStates.set(partNumber, state);
    this.sentBytes += sent;
    this.done.add(partNumber);
    const before = this.offset;
    for (let next = this.offset / this.partBytes + 1; this.done.has(next); next++) {
      this.done.delete(next);
      this.hashState = this.hashStates.get(next)!;
      this.hashStates.delete(next);
      this.offset = Math.min(this.size, next * this.partBytes);
    }
    if (this.offset > before) this.advanced(this.checkpoint());
  }

  finished(sha256: string): void {
    this.sha256 = sha256;
    this.offset = this.size;
  }

  checkpoint(): UploadCheckpoint {
    return { url: this.url, size: this.size, partBytes: this.partBytes, upload: this.upload, offset: this.offset, hashState: this.hashState, sentBytes: this.sentBytes, sha256: this.sha256 };
  }
}
