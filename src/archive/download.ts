/**
 * The archive module's download (the migration's `downloadArchive` activity asks the API for the URL and hands
 * the rest here): stream the pre-signed storage URL to disk at wire speed,
 * hashing inline (`sink.ts`), resumable from what is on disk (`part.ts`), and verified before
 * it is reported (`storage/checks.ts`):
 *
 * - A retry resumes at the `.part` file's length when the machine has not restarted since the bytes were written
 *   (the kernel's boot id in `.part.json`), else at the last synced checkpoint (the `.part` is synced to disk every
 *   second, and `.part.json` records how far): `part.ts`. The SHA-256 is rebuilt by reading the kept bytes
 *   back from the disk, and the transfer asks one byte early (`Range: bytes=N-1-`) with `If-Range`: the
 *   overlapping byte must match, and a changed object answers 200 with the new bytes, which replace the old ones
 *   from byte 0. What the resume kept, read back and fetches again is in the heartbeat details (`resume`).
 * - A body that is not the archive (an HTML "AccessDenied" page, JSON, no gzip magic) is never written as
 *   it: the API is asked for a fresh URL `NOT_ARCHIVE_REASKS` times, then it fails non-retryable naming
 *   what was received. Unusable redirect targets and redirect loops fail at once, non-retryable.
 * - A transfer that breaks off keeps its bytes and resumes at once. Progress is bytes past the high-water
 *   mark (the most of this object any answer brought, kept in `.part.json` across attempts), whether storage
 *   resumed or started over: `MAX_STALLS` breaks in a row that never get past it fail non-retryable, naming
 *   the URL (without its signature) and what storage announced and sent. A store that ignores `Range` is
 *   named in the log once per download attempt.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { pathInDataDir } from '../activities/data-dir';
import { ApplicationFailure } from '@temporalio/common';
import { BACKOFF, backoffMs } from '../common/backoff';
import type { ArchiveUploadSettings } from '../config';
import { discard, readHead, type StorageResponse } from './storage/transport';
import { isRedirect, MAX_REDIRECTS } from '../http/redirects';
import type { OutboundContext, Resolver } from '../http/outbound-policy';
import { StorageClient, type Reasks } from './storage/client';
import { storageFailure } from './storage/failures';
import { announcedTotal, checkLocation, contentTypeProblem, excerpt, expectsGzip, isGzipMagic, rangeStart, validatorOf } from './storage/checks';
import { DownloadLock, PartFile } from './part';
import { longhaulMetrics } from '../telemetry/metrics';
import { activityLog } from '../telemetry/log';
import { ArchiveSink, BodyRefused, DiskWriteFailed } from './sink';
import { BlockWriter, writeOnThread } from './writer';
import { archiveDestination, streamArchiveTo, type UploadProgress } from './to-store';
import { currentBootId } from './boot-id';
import type { ResumeReport } from './progress';
import type { Clock, Sleep } from '../common/clock';

/** One archive to fetch from storage: what the migration's activity hands the module. */
export interface StorageDownloadInput {
  /** What the archive is, for the `.part` file's record (`<org>/<migration id>`): a `.part` of another is not resumed. */
  source: string;
  /** Destination file; relative paths resolve under the worker's data directory. */
  path: string;
  /**
   * An object-store destination (`s3://…`, `gs://…`, `azblob://…`): the archive streams there, named as `path`'s
   * file name, instead of to `path`. Absent: the worker's `LONGHAUL_ARCHIVE_TO`, else the local file.
   */
  archiveTo?: string;
  /** A fresh pre-signed URL of the archive, asked of the API (the process's call: the module keeps the bytes). */
  askApi(): Promise<URL>;
}

/** What the module needs of the worker: where files go, the upload's settings, the clock, the outbound policy. */
export interface StorageDownloadDeps {
  dataDir: string;
  archiveUpload?: ArchiveUploadSettings;
  /** An upload waits out a failing store on this clock and wait (a test's), else on the wall clock and a timer. */
  clock?: Clock;
  sleep?: Sleep;
  /** The outbound policy's context of storage URLs (judged against the API's origin that handed them out). */
  outbound?: () => OutboundContext | Promise<OutboundContext>;
  resolve?: Resolver;
}

export interface ArchiveDownload {
  /** The local file, or the object's URL when the archive went to an object store. */
  path: string;
  /** The object's URL (`s3://bucket/key`), when the archive went to an object store. */
  url?: string;
  /** The store's ETag (S3, Azure) or generation (GCS) of the object. */
  version?: string;
  bytes: number;
  sha256: string;
  /** How many bytes of the archive this attempt fetched (less than `bytes` when it resumed). */
  fetchedBytes: number;
  /** Bytes kept from an earlier attempt (the `.part` on disk), 0 when it started over. */
  resumedFrom: number;
}

/** What the download needs from its surroundings: the activity context, or a benchmark's stand-in. */
export interface DownloadHooks {
  heartbeat(progress: UploadProgress): void;
  signal?: AbortSignal;
  /** The last heartbeat details of an earlier attempt (an upload continues from its checkpoint). */
  previous?: UploadProgress;
}

/** Fresh URLs asked of the API after storage answered something that is not the archive. */
export const NOT_ARCHIVE_REASKS = 2;
/** Breaks in a row without a byte past the high-water mark before the transfer is declared broken. */
export const MAX_STALLS = 5;
/** Fresh URLs asked after storage refused one (403: expired or forbidden). */
const ACCESS_REASKS = 2;
/** Answers one attempt handles before it leaves the rest to a Temporal retry. */
const MAX_ANSWERS = 1_000;
/** @format milliseconds — how often progress is heartbeated and the lock refreshed. */
const BEAT_MS = 1_000;
/** @format milliseconds — a lock not refreshed for this long belongs to a dead process on another host. */
export const LOCK_STALE_MS = 30_000;

/** The download itself, independent of the activity context (benchmarks run it in a plain process). */
export function storageDownloader(deps: StorageDownloadDeps) {
  // Storage gets no credential: pre-signed URLs are fetched by the token-less storage client.
  const storage = new StorageClient({ api: 'storage', route: '/object', outbound: deps.outbound, resolve: deps.resolve });

  return async function download(input: StorageDownloadInput, hooks: DownloadHooks): Promise<ArchiveDownload> {
    const destination = archiveDestination(input.archiveTo);
    if (destination !== undefined) {
      const follow = (url: URL, opts: { from?: number; ifRange?: string; signal: AbortSignal }) => followRedirects(storage, url, opts);
      const name = basename(input.path);
      const object = await streamArchiveTo(destination, name, { storage, askApi: input.askApi, follow }, {
        heartbeat: hooks.heartbeat,
        signal: hooks.signal,
        checkpoint: hooks.previous?.upload,
        validator: hooks.previous?.validator,
        dataDir: deps.dataDir,
        ...deps.archiveUpload,
        clock: deps.clock,
        sleep: deps.sleep,
      });
      return { path: object.url, url: object.url, version: object.version, bytes: object.bytes, sha256: object.sha256, fetchedBytes: object.readBytes, resumedFrom: object.resumedFrom };
    }
    // Inside the data directory, links followed, before anything is created (runs of 0.4.0 may carry any path).
    const path = await pathInDataDir(deps.dataDir, input.path, 'downloadDir');
    await mkdir(dirname(path), { recursive: true });
    const lock = await DownloadLock.acquire(path, LOCK_STALE_MS);
    const part = new PartFile(path);
    const abort = new AbortController();
    const signal = hooks.signal ? AbortSignal.any([hooks.signal, abort.signal]) : abort.signal;
    const state = new Transfer(storage, part, input.source, expectsGzip(path));
    const beat = setInterval(() => {
      hooks.heartbeat(state.progress());
      state.sync();
      void lock.refresh().then((held) => {
        if (!held) abort.abort(storageFailure('archive', 'Busy', `another process took over the lock of ${path}`));
      });
    }, BEAT_MS);
    try {
      await state.open(hooks.previous?.offset);
      await state.run(input.askApi, signal);
      hooks.heartbeat(state.progress());
      if (!(await lock.held())) throw storageFailure('archive', 'Busy', `another process took over the lock of ${path}`);
      // No checkpoint may be written once the `.part` is renamed (it would leave a `.part.json` behind).
      await state.stopSyncing();
      await part.complete();
      return { path, bytes: state.offset, sha256: state.digest(), fetchedBytes: state.fetched, resumedFrom: state.offset - state.fetched };
    } catch (err) {
      throw signal.aborted && !(err instanceof ApplicationFailure) ? signal.reason : err;
    } finally {
      clearInterval(beat);
      await state.close();
      await lock.release();
    }
  };
}

/** One download's progress: the `.part` file, the running hash, and the answers seen so far. */
class Transfer {
  offset = 0;
  fetched = 0;
  total?: number;
  private validator?: string;
  /**
   * The SHA-256, on this thread (about 0.6 s of CPU per GiB with SHA-NI on the 2-core machine); the writes run
   * on the write thread. A second thread for the hash made bench:download about as fast for one thread's
   * memory more: RSS growth 44–56 MiB per 1 GiB download against 35–45 MiB (docs/benchmarks.md).
   */
  private hash = createHash('sha256');
  private readonly writer = writeOnThread() ? new BlockWriter() : undefined;
  private file?: FileHandle;
  /** The most bytes of this object (`validator`) any answer brought, in this attempt or an earlier one. */
  private highWater = 0;
  private stalls = 0;
  private notArchive = 0;
  /** Fresh URLs asked after storage refused one (403: expired or forbidden). */
  private readonly reasks: Reasks = { used: 0, max: ACCESS_REASKS };
  private lastBreak = '';
  /** Set once storage answered a `Range` with the whole object although it still was the same object. */
  private rangeIgnored = false;
  /** The sink of the answer being written, whose `position` is what is on disk right now. */
  private sink?: ArchiveSink;
  /** Bytes from byte 0 synced to the disk and recorded in `.part.json` (the checkpoint a restart of the machine keeps). */
  private synced = 0;
  private bootId?: string;
  /** The sync in progress, awaited before the file is closed. */
  private syncing?: Promise<void>;
  /** Bumped when the `.part` is cut back: a sync that began before must not record its length. */
  private generation = 0;
  /** Metadata writes in order, each with the state as it is when it runs. */
  private metaWrites: Promise<void> = Promise.resolve();
  /** Set once the download is complete: no checkpoint is written after. */
  private stopped = false;
  /** How this attempt resumed, once it did. */
  private resume?: ResumeReport;

  constructor(
    private readonly storage: StorageClient,
    private readonly part: PartFile,
    private readonly source: string,
    private readonly gzip: boolean,
  ) {}

  progress(): UploadProgress {
    return { offset: this.offset, total: this.total, ...(this.resume ? { resume: this.resume } : {}) };
  }

  digest(): string {
    return this.hash.digest('hex');
  }

  /**
   * Resumes from the `.part` on disk when it belongs to this archive and still looks like one: at its length in
   * the same boot, else at the synced checkpoint (`checkpoint`: the previous attempt's heartbeat offset, for a
   * `.part.json` of 0.4.0 that records none).
   */
  async open(checkpoint?: number): Promise<void> {
    this.bootId = await currentBootId();
    const { offset, meta, basis, dropped } = await this.part.resumable(this.source, this.bootId, checkpoint);
    if (offset > 0 && meta) {
      const head = await this.part.hashPrefix(offset, this.hash);
      if (!this.gzip || isGzipMagic(head) || offset < 2) {
        this.offset = offset;
        this.total = meta.total;
        this.validator = meta.validator;
        this.highWater = Math.max(offset, typeof meta.reached === 'number' ? meta.reached : 0);
        // Kept bytes past the checkpoint are in the page cache, not yet known to be on the disk: the next sync says.
        this.synced = Math.min(offset, meta.synced ?? 0);
        // The resume asks one byte early (the overlap check): fetched again too.
        this.resume = { from: offset, basis, reRead: dropped + 1, readBack: offset };
      } else {
        await this.part.clear();
        this.newHash();
      }
    } else if (meta) {
      // Cut back to nothing (no synced byte): from byte 0, but bytes of this object past the mark are still progress.
      this.highWater = typeof meta.reached === 'number' ? meta.reached : 0;
      if (dropped > 0) this.resume = { from: 0, basis, reRead: dropped, readBack: 0 };
    }
    this.file = await open(this.part.partPath, this.offset > 0 ? 'r+' : 'w+');
  }

  /**
   * Syncs what is on disk (`fdatasync`) and records it as the checkpoint a restart of the machine resumes from.
   * Called every second; one at a time, beside the writes (the write thread goes on while the kernel syncs).
   */
  sync(): void {
    if (this.syncing || !this.file || this.stopped) return;
    const at = this.sink?.position ?? this.offset;
    if (at <= this.synced || !this.validator || this.total === undefined) return;
    const generation = this.generation;
    const file = this.file;
    this.syncing = (async () => {
      await file.datasync();
      if (generation !== this.generation) return;
      this.synced = at;
      await this.saveMeta();
    })()
      // A sync that fails leaves the checkpoint where it was: the next one tries again, and the writes report
      // a failing disk themselves.
      .catch(() => undefined)
      .finally(() => (this.syncing = undefined));
  }

  /** Ends the checkpoints: waits for the sync and metadata writes in progress; none starts after. */
  async stopSyncing(): Promise<void> {
    this.stopped = true;
    await this.syncing;
    await this.metaWrites;
  }

  async close(): Promise<void> {
    this.writer?.end();
    await this.syncing;
    await this.metaWrites;
    await this.file?.close().catch(() => undefined);
  }

  /** Fetches until the `.part` holds the whole object. */
  async run(askApi: () => Promise<URL>, signal: AbortSignal): Promise<void> {
    let url = await askApi();
    for (let answers = 0; answers < MAX_ANSWERS; answers++) {
      const from = this.offset > 0 && this.validator ? this.offset - 1 : undefined;
      const { res, finalUrl } = await followRedirects(this.storage, url, { from, ifRange: this.validator, signal });
      url = finalUrl;
      const next = await this.take(res, url, from, signal);
      if (next === 'done') return;
      if (next === 'reask') url = await askApi();
    }
    throw storageFailure('http', 'Network', `the archive download took more than ${MAX_ANSWERS} storage answers; the next attempt resumes at byte ${this.offset}`);
  }

  /**
   * Handles one storage answer: writes what belongs to the archive, decides what comes next. What a status
   * means (retry later, or never) is the core's decision; what the download does about it is its own.
   */
  private async take(res: StorageResponse, url: URL, from: number | undefined, signal: AbortSignal): Promise<'done' | 'again' | 'reask'> {
    const status = res.statusCode;
    // What the status means is the one judge's (`storage/answer.ts`), for the upload's source too.
    const next = await this.storage.answer(res, url, this.reasks, `; the next attempt resumes at byte ${this.offset}`);
    if (next === 'ask-again') return 'reask';
    if (next === 'out-of-range') {
      // Asked from within what we hold, so the object is shorter than our .part: stale, start over.
      await this.restart({ changed: true });
      return 'again';
    }
    const contentType = res.headers['content-type'];
    const typeProblem = contentTypeProblem(contentType);
    if (typeProblem) return this.notAnArchive(typeProblem, await readHead(res.body), res.headers['content-length']);

    const total = announcedTotal(status, res.headers['content-range'], res.headers['content-length']);
    const start = status === 206 ? rangeStart(res.headers['content-range']) : 0;
    if (status === 206 && start !== from) {
      // Not the range we asked for: trust nothing of it.
      discard(res.body);
      await this.restart({ changed: false });
      return 'again';
    }
    const validator = validatorOf(res.headers['etag'], res.headers['last-modified']);
    // Another object than the one the high-water mark measures (a validator or length that differs), or the same.
    const changed = (this.validator !== undefined && validator !== this.validator) || (this.total !== undefined && total !== this.total);
    if (status === 200 && this.offset > 0) {
      // A 200 replaces whatever we held: the object changed (If-Range did not match), or storage ignores Range
      // (the same object again, from byte 0).
      if (!changed && from !== undefined) this.noteRangeIgnored(url, from);
      await this.restart({ changed });
    } else if (changed) {
      this.highWater = 0;
    }
    if (total === undefined) {
      discard(res.body);
      throw storageFailure('http', 'UnexpectedResponse', `storage answered ${status} without a length (Content-Length or Content-Range)`);
    }
    if (status === 200 || validator !== this.validator || total !== this.total) {
      this.total = total;
      this.validator = validator;
      // Without a validator a later resume could mix two objects: such a download restarts instead.
      await this.saveMeta();
    }
    return this.stream(res, status === 206, url, signal);
  }

  /**
   * Records the object, the high-water mark and the synced checkpoint in `.part.json` (only with a validator: see
   * `take`). Writes run one after the other, each with the state of its turn, so the last one written is the newest.
   */
  private saveMeta(): Promise<void> {
    const write = async () => {
      if (!this.validator || this.total === undefined || this.stopped) return;
      const bootId = this.bootId !== undefined ? { bootId: this.bootId } : {};
      await this.part.writeMeta({ source: this.source, validator: this.validator, total: this.total, reached: this.highWater, synced: this.synced, ...bootId });
    };
    const next = this.metaWrites.then(write);
    this.metaWrites = next.catch(() => undefined);
    return next;
  }

  private noteRangeIgnored(url: URL, from: number): void {
    if (this.rangeIgnored) return;
    this.rangeIgnored = true;
    activityLog('warn', 'storage-ignores-range', `storage ignores Range: asked ${redact(url.href)} for bytes ${from}- and got the whole object from byte 0; every break starts over`, {
      api: 'storage',
      reason: 'range-ignored',
    });
  }

  private async stream(res: StorageResponse, overlaps: boolean, url: URL, signal: AbortSignal): Promise<'done' | 'again' | 'reask'> {
    const sink = new ArchiveSink(this.file!, this.part.partPath, this.hash, {
      position: this.offset,
      overlapByte: overlaps ? await this.lastByte() : undefined,
      expectGzip: this.gzip,
      writer: this.writer,
    });
    this.sink = sink;
    const counted = () => {
      const fresh = sink.position - this.offset;
      // Counted as the bytes land (every 250 ms), so the metric moves during a long download.
      if (fresh > 0) longhaulMetrics().downloadBytes.add(fresh);
      this.fetched += fresh;
      this.offset = sink.position;
    };
    const progress = setInterval(counted, 250);
    let failure: Error | undefined;
    try {
      failure = await sink.drain(res.body);
    } finally {
      clearInterval(progress);
      counted();
      this.sink = undefined;
    }
    if (failure instanceof BodyRefused) {
      if (failure.reason === 'not-gzip') return this.notAnArchive('a body without the gzip magic bytes 1f 8b', failure.head, res.headers['content-length']);
      // The byte before the resume point differs: what we held was of another object.
      await this.restart({ changed: true });
      return 'again';
    }
    if (signal.aborted) throw signal.reason;
    if (failure instanceof DiskWriteFailed) throw storageFailure('archive', 'WriteFailed', failure.message);
    if (!failure && this.offset === this.total) return 'done';
    // Broken off (connection closed, timeout) or ended short: keep the bytes, resume at once.
    const reason = failure instanceof Error ? failure.message : `the body ended at byte ${this.offset}`;
    this.lastBreak = `storage announced ${this.total} bytes, sent ${this.offset} and closed (${reason})`;
    // Progress is a byte past the high-water mark: bytes fetched again after a restart from byte 0 are none.
    if (this.offset > this.highWater) {
      this.highWater = this.offset;
      this.stalls = 0;
      await this.saveMeta();
      return 'again';
    }
    if (++this.stalls >= MAX_STALLS) {
      const restarted = this.rangeIgnored ? '; storage ignored the Range header, so every answer started over at byte 0' : '';
      throw storageFailure('archive', 'TransferBroken', `the archive transfer of ${redact(url.href)} keeps breaking: ${this.lastBreak}, never past byte ${this.highWater}, ${this.stalls} times in a row${restarted}`, {
        details: [{ url: redact(url.href), total: this.total, highWater: this.highWater, lastOffset: this.offset, rangeIgnored: this.rangeIgnored }],
      });
    }
    await pause(backoffMs(BACKOFF.downloadStall, this.stalls), signal);
    return 'again';
  }

  private async notAnArchive(what: string, body: Buffer, contentLength: string | undefined): Promise<'reask'> {
    const received = excerpt(body, contentLength !== undefined ? Number(contentLength) : undefined);
    if (this.notArchive++ < NOT_ARCHIVE_REASKS) return 'reask';
    throw storageFailure('archive', 'NotAnArchive', `storage sent ${what} instead of the archive, ${this.notArchive} times with fresh URLs (${received})`);
  }

  private async lastByte(): Promise<number> {
    const { buffer } = await this.file!.read(Buffer.alloc(1), 0, 1, this.offset - 1);
    return buffer[0];
  }

  /**
   * Drops what is on disk: the next bytes come from byte 0. The high-water mark stays unless the object
   * `changed` (bytes of another object are no measure of progress): a store that ignores Range, or answers
   * another range than the one asked, sends the same object again and must get past the mark.
   */
  private async restart({ changed }: { changed: boolean }): Promise<void> {
    this.generation++;
    this.synced = 0;
    await this.file!.truncate(0);
    this.offset = 0;
    this.fetched = 0;
    if (changed) {
      this.highWater = 0;
      this.validator = undefined;
      this.total = undefined;
    }
    this.newHash();
    // The synced checkpoint is 0 again before anything is written over the old bytes (a changed object's
    // metadata is written with its first answer).
    await this.saveMeta();
  }

  private newHash(): void {
    this.hash = createHash('sha256');
  }
}

/** GETs `url`, following storage redirects (checked, at most `MAX_REDIRECTS`, never in a circle). */
async function followRedirects(
  storage: StorageClient,
  url: URL,
  opts: { from?: number; ifRange?: string; signal: AbortSignal },
): Promise<{ res: StorageResponse; finalUrl: URL }> {
  const seen = new Set<string>();
  let current = url;
  for (;;) {
    seen.add(current.href);
    const res = await storage.get(current, opts);
    if (!isRedirect(res.statusCode)) return { res, finalUrl: current };
    discard(res.body);
    const next = checkLocation(res.headers['location'], current.href, `storage (${res.statusCode})`);
    if (seen.has(next.href)) {
      throw storageFailure('archive', 'RedirectLoop', `storage redirects in a circle (${[...seen, next.href].map(redact).join(' → ')})`);
    }
    if (seen.size > MAX_REDIRECTS) throw storageFailure('archive', 'RedirectLoop', `storage redirected more than ${MAX_REDIRECTS} times`);
    current = next;
  }
}

/** A URL without its query (pre-signed URLs carry their signature there). */
function redact(href: string): string {
  const url = new URL(href);
  return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolvePause, reject) => {
    const timer = setTimeout(resolvePause, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    }, { once: true });
  });
}
