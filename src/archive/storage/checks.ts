/**
 * What the archive download accepts (issue 13): the checks on a redirect target and on the storage's
 * answer, as pure functions, and the failure types a user sees when one of them refuses.
 */
import { FAILURES, failureTypes } from '../../common/failures';
import { storageFailure } from './failures';

/** Failure types of the archive download (stable strings for `nonRetryableErrorTypes` and callers). */
export const ArchiveFailure = failureTypes(FAILURES.archive);

/** Content types an object store sends for a `.tar.gz` (S3 defaults to `binary/octet-stream`). */
const ARCHIVE_TYPES = new Set([
  'application/gzip',
  'application/x-gzip',
  'application/x-gtar',
  'application/x-tar',
  'application/x-tar+gzip',
  'application/x-tgz',
  'application/x-compressed-tar',
  'application/octet-stream',
  'binary/octet-stream',
]);

/** Why a content type is not an archive's, or undefined when it may be one (a missing type is judged by the bytes). */
export function contentTypeProblem(contentType: string | undefined): string | undefined {
  if (contentType === undefined || contentType.trim() === '') return undefined;
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  return ARCHIVE_TYPES.has(mediaType) ? undefined : `content type ${mediaType}`;
}

/** Whether the destination is a gzip file whose first bytes must be the gzip magic `1f 8b`. */
export function expectsGzip(path: string): boolean {
  return /\.(t?gz|tgz)$/i.test(path);
}

export function isGzipMagic(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** A short, printable excerpt of a body for messages ("46 bytes: <html>…AccessDenied…"). */
export function excerpt(body: Buffer, announced?: number): string {
  const text = body.subarray(0, 200).toString('utf8').replace(/\s+/g, ' ').replace(/[^\x20-\x7e]/g, '?').trim();
  const size = announced ?? body.length;
  return `${size} bytes: ${JSON.stringify(text)}${body.length > 200 ? '…' : ''}`;
}

const shown = (raw: string) => JSON.stringify(raw.length > 120 ? `${raw.slice(0, 120)}…` : raw);

/**
 * The URL to fetch for a redirect target, resolved against the URL that answered, or a non-retryable
 * failure naming what was wrong: only http(s) is downloaded (never `file:`, `ftp:`, `data:`).
 */
export function checkLocation(raw: string | undefined, base: string | undefined, from: string): URL {
  if (raw === undefined || raw.trim() === '') {
    throw storageFailure('archive', 'LocationUnusable', `${from} redirected without a Location`);
  }
  let url: URL;
  try {
    url = new URL(raw.trim(), base);
  } catch {
    throw storageFailure('archive', 'LocationUnusable', `${from} redirected to ${shown(raw)}, which is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw storageFailure('archive', 'LocationUnusable', `${from} redirected to ${shown(raw)}: longhaul only downloads archives over http(s), not ${url.protocol.replace(/:$/, '')}`);
  }
  return url;
}

/** The object's total size from a 200/206 answer (`Content-Range` total, else `Content-Length`). */
export function announcedTotal(status: number, contentRange: string | undefined, contentLength: string | undefined): number | undefined {
  if (status === 206) {
    const total = /\/(\d+)\s*$/.exec(contentRange ?? '')?.[1];
    return total === undefined ? undefined : Number(total);
  }
  return contentLength !== undefined && /^\d+$/.test(contentLength.trim()) ? Number(contentLength) : undefined;
}

/** The first byte of a 206 answer (`Content-Range: bytes START-END/TOTAL`). */
export function rangeStart(contentRange: string | undefined): number | undefined {
  const start = /^bytes\s+(\d+)-\d+\//.exec(contentRange?.trim() ?? '')?.[1];
  return start === undefined ? undefined : Number(start);
}

/** A strong validator usable in `If-Range`: a strong ETag, else Last-Modified (weak ETags never match). */
export function validatorOf(etag: string | undefined, lastModified: string | undefined): string | undefined {
  if (etag && etag.startsWith('"')) return etag;
  if (lastModified && Number.isFinite(Date.parse(lastModified))) return lastModified;
  return undefined;
}
