/**
 * The one judge of a storage answer: what an HTTP status from storage means for the bytes of an archive, whether
 * it came from a pre-signed URL (the download, the upload's source) or from an object store (the upload's
 * destination, whose SDKs report the status of their errors). Every path of the archive module asks it; none
 * keeps a list of statuses of its own.
 *
 * - `transient`: 408 (request timeout), 425 (too early), 429 (slow down) and every 5xx: the store may answer
 *   later; the transfer resumes from what it kept, after the wait the answer asks for (a `retry-after` wins).
 * - `ask-again`: 403 from a pre-signed URL: it expired or was refused, and the API hands out a fresh one.
 * - `gone`: 404 or 410: no such object (the archive was deleted); no retry brings it back.
 * - `refused`: 401 or 403 from an object store: the worker's credentials are not allowed (`ArchiveStoreAccessDenied`).
 * - `out-of-range`: 416, a range past the object's end: what we hold is of a longer, other object.
 * - `redirect`: a 3xx, followed by the caller (each hop checked).
 * - `ok`: the answer carries what was asked (200 or 206 from a pre-signed URL; any 2xx from a store).
 * - `unexpected`: anything else (another 4xx, a 1xx, a 2xx storage never sends for a GET): permanent.
 *
 * Pure: no I/O, so the token-less client's retry policy for storage (`STORAGE_RETRY_POLICY`) is built from it and a
 * unit test holds the two to the same answer for every status.
 */
import { tokenlessRetryPolicy } from '../../http/tokenless';
import type { RetryPolicy } from '../../http/retry-policy';

export type StorageVerdict = 'ok' | 'redirect' | 'transient' | 'ask-again' | 'gone' | 'refused' | 'out-of-range' | 'unexpected';

/** Who answered: a pre-signed URL the API handed out, or an object store the worker holds credentials for. */
export type StorageSide = 'presigned' | 'store';

/** Statuses below 500 that are transient for storage; every 5xx is too. */
export const TRANSIENT_STORAGE_STATUSES: readonly number[] = [408, 425, 429];

export function isTransientStorageStatus(status: number): boolean {
  return status >= 500 || TRANSIENT_STORAGE_STATUSES.includes(status);
}

export function judgeStorageStatus(status: number, side: StorageSide = 'presigned'): StorageVerdict {
  if (side === 'presigned' ? status === 200 || status === 206 : status >= 200 && status < 300) return 'ok';
  if (status >= 300 && status < 400) return 'redirect';
  if (isTransientStorageStatus(status)) return 'transient';
  if (status === 404 || status === 410) return 'gone';
  if (status === 416) return 'out-of-range';
  if (side === 'presigned' && status === 403) return 'ask-again';
  if (side === 'store' && (status === 401 || status === 403)) return 'refused';
  return 'unexpected';
}

/**
 * The HTTP core's policy for storage answers, from the judge: its transient statuses back off, 429 waits for its
 * `retry-after` (else backs off), everything else is the core's permanent answer. Sinks keep the token-less default.
 */
export const STORAGE_RETRY_POLICY: RetryPolicy = {
  ...tokenlessRetryPolicy,
  rateLimitStatuses: [429],
  alwaysRateLimitStatuses: [429],
  transientStatuses: TRANSIENT_STORAGE_STATUSES.filter((status) => status !== 429),
};
