/**
 * A separate "object store" origin that serves archive bytes behind pre-signed, expiring URLs, the way
 * the real service redirects archive downloads to cloud storage. Like a real object store it supports
 * `Range` with `If-Range` (an `ETag` or `Last-Modified` that no longer matches gets the whole new object,
 * RFC 9110 §13.1.5), and it rejects any request that carries an `Authorization` header: a client that
 * forwards its API token across the redirect fails here (and would leak the token in production).
 *
 * Objects are bytes or generated content (any size, never held in memory). Faults (`faults.ts`)
 * make it misbehave on purpose.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHmac, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { EmulatorStats } from '../stats';
import { contentBytes, generatedArchive, type GeneratedContent } from './archive-content';
import { StorageFaults, type StorageFault } from './faults';
import type { Durable } from '../persistence/durable';

export interface StoredObject {
  bytes: Buffer | GeneratedContent;
  contentType: string;
}

interface Entry extends StoredObject {
  etag: string;
  /** @format epoch milliseconds, whole seconds (HTTP dates have no more) */
  lastModified: number;
  /** How often the object was replaced by a `change` fault. */
  generation: number;
}

export interface StorageOptions {
  host: string;
  port: number;
  clock: () => number;
  stats: EmulatorStats;
  /** Throttle downloads to this many bytes per second (0 = unthrottled), so tests can interrupt one mid-stream. */
  bytesPerSecond?: number;
  /**
   * The address clients reach the origin at, which its pre-signed URLs use (`https://storage.example.test`, a
   * proxy or a port-forward in front of it); default the address it listens on.
   */
  publicUrl?: string;
}

/** Throttled downloads send this many slices a second, so an interrupted one has a fine-grained offset. */
const SLICES_PER_SECOND = 50;

export class StorageOrigin {
  private readonly objects = new Map<string, Entry>();
  private secret = randomBytes(16).toString('hex');
  private server?: Server;
  readonly faults = new StorageFaults();
  /** Where the origin listens (known once listening). */
  baseUrl = '';
  bytesPerSecond: number;

  constructor(private readonly opts: StorageOptions) {
    this.bytesPerSecond = opts.bytesPerSecond ?? 0;
  }

  /** The address its pre-signed URLs carry: the configured public URL, or where it listens. */
  get publicUrl(): string {
    return this.opts.publicUrl?.replace(/\/+$/, '') ?? this.baseUrl;
  }

  put(key: string, object: StoredObject): void {
    const previous = this.objects.get(key);
    // A replaced object must not share the old Last-Modified, or an If-Range date would still match.
    const now = Math.floor(this.opts.clock() / 1000) * 1000;
    const lastModified = previous ? Math.max(now, previous.lastModified + 1000) : now;
    this.objects.set(key, { ...object, etag: etagOf(object.bytes), lastModified, generation: previous?.generation ?? 0 });
  }

  delete(key: string): void {
    this.objects.delete(key);
  }

  has(key: string): boolean {
    return this.objects.has(key);
  }

  /** The object's current bytes (tests: the expected content after a `change` fault). */
  bytesOf(key: string): Buffer | undefined {
    const entry = this.objects.get(key);
    if (!entry) return undefined;
    return Buffer.isBuffer(entry.bytes) ? entry.bytes : contentBytes(entry.bytes);
  }

  /**
   * The objects and the signing secret survive a restart (with a data directory), so a URL signed before
   * it still works and an archive keeps its bytes, ETag and Last-Modified: a resumed download stays valid.
   * Generated content is saved by its seed and size, never its bytes.
   */
  readonly durable: Durable<{ secret: string; objects: Map<string, Omit<Entry, 'bytes'> & { bytes: Buffer | { seed: string; size: number } }> }> = {
    snapshot: () => ({
      secret: this.secret,
      objects: new Map([...this.objects].map(([key, e]) => [key, { ...e, bytes: Buffer.isBuffer(e.bytes) ? e.bytes : { seed: e.bytes.seed, size: e.bytes.size } }])),
    }),
    restore: (saved) => {
      this.secret = saved.secret;
      this.objects.clear();
      for (const [key, e] of saved.objects) this.objects.set(key, { ...e, bytes: Buffer.isBuffer(e.bytes) ? e.bytes : generatedArchive(e.bytes.seed, e.bytes.size) });
    },
  };

  /** Replaces the fault rules. */
  setFaults(faults: StorageFault[]): void {
    this.faults.set(faults);
  }

  /** A URL for `key` that stops working `ttlMs` from now. */
  presign(key: string, ttlMs: number): string {
    const override = this.faults.pick(['presign']);
    if (override) return override.location;
    const expires = Math.floor((this.opts.clock() + ttlMs) / 1000);
    const signature = this.sign(key, expires);
    return `${this.publicUrl}/${encodeURIComponent(key)}?X-Expires=${expires}&X-Signature=${signature}`;
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
    const redirect = this.faults.pick(['redirect']);
    if (redirect) {
      res.writeHead(302, { location: redirect.location ?? url.href });
      return void res.end();
    }
    const expires = Number(url.searchParams.get('X-Expires'));
    const signature = url.searchParams.get('X-Signature') ?? '';
    if (!Number.isFinite(expires) || signature !== this.sign(key, expires)) return fail(403, 'SignatureDoesNotMatch', 'The request signature does not match.');
    if (this.opts.clock() > expires * 1000) {
      stats.expired++;
      return fail(403, 'AccessDenied', 'Request has expired');
    }
    const page = this.faults.pick(['page']);
    if (page) {
      res.writeHead(page.status ?? 200, { 'content-type': page.contentType, 'content-length': Buffer.byteLength(page.body) });
      return void res.end(page.body);
    }
    if (this.objects.has(key) && this.faults.pick(['change'])) this.change(key);
    const object = this.objects.get(key);
    if (!object) return fail(404, 'NoSuchKey', 'The specified key does not exist.');

    const total = sizeOf(object.bytes);
    let start = 0;
    let end = total - 1;
    let status = 200;
    const range = req.headers.range;
    const honoured = range !== undefined && this.faults.pick(['ignore-range']) === undefined;
    if (range && honoured && this.ifRangeMatches(req.headers['if-range'] as string | undefined, object)) {
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
    const contentType = this.faults.pick(['content-type'])?.contentType ?? object.contentType;
    const headers: Record<string, string | number> = {
      'content-type': contentType,
      'content-length': end - start + 1,
      'accept-ranges': 'bytes',
      etag: object.etag,
      'last-modified': new Date(object.lastModified).toUTCString(),
    };
    if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${total}`;
    res.writeHead(status, headers);
    if (req.method === 'HEAD') return void res.end();
    const short = this.faults.pick(['short']);
    let stopAt = end + 1;
    if (short?.sendBytes !== undefined) stopAt = Math.min(stopAt, start + short.sendBytes);
    if (short?.untilOffset !== undefined) stopAt = Math.min(stopAt, Math.max(start, short.untilOffset));
    await this.stream(res, object.bytes, start, stopAt);
    if (stopAt > end) return void res.end();
    // A short answer: the connection closes (FIN after what was written, never a reset that would drop it)
    // before the announced length went out.
    res.socket?.end();
  }

  /**
   * RFC 9110 §13.1.5: a Range is honoured only when `If-Range` (if sent) still names this representation —
   * a strong ETag compared strongly, or exactly the Last-Modified date.
   */
  private ifRangeMatches(ifRange: string | undefined, object: Entry): boolean {
    if (ifRange === undefined) return true;
    const value = ifRange.trim();
    if (value.startsWith('"') || value.startsWith('W/')) return value === object.etag;
    const date = Date.parse(value);
    return Number.isFinite(date) && date === object.lastModified;
  }

  /** New content for `key` (a `change` fault): same size, other bytes, new validators. */
  private change(key: string): void {
    const entry = this.objects.get(key)!;
    const generation = entry.generation + 1;
    const bytes = generatedArchive(`${key}#${generation}`, sizeOf(entry.bytes));
    this.put(key, { bytes: Buffer.isBuffer(entry.bytes) ? contentBytes(bytes) : bytes, contentType: entry.contentType });
    this.objects.get(key)!.generation = generation;
  }

  /** Writes bytes `[start, stop)` with backpressure (and the throttle, when set). */
  private async stream(res: ServerResponse, bytes: Buffer | GeneratedContent, start: number, stop: number): Promise<void> {
    const stats = this.opts.stats.storage;
    const slice = this.bytesPerSecond ? Math.max(1, Math.floor(this.bytesPerSecond / SLICES_PER_SECOND)) : 1024 * 1024;
    // Generated content is filled into a few reused buffers: fresh 1 MiB allocations would cost more than the copy.
    const pool = Buffer.isBuffer(bytes) ? undefined : new BufferPool(POOL_BUFFERS, Math.min(slice, 1024 * 1024));
    for (let at = start; at < stop; ) {
      if (res.destroyed) return;
      let piece: Buffer;
      let release = () => undefined as void;
      if (Buffer.isBuffer(bytes)) {
        piece = bytes.subarray(at, Math.min(stop, at + slice));
      } else {
        const buffer = await pool!.take(res);
        if (!buffer) return;
        piece = buffer.subarray(0, bytes.fill(buffer.subarray(0, Math.min(buffer.length, stop - at)), at));
        release = () => pool!.give(buffer);
      }
      at += piece.length;
      stats.bytesServed += piece.length;
      if (!res.write(piece, release)) await drained(res);
      if (this.bytesPerSecond) await new Promise((r) => setTimeout(r, 1000 / SLICES_PER_SECOND));
    }
  }
}

/** Buffers in flight per generated response: enough to keep the socket busy while the next one is filled. */
const POOL_BUFFERS = 8;

/** Reusable buffers, handed back once the socket wrote them. */
class BufferPool {
  private readonly free: Buffer[] = [];
  private waiter?: () => void;

  constructor(count: number, size: number) {
    for (let i = 0; i < count; i++) this.free.push(Buffer.allocUnsafe(size));
  }

  /** A free buffer, or undefined once the response is gone. */
  async take(res: ServerResponse): Promise<Buffer | undefined> {
    while (this.free.length === 0) {
      if (res.destroyed) return undefined;
      await new Promise<void>((resolve) => {
        const wake = () => {
          res.off('close', wake);
          resolve();
        };
        this.waiter = wake;
        res.once('close', wake);
      });
    }
    return this.free.pop();
  }

  give(buffer: Buffer): void {
    this.free.push(buffer);
    const wake = this.waiter;
    this.waiter = undefined;
    wake?.();
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

function sizeOf(bytes: Buffer | GeneratedContent): number {
  return Buffer.isBuffer(bytes) ? bytes.length : bytes.size;
}

function etagOf(bytes: Buffer | GeneratedContent): string {
  const id = Buffer.isBuffer(bytes) ? createHmac('sha1', 'etag').update(bytes).digest('hex') : createHmac('sha1', 'etag').update(`${bytes.seed}:${bytes.size}`).digest('hex');
  return `"${id}"`;
}
