/**
 * The streaming transport of the archive's storage client (`client.ts`, over the HTTP core's token-less client): a GET of a pre-signed storage URL with
 * the headers the client built (never a credential), no redirect followed (the caller checks every hop), and
 * the answer returned as it came: what a status means is the core's decision, made by the client.
 *
 * Why not `node:http` (or undici): for a 1 GiB body, `node:http` allocates a fresh 64 KiB Buffer per socket
 * read and runs it through the parser's and the stream's callbacks: about 1.2 s of CPU per GiB before any
 * byte is hashed or written (measured on the 2-core machine against the emulator's origin; curl spends
 * 1.1 s for reading AND writing it), and the garbage buffers grew RSS by 40–70 MB until an
 * external-memory GC. Here the socket reads into ONE reused buffer (`onread`, also for TLS) and the body
 * is handed to the consumer as views of it: 0.2–0.4 s of CPU per GiB and no per-read allocation. A
 * consumer may lend its own memory for the next read (`ReadTarget`: the archive sink lends the free tail
 * of the buffer it writes next), and then no body byte is copied in user space at all. The framing
 * (status line, headers, Content-Length / chunked / close) is `framing.ts`.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { Client } from 'undici';
import { bodyFramer, parseHead, requestHead, type BodyFramer } from './framing';
import { BODY_LIMITS } from '../../http/body-limits';
import { proxyAuthorization, shownProxy } from '../../http/proxy';

/** One socket read at most (reused for the whole answer). */
const READ_BUFFER = 1024 * 1024;

export interface StorageGet {
  /** Ask for the bytes from this offset on (`Range: bytes=N-`). */
  from?: number;
  /** Only honour `from` if the object still has this ETag or Last-Modified (`If-Range`). */
  ifRange?: string;
  signal?: AbortSignal;
  /** @format milliseconds — waiting for the response headers. */
  headersTimeoutMs?: number;
  /** @format milliseconds — silence between two body chunks. */
  bodyTimeoutMs?: number;
  /**
   * Connect to this address (one the outbound policy checked) instead of resolving the URL's host again: the
   * `Host` header and TLS's server name stay the URL's host.
   */
  address?: string;
  /**
   * Go through this forward proxy (`proxy.ts`'s `proxyFor`): https through a `CONNECT` tunnel to the URL's host name
   * (TLS end to end, the same one reused buffer on top), http as an absolute-form request to the proxy. `address`
   * is then not connected to: the proxy resolves the name itself.
   */
  proxy?: URL;
}

export interface StorageResponse {
  statusCode: number;
  /** Lower-case names, repeated fields joined with `, `. */
  headers: Record<string, string>;
  body: StorageBody;
}

/** Takes one piece of the body: a view of the read buffer, valid only during the call. `false` asks for a pause. */
export type BodyConsumer = (chunk: Buffer) => boolean;

/**
 * Where the next socket read goes: memory of the consumer's own (e.g. the free tail of the buffer it
 * writes to disk next, so no body byte is copied in user space), or undefined for the transport's buffer.
 * The consumer then sees a chunk that is a view of that memory.
 */
export type ReadTarget = () => Buffer | undefined;

/**
 * A response body read straight from its socket. Nothing flows until `deliver` names the consumer (what
 * arrived meanwhile is kept, copied, and the socket paused).
 */
export class StorageBody {
  private consumer?: BodyConsumer;
  private target?: ReadTarget;
  private early: Buffer[] = [];
  private outcome?: { error?: Error };
  /** The connection ended before `deliver`: judged once the early bytes were fed. */
  private pendingEnd?: { error?: Error };
  private settle?: (error: Error | undefined) => void;

  constructor(
    private readonly socket: Socket,
    private readonly framer: BodyFramer,
  ) {}

  /** True once the body is complete, broken off or destroyed. */
  get destroyed(): boolean {
    return this.outcome !== undefined;
  }

  /**
   * Hands every body byte to `consume` until the body ends. Resolves with undefined when it is complete,
   * or with the error that broke it off (connection closed early, timeout, `destroy`).
   */
  deliver(consume: BodyConsumer, target?: ReadTarget): Promise<Error | undefined> {
    this.consumer = consume;
    this.target = target;
    for (const chunk of this.early.splice(0)) this.take(chunk);
    if (this.pendingEnd) this.ended(this.pendingEnd.error);
    if (this.outcome) return Promise.resolve(this.outcome.error);
    this.socket.resume();
    return new Promise((resolve) => (this.settle = resolve));
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    if (!this.outcome) this.socket.resume();
  }

  /** Stops reading and closes the connection (it is never reused). */
  destroy(error?: Error): void {
    this.finish(error ?? new Error('the body was not read to its end'));
  }

  /** @internal The memory for the next socket read, if the consumer lends its own. */
  readTarget(): Buffer | undefined {
    return this.outcome ? undefined : this.target?.();
  }

  /** @internal Body bytes from the socket; false pauses it. */
  take(bytes: Buffer): boolean {
    if (this.outcome) return false;
    if (!this.consumer) {
      this.early.push(Buffer.from(bytes));
      return false;
    }
    let flowing = true;
    this.framer.feed(bytes, (chunk) => {
      if (!this.outcome && !this.consumer!(chunk)) flowing = false;
    });
    if (this.framer.done) this.finish(undefined);
    return flowing && !this.outcome;
  }

  /** @internal The connection ended (FIN, error or close). */
  ended(error?: Error): void {
    if (this.outcome) return;
    if (!this.consumer) {
      this.pendingEnd ??= { error };
      return;
    }
    if (!error && (this.framer.endsWithClose || this.framer.done)) return this.finish(undefined);
    this.finish(error ?? new Error('the connection closed before the announced length'));
  }

  private finish(error: Error | undefined): void {
    if (this.outcome) return;
    this.outcome = { error };
    this.socket.destroy();
    this.settle?.(error);
  }
}

/** `Range` and `If-Range` of a resumed GET. */
export function rangeHeaders(opts: StorageGet): Record<string, string> {
  const headers: Record<string, string> = {};
  if (opts.from !== undefined) headers.range = `bytes=${opts.from}-`;
  if (opts.from !== undefined && opts.ifRange) headers['if-range'] = opts.ifRange;
  return headers;
}

/** Sends exactly `headers` (the token-less client's); use `TokenlessClient.get`, which builds them. */
export async function storageGet(url: URL, headers: Record<string, string>, opts: StorageGet = {}): Promise<StorageResponse> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`cannot GET ${url.protocol} URLs`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const tunnel = opts.proxy && url.protocol === 'https:' ? await openTunnel(opts.proxy, host, port, opts) : undefined;
  return exchange(url, headers, opts, host, port, tunnel);
}

/**
 * A `CONNECT` tunnel through the proxy to `host:port` (undici's client speaks to the proxy, as its `ProxyAgent`
 * does), handed over as the raw connection for TLS to go on top. The target is the host NAME the outbound policy
 * checked, so a proxy that filters by name sees the real one.
 */
async function openTunnel(proxy: URL, host: string, port: number, opts: StorageGet): Promise<Duplex> {
  const authority = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  const authorization = proxyAuthorization(proxy);
  const client = new Client(proxy.origin, { headersTimeout: opts.headersTimeoutMs ?? 30_000 });
  try {
    const { socket, statusCode } = await client.connect({
      path: authority,
      headers: { host: authority, ...(authorization ? { 'proxy-authorization': authorization } : {}) },
      signal: opts.signal,
    });
    if (statusCode !== 200) {
      socket.destroy();
      throw new Error(`the proxy ${shownProxy(proxy)} answered ${statusCode} to CONNECT ${authority}`);
    }
    return socket;
  } finally {
    // The tunnel's socket left the client when the proxy answered (undici detaches an upgraded socket).
    void client.close().catch(() => undefined);
  }
}

function exchange(url: URL, headers: Record<string, string>, opts: StorageGet, host: string, port: number, tunnel: Duplex | undefined): Promise<StorageResponse> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    let body: StorageBody | undefined;
    const onread = (length: number, buffer: Buffer): boolean => {
      const bytes = buffer.subarray(0, length);
      if (body) return body.take(bytes);
      head = Buffer.concat([head, bytes]);
      try {
        for (;;) {
          const parsed = parseHead(head);
          if (!parsed) return true;
          head = head.subarray(parsed.length);
          // 1xx answers (e.g. 103 Early Hints) precede the real one.
          if (parsed.head.statusCode < 200) continue;
          clearTimeout(headersTimer);
          const bodyTimeoutMs = opts.bodyTimeoutMs ?? 60_000;
          socket.setTimeout(bodyTimeoutMs, () => fail(new Error(`no body bytes for ${bodyTimeoutMs} ms`)));
          body = new StorageBody(socket, bodyFramer(parsed.head));
          resolve({ statusCode: parsed.head.statusCode, headers: parsed.head.headers, body });
          return head.length > 0 ? body.take(head) : body.take(Buffer.alloc(0));
        }
      } catch (err) {
        fail(err as Error);
        return false;
      }
    };
    const own = Buffer.allocUnsafe(READ_BUFFER);
    // Asked before every read: the consumer's memory once the body flows, else the one reused buffer.
    const read = { buffer: () => body?.readTarget() ?? own, callback: onread };
    const to = opts.address ?? host;
    const proxy = opts.proxy;
    const proxyPort = proxy ? Number(proxy.port) || (proxy.protocol === 'https:' ? 443 : 80) : 0;
    const proxyHost = proxy?.hostname.replace(/^\[(.*)\]$/, '$1') ?? '';
    const socket: Socket =
      url.protocol === 'https:'
        ? tlsConnect({ ...(tunnel ? { socket: tunnel } : { host: to, port }), servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'], onread: read } as unknown as ConnectionOptions)
        : !proxy
          ? netConnect({ host: to, port, onread: read })
          : proxy.protocol === 'https:'
            ? tlsConnect({ host: proxyHost, port: proxyPort, servername: isIP(proxyHost) ? undefined : proxyHost, onread: read } as ConnectionOptions)
            : netConnect({ host: proxyHost, port: proxyPort, onread: read });
    // Node takes no `onread` for TLS over an existing connection (the tunnel): its reads arrive as chunks of their
    // own, handed on the same way (a consumer that lent memory copies them; see the bench's figures through a proxy).
    if (tunnel) socket.on('data', (chunk: Buffer) => void (onread(chunk.length, chunk) || socket.pause()));
    const fail = (err: Error) => {
      if (body) return body.ended(err);
      socket.destroy();
      reject(err);
    };
    const headersTimeoutMs = opts.headersTimeoutMs ?? 30_000;
    const headersTimer = setTimeout(() => fail(new Error(`no response headers within ${headersTimeoutMs} ms`)), headersTimeoutMs);
    const onAbort = () => fail(opts.signal!.reason as Error);
    if (opts.signal?.aborted) return fail(opts.signal.reason as Error);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('error', fail);
    socket.once('end', () => (body ? body.ended() : fail(new Error('the connection closed before a response'))));
    socket.once('close', () => {
      clearTimeout(headersTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      fail(new Error('the connection closed before the announced length'));
    });
    try {
      // Plain http through a proxy: the absolute URL as the request target (RFC 9112, 3.2.2), and its credentials.
      const authorization = proxy && !tunnel ? proxyAuthorization(proxy) : undefined;
      socket.write(requestHead(url, authorization ? { ...headers, 'proxy-authorization': authorization } : headers, Boolean(proxy && !tunnel)));
    } catch (err) {
      fail(err as Error);
    }
  });
}

/** At most `max` bytes of a body, for messages (`BODY_LIMITS.storageMessage`); the rest is not read (an error page may be huge). */
export async function readHead(body: StorageBody, max: number = BODY_LIMITS.storageMessage.bytes): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  // What arrived before an error is enough for a message.
  await body.deliver((chunk) => {
    if (length < max) chunks.push(Buffer.from(chunk.subarray(0, max - length)));
    length += chunk.length;
    if (length >= max) body.destroy();
    return length < max;
  });
  body.destroy();
  return Buffer.concat(chunks);
}

/** Discards a body that is not needed (the connection is not reused: it is simply closed). */
export function discard(body: StorageBody): void {
  body.destroy();
}
