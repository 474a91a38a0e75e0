/**
 * A separate "object store" origin that serves archive bytes behind pre-signed, expiring URLs, the way
 * the real service redirects archive downloads to cloud storage. Like a real object store it supports
 * `Range`, and it rejects any request that carries an `Authorization` header: a client that forwards
 * its API token across the redirect fails here (and would leak the token in production).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHmac, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { EmulatorStats } from './stats';

export interface StoredObject {
  bytes: Buffer;
  contentType: string;
}

export interface StorageOptions {
  host: string;
  port: number;
  clock: () => number;
  stats: EmulatorStats;
  /** Throttle downloads to this many bytes per second (0 = unthrottled), so tests can interrupt one mid-stream. */
  bytesPerSecond?: number;
}

export class StorageOrigin {
  private readonly objects = new Map<string, StoredObject>();
  private readonly secret = randomBytes(16).toString('hex');
  private server?: Server;
  baseUrl = '';
  bytesPerSecond: number;

  constructor(private readonly opts: StorageOptions) {
    this.bytesPerSecond = opts.bytesPerSecond ?? 0;
  }

  put(key: string, object: StoredObject): void {
    this.objects.set(key, object);
  }

  delete(key: string): void {
    this.objects.delete(key);
  }

  has(key: string): boolean {
    return this.objects.has(key);
  }

  /** A URL for `key` that stops working `ttlMs` from now. */
  presign(key: string, ttlMs: number): string {
    const expires = Math.floor((this.opts.clock() + ttlMs) / 1000);
    const signature = this.sign(key, expires);
    return `${this.baseUrl}/${encodeURIComponent(key)}?X-Expires=${expires}&X-Signature=${signature}`;
  }

  private sign(key: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest('hex');
  }

  async listen(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(this.opts.port, this.opts.host, resolve));
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://${this.opts.host}:${port}`;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const stats = this.opts.stats.storage;
    stats.requests++;
    const url = new URL(req.url ?? '/', this.baseUrl);
    const key = decodeURIComponent(url.pathname.slice(1));
    const fail = (status: number, code: string, message: string) => {
      res.writeHead(status, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);
    };
    if (req.headers.authorization) {
      stats.rejectedWithAuthorization++;
      return fail(400, 'InvalidArgument', 'Only one auth mechanism allowed; only the X-Signature query parameter is supported.');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(405, 'MethodNotAllowed', 'The specified method is not allowed.');
    const expires = Number(url.searchParams.get('X-Expires'));
    const signature = url.searchParams.get('X-Signature') ?? '';
    if (!Number.isFinite(expires) || signature !== this.sign(key, expires)) return fail(403, 'SignatureDoesNotMatch', 'The request signature does not match.');
    if (this.opts.clock() > expires * 1000) {
      stats.expired++;
      return fail(403, 'AccessDenied', 'Request has expired');
    }
    const object = this.objects.get(key);
    if (!object) return fail(404, 'NoSuchKey', 'The specified key does not exist.');

    const total = object.bytes.length;
    let start = 0;
    let end = total - 1;
    let status = 200;
    const range = req.headers.range;
    if (range) {
      stats.rangeRequests++;
      const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
      if (!m || (m[1] === '' && m[2] === '')) return fail(416, 'InvalidRange', 'The requested range is not satisfiable');
      if (m[1] === '') {
        start = Math.max(0, total - Number(m[2]));
      } else {
        start = Number(m[1]);
        if (m[2] !== '') end = Math.min(end, Number(m[2]));
      }
      if (start >= total || start > end) {
        res.writeHead(416, { 'content-range': `bytes */${total}` });
        return void res.end();
      }
      status = 206;
    }
    const headers: Record<string, string | number> = {
      'content-type': object.contentType,
      'content-length': end - start + 1,
      'accept-ranges': 'bytes',
      etag: `"${createHmac('sha1', 'etag').update(object.bytes).digest('hex')}"`,
    };
    if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${total}`;
    res.writeHead(status, headers);
    if (req.method === 'HEAD') return void res.end();
    await this.stream(res, object.bytes.subarray(start, end + 1));
  }

  private async stream(res: ServerResponse, bytes: Buffer): Promise<void> {
    const stats = this.opts.stats.storage;
    if (!this.bytesPerSecond) {
      stats.bytesServed += bytes.length;
      res.end(bytes);
      return;
    }
    // Throttled: 10 slices a second, so an interrupted download has a meaningful offset.
    const slice = Math.max(1, Math.floor(this.bytesPerSecond / 10));
    for (let offset = 0; offset < bytes.length && !res.destroyed; offset += slice) {
      const chunk = bytes.subarray(offset, offset + slice);
      stats.bytesServed += chunk.length;
      if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
      await new Promise((r) => setTimeout(r, 100));
    }
    res.end();
  }
}
