/**
 * The archive into an object store (issue 26): `downloadArchive` with a destination (the input's `archiveTo`,
 * else the worker's `LONGHAUL_ARCHIVE_TO`) streams GitHub's storage straight into the store in one bounded pass
 * (`src/archive/object-store`), never through local disk.
 *
 * - The source is the pre-signed storage URL behind the API's 302, fetched by the same token-less client as the
 *   local download. A later part is re-opened with `Range: bytes=N-` and `If-Range` (the object's validator from
 *   the first answer): storage answering anything but that range means the object changed, and the attempt
 *   fails retryable so the next one starts from the object as it is.
 * - Heartbeat details carry the upload's checkpoint beside the progress (`offset`, `total`: what `status` and
 *   `wait --follow` show), so an attempt on any host continues the upload from the parts already stored. The same
 *   host, in the same boot, continues from its own copy of the checkpoint, written as each part is confirmed
 *   (`to-store-local.ts`), when that is further. How an attempt resumed is in the details too (`resume`).
 */
import { abortUploads, checkDestination, parseDestination, uploadArchive, type StoreKind, type UploadCheckpoint } from './object-store';
import type { Clock, Sleep } from '../common/clock';
import { discard, readHead, type StorageBody, type StorageResponse } from './storage/transport';
import type { StorageClient } from './storage/client';
import type { DownloadProgress } from './progress';
import type { ArchiveUploadSettings } from '../config';
import { setting, type SettingName } from '../settings';
import { storageFailure } from './storage/failures';
import { announcedTotal, contentTypeProblem, excerpt, rangeStart, validatorOf } from './storage/checks';
import { LocalUploadCheckpoint } from './to-store-local';
import { currentBootId } from './boot-id';
import type { ResumeReport } from './progress';

/** The worker's default archive destination (`s3://…`, `gs://…`, `azblob://…`); unset: the local data directory. */
export const ARCHIVE_TO_ENV = 'LONGHAUL_ARCHIVE_TO' satisfies SettingName;

/** Heartbeat details of an upload: the progress every download shows, and the checkpoint a later attempt continues. */
export interface UploadProgress extends DownloadProgress {
  upload?: UploadCheckpoint;
  /** The archive's validator at storage (ETag or Last-Modified) the checkpoint's bytes came from. */
  validator?: string;
}

/** The destination of a download: the input's, else the worker's default, else none (local disk). */
export function archiveDestination(archiveTo: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = archiveTo ?? (setting(ARCHIVE_TO_ENV, env)?.trim() || undefined);
  if (url !== undefined) parseDestination(url, archiveTo !== undefined ? 'archiveTo' : ARCHIVE_TO_ENV);
  return url;
}

/** Where a migration's archive goes, as a check or an abort reports it: a store's kind, or the local data directory. */
export interface ArchiveDestinationOutcome {
  store: StoreKind | 'local';
}

/**
 * Before the export is started: the destination the download would use (the input's, else the worker's) is
 * there and reachable with the worker's credentials. Nothing to check for the local data directory.
 */
export function checkArchiveDestination(archiveTo: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<ArchiveDestinationOutcome> {
  return onDestination(archiveTo, env, (url) => checkDestination(url, env));
}

/**
 * After a migration failed or was cancelled mid-download: drops the upload still open for its object (`name`),
 * whichever attempt began it. The local data directory keeps its `.part` file (a later run resumes from it).
 */
export function abortArchiveUpload(archiveTo: string | undefined, name: string, env: NodeJS.ProcessEnv = process.env): Promise<ArchiveDestinationOutcome> {
  return onDestination(archiveTo, env, (url) => abortUploads(url, name, env));
}

/** `act` on the download's destination (the input's, else the worker's), or nothing for the local data directory. */
async function onDestination(archiveTo: string | undefined, env: NodeJS.ProcessEnv, act: (url: string) => Promise<unknown>): Promise<ArchiveDestinationOutcome> {
  const url = archiveDestination(archiveTo, env);
  if (url === undefined) return { store: 'local' };
  await act(url);
  return { store: parseDestination(url).kind };
}

export interface StorageSource {
  storage: StorageClient;
  /** A fresh pre-signed URL from the API. */
  askApi(): Promise<URL>;
  follow(url: URL, opts: { from?: number; ifRange?: string; signal: AbortSignal }): Promise<{ res: StorageResponse; finalUrl: URL }>;
}

export interface StreamedArchive {
  url: string;
  bytes: number;
  sha256: string;
  version?: string;
  readBytes: number;
  uploadedBytes: number;
  resumedFrom: number;
  alreadyThere: boolean;
}

/** Streams the archive at `source` into `destination` as `name`; see the module comment. */
export async function streamArchiveTo(
  destination: string,
  name: string,
  source: StorageSource,
  hooks: {
    heartbeat(progress: UploadProgress): void;
    signal?: AbortSignal;
    checkpoint?: UploadCheckpoint;
    validator?: string;
    clock?: Clock;
    sleep?: Sleep;
    /** The worker's data directory: where this host keeps its copy of the checkpoint (none: the heartbeat's only). */
    dataDir?: string;
  } & ArchiveUploadSettings,
): Promise<StreamedArchive> {
  const signal = hooks.signal ?? new AbortController().signal;
  const local = hooks.dataDir !== undefined ? LocalUploadCheckpoint.in(hooks.dataDir, destination, name) : undefined;
  const bootId = await currentBootId();
  const kept = await local?.further(bootId, hooks.checkpoint);
  if (kept) hooks = { ...hooks, checkpoint: kept.checkpoint, validator: kept.validator };
  let url = await source.askApi();
  // The first answer names the object: its length and validator. Its body serves the start: byte 0, or, for an
  // attempt that continues a checkpoint, the checkpoint's offset, asked with `If-Range` and the validator the
  // checkpoint's bytes came from (a byte-0 answer there would be dropped at once, after the sockets' buffers had
  // taken megabytes of it). A 200 there says the archive changed since (or storage ignores Range): the upload
  // starts over from byte 0 with that answer, and the store's parts of the checkpoint are dropped.
  const resumeAt = hooks.checkpoint && !hooks.checkpoint.sha256 && hooks.checkpoint.offset > 0 && hooks.validator ? hooks.checkpoint.offset : undefined;
  let first = await openAt(source, url, resumeAt, resumeAt !== undefined ? hooks.validator : undefined, signal);
  url = first.url;
  const { total, validator } = first;
  const changed = resumeAt !== undefined && (first.start !== resumeAt || validator !== hooks.validator);
  const checkpoint = changed ? undefined : hooks.checkpoint;
  const open = async (offset: number, openSignal: AbortSignal): Promise<AsyncIterable<Uint8Array>> => {
    if (offset === first.start && first.body) {
      const body = first.body;
      first = { ...first, body: undefined };
      return bodyChunks(body, openSignal);
    }
    if (first.body) {
      discard(first.body);
      first = { ...first, body: undefined };
    }
    if (offset === 0) return bodyChunks((await openAt(source, url, undefined, undefined, openSignal)).body!, openSignal);
    const again = await openAt(source, url, offset, validator, openSignal);
    url = again.url;
    if (again.start !== offset || again.total !== total || again.validator !== validator) {
      if (again.body) discard(again.body);
      throw storageFailure('archive', 'Changed', `storage answered bytes from ${again.start} of ${again.total} (${again.validator ?? 'no validator'}) when asked for ${offset}- of ${total} (${validator ?? 'no validator'}): the archive changed; the next attempt starts over`);
    }
    return bodyChunks(again.body!, openSignal);
  };
  let resume: ResumeReport | undefined;
  try {
    const object = await uploadArchive({
      destination,
      name,
      size: total,
      contentType: 'application/gzip',
      openSource: open,
      checkpoint,
      heartbeat: (c) => {
        local?.save(c, validator, bootId);
        hooks.heartbeat({ offset: c.offset, total, url: c.url, upload: c, ...(validator !== undefined ? { validator } : {}), ...(resume ? { resume } : {}) });
      },
      resumed: ({ from, reRead }) => (resume = { from, basis: kept && from === kept.checkpoint.offset ? 'store' : 'checkpoint', reRead, readBack: 0 }),
      signal,
      partBytes: hooks.partBytes,
      partsInFlight: hooks.partsInFlight,
      clock: hooks.clock,
      sleep: hooks.sleep,
    });
    await local?.remove();
    return {
      url: object.url,
      bytes: object.bytes,
      sha256: object.sha256,
      version: object.version,
      readBytes: object.readBytes,
      uploadedBytes: object.uploadedBytes,
      resumedFrom: object.resumedFrom,
      alreadyThere: object.alreadyThere,
    };
  } finally {
    if (first.body) discard(first.body);
  }
}

interface Opened {
  url: URL;
  total: number;
  start: number;
  validator?: string;
  body?: StorageBody;
}

/**
 * One storage answer that is the archive (from `from`), or the typed failure the one judge gives it
 * (`StorageClient.answer`); a refused URL (403) asks the API for a fresh one once.
 */
async function openAt(source: StorageSource, url: URL, from: number | undefined, ifRange: string | undefined, signal: AbortSignal): Promise<Opened> {
  const reasks = { used: 0, max: 1 };
  for (;;) {
    const { res, finalUrl } = await source.follow(url, { from, ifRange, signal });
    const next = await source.storage.answer(res, finalUrl, reasks);
    if (next === 'ask-again') {
      url = await source.askApi();
      continue;
    }
    // A range past the end although the object's validator matched: nothing a retry changes.
    if (next === 'out-of-range') throw storageFailure('http', 'UnexpectedResponse', `storage answered 416 to bytes ${from ?? 0}- of the archive it named`);
    return opened(res, finalUrl);
  }
}

/** The archive's answer (200 or 206), checked: its type, its length, where it starts. */
async function opened(res: StorageResponse, finalUrl: URL): Promise<Opened> {
  const status = res.statusCode;
  const typeProblem = contentTypeProblem(res.headers['content-type']);
  if (typeProblem) {
    const body = excerpt(await readHead(res.body));
    throw storageFailure('archive', 'NotAnArchive', `storage sent ${typeProblem} instead of the archive (${body})`);
  }
  const total = announcedTotal(status, res.headers['content-range'], res.headers['content-length']);
  if (total === undefined) {
    discard(res.body);
    throw storageFailure('http', 'UnexpectedResponse', `storage answered ${status} without a length (Content-Length or Content-Range)`);
  }
  const start = status === 206 ? rangeStart(res.headers['content-range']) ?? -1 : 0;
  return { url: finalUrl, total, start, validator: validatorOf(res.headers['etag'], res.headers['last-modified']), body: res.body };
}

/** Bytes of the body read ahead of the upload before the socket is paused (the parts in flight bound the rest). */
const READ_AHEAD_BYTES = 1024 * 1024;
/** The memory one socket read goes into. */
const SLAB_BYTES = 256 * 1024;

/**
 * A storage body as an async iterable of chunks, the socket paused while `READ_AHEAD_BYTES` wait, so memory stays
 * bounded by the upload's parts in flight and a host that dies has read little past them.
 *
 * The socket reads straight into slabs lent from here (`StorageBody`'s read target), each back in use once the
 * upload has taken every chunk in it (the generator resumes after a yield only then). No read is copied and none
 * leaves garbage: copying each read (up to 1 MiB) into a fresh buffer cost the upload process a fifth of its CPU in
 * the garbage collector.
 */
async function* bodyChunks(body: StorageBody, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const spare: Buffer[] = [];
  /** Per slab, how many queued or yielded chunks are views of it. */
  const views = new Map<Buffer, number>();
  let lent: Buffer | undefined;
  const lend = () => (lent = spare.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES));
  const release = (slab: Buffer) => {
    const left = (views.get(slab) ?? 1) - 1;
    if (left > 0) views.set(slab, left);
    else {
      views.delete(slab);
      spare.push(slab);
    }
  };
  const queue: { bytes: Uint8Array; slab?: Buffer }[] = [];
  let queued = 0;
  let ended: { error?: Error } | undefined;
  let wake: (() => void) | undefined;
  let paused = false;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const onAbort = () => body.destroy(signal.reason as Error);
  signal.addEventListener('abort', onAbort, { once: true });
  void body
    .deliver((chunk) => {
      // A view of the slab lent for this read, or (the bytes that came with the head) a copy.
      const slab = lent !== undefined && chunk.buffer === lent.buffer ? lent : undefined;
      if (slab) views.set(slab, (views.get(slab) ?? 0) + 1);
      queue.push({ bytes: slab ? chunk : Buffer.from(chunk), slab });
      queued += chunk.length;
      notify();
      paused = queued >= READ_AHEAD_BYTES;
      return !paused;
    }, lend)
    .then((error) => {
      ended = { error };
      notify();
    });
  try {
    for (;;) {
      const next = queue.shift();
      if (next) {
        queued -= next.bytes.length;
        if (paused && queued < READ_AHEAD_BYTES / 2) {
          paused = false;
          body.resume();
        }
        yield next.bytes;
        if (next.slab) release(next.slab);
        continue;
      }
      if (ended) {
        // Broken off by the activity's cancellation: that is what the attempt ends with (cancelled, not failed).
        if (ended.error && signal.aborted) throw signal.reason;
        if (ended.error) throw storageFailure('http', 'Network', `the archive transfer broke off: ${ended.error.message}`);
        return;
      }
      await new Promise<void>((resolveWake) => (wake = resolveWake));
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (!ended) body.destroy();
  }
}
