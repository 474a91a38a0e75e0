/**
 * What an upload needs from a store: one interface over S3 multipart uploads, GCS resumable sessions and Azure
 * block lists. Parts are numbered from 1 and are all `partBytes` long but the last. An upload id never carries
 * a secret: it goes into heartbeat details, and so into Temporal's history.
 */
import { ApplicationFailure } from '@temporalio/common';
import { judgeStorageStatus } from '../../storage/answer';
import { storageFailure } from '../../storage/failures';

/** An object under its final key. */
export interface StoredObject {
  bytes: number;
  /** The whole archive's SHA-256 (hex) recorded with the object by longhaul, when there is one. */
  sha256?: string;
  /** The store's version of the object: S3 and Azure ETag, GCS generation. */
  version?: string;
  /** The store's own checksum, as it names it (`sha256:…` for S3, `crc32c:…` for GCS). */
  storeChecksum?: string;
}

export interface StoredPart {
  bytes: number;
  /** SHA-256 of the part, base64, where the store keeps one (S3). */
  sha256?: string;
}

export interface PartStore {
  /** Parts may be stored concurrently (S3, Azure); GCS takes one chunk after the other. */
  readonly concurrentParts: boolean;
  /**
   * One call that says whether the bucket (container) is there and these credentials reach it: S3 HeadBucket,
   * GCS bucket get, Azure container get properties. A missing bucket fails `ArchiveBucketNotFound`, a refusal
   * `ArchiveStoreAccessDenied` (both non-retryable); a store that is down throws its error as it is (transient).
   */
  check(): Promise<void>;
  head(key: string): Promise<StoredObject | undefined>;
  /** Starts an upload to `key`; its id. */
  begin(key: string, contentType: string): Promise<string>;
  /**
   * Parts stored for the upload, from the store's own listing where it has one (`counted`: the bytes the
   * checkpoint says are stored); `undefined` when the store no longer knows the upload (aborted, expired).
   */
  stored(key: string, upload: string, partBytes: number, size: number, counted: number): Promise<Map<number, StoredPart> | undefined>;
  /** Stores part `partNumber` (at byte `offset`); `last` is the final part. */
  put(key: string, upload: string, part: { partNumber: number; offset: number; body: Buffer; sha256: Buffer; last: boolean; size: number }, signal: AbortSignal): Promise<void>;
  /** Makes the object appear under `key` with `sha256` recorded, once every part is stored. */
  complete(key: string, upload: string, parts: number, sha256: string, size: number, contentType: string): Promise<StoredObject>;
  /** Drops the upload's stored parts. */
  abort(key: string, upload: string): Promise<void>;
  /** Drops uploads to `key` that no checkpoint knows (an attempt that died before its first heartbeat). */
  abandon(key: string): Promise<void>;
}

/**
 * A failure the store or the network may get over: connection refused or reset, timeouts, and what the one judge
 * of a storage answer calls transient (`storage/answer.ts`: 408, 425, 429, 5xx).
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof ApplicationFailure) return !err.nonRetryable;
  const e = err as { code?: unknown; name?: string; message?: string; statusCode?: number; status?: number; $metadata?: { httpStatusCode?: number }; response?: { status?: number }; cause?: unknown };
  const status = e.$metadata?.httpStatusCode ?? e.statusCode ?? e.response?.status ?? (typeof e.code === 'number' ? e.code : e.status);
  if (typeof status === 'number' && status > 0) return judgeStorageStatus(status, 'store') === 'transient';
  const code = typeof e.code === 'string' ? e.code : '';
  if (/^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|UND_ERR_|REQUEST_SEND_ERROR)/.test(code)) return true;
  if (e.name === 'TimeoutError' || /socket hang up|ECONNREFUSED|ECONNRESET|EPIPE|other side closed|fetch failed|Retry limit exceeded/i.test(e.message ?? '')) return true;
  return e.cause !== undefined && e.cause !== err && isTransient(e.cause);
}

/** HTTP status of a store's error, whichever SDK threw it. */
export function statusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: number; $metadata?: { httpStatusCode?: number }; response?: { status?: number } };
  return e.$metadata?.httpStatusCode ?? e.statusCode ?? e.response?.status ?? (typeof e.code === 'number' ? e.code : undefined);
}

/** What the judge calls refused (401/403) as a non-retryable `ArchiveStoreAccessDenied`; anything else unchanged. */
export function denied(err: unknown, what: string): unknown {
  const status = statusOf(err);
  if (status !== undefined && judgeStorageStatus(status, 'store') === 'refused') {
    return storageFailure('objectStore', 'AccessDenied', `${what}: the store refused access (${status}): check the worker's credentials and their permissions`, { cause: err });
  }
  return err;
}

export function bucketNotFound(what: string, err: unknown): ApplicationFailure {
  return storageFailure('objectStore', 'BucketNotFound', `${what}: the bucket does not exist`, { cause: err });
}

/**
 * Runs one request of a store's SDK as `what` (`"UploadPart s3://bucket/key"`): a refusal (401/403) and, where
 * `missingBucket` recognises it, a missing bucket become permanent failures; anything else is thrown as it is.
 */
export async function storeCall<T>(what: string, run: () => Promise<T>, missingBucket: (err: unknown) => boolean = () => false): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (missingBucket(err)) throw bucketNotFound(what, err);
    throw denied(err, what);
  }
}
