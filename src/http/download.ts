/**
 * The one token-less request of longhaul: a GET of a pre-signed storage URL. It deliberately bypasses the
 * `ApiClient` (no credentials, no API rate-limit gate, no redirects followed: the caller checks every hop)
 * and asks undici for large body buffers, so a big archive streams without per-chunk overhead dominating.
 */
import { request, type Dispatcher } from 'undici';

export interface StorageGet {
  /** Ask for the bytes from this offset on (`Range: bytes=N-`). */
  from?: number;
  /** Only honour `from` if the object still has this ETag or Last-Modified (`If-Range`). */
  ifRange?: string;
  signal?: AbortSignal;
  dispatcher?: Dispatcher;
  /** @format milliseconds — waiting for the response headers. */
  headersTimeoutMs?: number;
  /** @format milliseconds — silence between two body chunks. */
  bodyTimeoutMs?: number;
}

/** Size of undici's body buffer: the socket keeps reading while the disk writes. */
const BODY_HIGH_WATER_MARK = 4 * 1024 * 1024;

export async function storageGet(url: URL, opts: StorageGet = {}): Promise<Dispatcher.ResponseData> {
  const headers: Record<string, string> = {};
  if (opts.from !== undefined) headers.range = `bytes=${opts.from}-`;
  if (opts.from !== undefined && opts.ifRange) headers['if-range'] = opts.ifRange;
  return request(url, {
    method: 'GET',
    // Deliberately no Authorization: pre-signed storage URLs must not receive the API token.
    headers,
    signal: opts.signal,
    dispatcher: opts.dispatcher,
    headersTimeout: opts.headersTimeoutMs ?? 30_000,
    bodyTimeout: opts.bodyTimeoutMs ?? 60_000,
    highWaterMark: BODY_HIGH_WATER_MARK,
  });
}

/** A header's single value (undici gives arrays for repeated headers). */
export function headerValue(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** At most `max` bytes of a body, for messages; the rest is not read (an error page may be huge). */
export async function readHead(body: Dispatcher.ResponseData['body'], max = 4096): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      length += (chunk as Buffer).length;
      if (length >= max) break;
    }
  } catch {
    // What arrived before the error is enough for a message.
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, max);
}
