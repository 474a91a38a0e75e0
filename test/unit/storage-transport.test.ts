/**
 * The storage transport (`src/archive/storage/transport.ts`, `framing.ts`): the HTTP/1.1 framing as pure
 * functions, then the socket reader against real servers — chunked, close-delimited and broken-off bodies,
 * backpressure, timeouts and cancellation.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { bodyFramer, parseHead, requestHead } from '../../src/archive/storage/framing';
import { readHead, storageGet, type StorageBody } from '../../src/archive/storage/transport';

const servers: (HttpServer | NetServer)[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function listen(server: HttpServer | NetServer): Promise<URL> {
  servers.push(server);
  server.on('connection', (socket: Socket) => sockets.push(socket));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/object?X-Signature=s`);
}

/** A server writing `raw` bytes as its whole answer, then doing `after` with the socket. */
function rawServer(raw: Buffer | string, after: (socket: Socket) => void = (s) => s.end()): Promise<URL> {
  return listen(
    createNetServer((socket) => {
      socket.once('data', () => socket.write(raw, () => after(socket)));
      socket.on('error', () => undefined);
    }),
  );
}

async function collect(body: StorageBody): Promise<{ bytes: Buffer; error?: Error }> {
  const chunks: Buffer[] = [];
  const error = await body.deliver((chunk) => {
    chunks.push(Buffer.from(chunk));
    return true;
  });
  return { bytes: Buffer.concat(chunks), error };
}

describe('storage transport: HTTP/1.1 framing', () => {
  it('parses a head once it is complete, lower-casing names and joining repeated fields', () => {
    const head = Buffer.from('HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 5-9/10\r\nX-A: 1\r\nx-a: 2\r\n\r\nbody');
    expect(parseHead(head.subarray(0, 30))).toBeUndefined();
    const parsed = parseHead(head)!;
    expect(parsed.head).toEqual({ statusCode: 206, headers: { 'content-range': 'bytes 5-9/10', 'x-a': '1, 2' } });
    expect(head.subarray(parsed.length).toString()).toBe('body');
    expect(() => parseHead(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n'))).toThrow('not an HTTP/1.1 status line');
    expect(() => parseHead(Buffer.from('HTTP/1.1 200 OK\r\nno colon here\r\n\r\n'))).toThrow('malformed response header');
  });

  it('refuses request headers that would split the request', () => {
    const url = new URL('http://storage.example:9000/a%20b?sig=1');
    expect(requestHead(url, { range: 'bytes=5-' })).toBe('GET /a%20b?sig=1 HTTP/1.1\r\nhost: storage.example:9000\r\nrange: bytes=5-\r\nconnection: close\r\n\r\n');
    expect(() => requestHead(url, { 'if-range': '"x"\r\nAuthorization: Bearer t' })).toThrow('invalid request header');
    expect(() => requestHead(url, { 'bad name': 'x' })).toThrow('invalid request header');
  });

  it('decodes a chunked body split at every possible byte, and stops at its end', () => {
    const wire = Buffer.from('5;ext=1\r\nhello\r\n1\r\n \r\nB\r\nchunked bod\r\n0\r\nX-Trailer: t\r\n\r\nNEXT');
    for (let split = 0; split <= wire.length; split++) {
      const framer = bodyFramer({ statusCode: 200, headers: { 'transfer-encoding': 'chunked', 'content-length': '999' } });
      const out: Buffer[] = [];
      const used = framer.feed(wire.subarray(0, split), (b) => out.push(Buffer.from(b))) + framer.feed(wire.subarray(split), (b) => out.push(Buffer.from(b)));
      expect(Buffer.concat(out).toString()).toBe('hello chunked bod');
      expect(framer.done).toBe(true);
      expect(used).toBe(wire.length - 'NEXT'.length);
    }
    expect(() => bodyFramer({ statusCode: 200, headers: { 'transfer-encoding': 'chunked' } }).feed(Buffer.from('zz\r\n'), () => undefined)).toThrow('invalid chunk size');
  });

  it('knows bodies without bytes, with a length, and delimited by the close', () => {
    expect(bodyFramer({ statusCode: 304, headers: { 'content-length': '10' } }).done).toBe(true);
    const length = bodyFramer({ statusCode: 200, headers: { 'content-length': '3' } });
    expect(length.feed(Buffer.from('abcdef'), () => undefined)).toBe(3);
    expect(length.done).toBe(true);
    expect(bodyFramer({ statusCode: 200, headers: {} }).endsWithClose).toBe(true);
    expect(() => bodyFramer({ statusCode: 200, headers: { 'content-length': '1, 2' } })).toThrow('invalid Content-Length');
  });
});

describe('storage transport: reading from the socket', () => {
  it("reads node:http's chunked answer to the end, with the request's headers as sent", async () => {
    const payload = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    let seen: Record<string, unknown> = {};
    const url = await listen(
      createHttpServer((req, res) => {
        seen = req.headers;
        res.writeHead(200, { 'content-type': 'application/gzip' });
        for (let at = 0; at < payload.length; at += 100_000) res.write(payload.subarray(at, at + 100_000));
        res.end();
      }),
    );
    const res = await storageGet(url, { 'user-agent': 'longhaul/0.1', range: 'bytes=5-' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const { bytes, error } = await collect(res.body);
    expect(error).toBeUndefined();
    expect(bytes.equals(payload)).toBe(true);
    expect(seen).toMatchObject({ 'user-agent': 'longhaul/0.1', range: 'bytes=5-', host: url.host });
  });

  it('completes a body without a length at the close, and breaks one that closes before its length', async () => {
    const open = await storageGet(await rawServer('HTTP/1.0 200 OK\r\n\r\nuntil the close'), {});
    expect(await collect(open.body)).toEqual({ bytes: Buffer.from('until the close'), error: undefined });
    const short = await storageGet(await rawServer('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this'), {});
    const broken = await collect(short.body);
    expect(broken.bytes.toString()).toBe('only this');
    expect(broken.error?.message).toBe('the connection closed before the announced length');
  });

  it('skips a 1xx answer, and keeps a small body that arrived before anyone read it', async () => {
    const url = await rawServer('HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 403 Forbidden\r\nContent-Length: 12\r\n\r\nAccessDenied');
    const res = await storageGet(url, {});
    expect(res.statusCode).toBe(403);
    await new Promise((r) => setTimeout(r, 50));
    expect((await readHead(res.body)).toString()).toBe('AccessDenied');
  });

  it('pauses while the consumer asks it to and delivers every byte after resuming', async () => {
    const payload = Buffer.alloc(8 * 1024 * 1024, 1);
    const url = await listen(createHttpServer((_req, res) => res.writeHead(200, { 'content-length': payload.length }).end(payload)));
    const res = await storageGet(url, {});
    let received = 0;
    let pauses = 0;
    const error = await res.body.deliver((chunk) => {
      received += chunk.length;
      if (pauses < 3) {
        pauses++;
        setTimeout(() => res.body.resume(), 20);
        return false;
      }
      return true;
    });
    expect(error).toBeUndefined();
    expect(pauses).toBe(3);
    expect(received).toBe(payload.length);
  });

  it("reads into the consumer's memory when it lends some, and into its own buffer when it does not", async () => {
    const payload = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < payload.length; i += 4) payload.writeUInt32LE(i, i);
    const url = await listen(createHttpServer((_req, res) => res.writeHead(200, { 'content-length': payload.length }).end(payload)));
    const lent = Buffer.alloc(payload.length);
    let filled = 0;
    let lentChunks = 0;
    let ownChunks = 0;
    let reads = 0;
    const { body } = await storageGet(url, {});
    const error = await body.deliver(
      (chunk) => {
        if (chunk.buffer === lent.buffer && chunk.byteOffset === lent.byteOffset + filled) {
          lentChunks++;
        } else {
          ownChunks++;
          chunk.copy(lent, filled);
        }
        filled += chunk.length;
        return true;
      },
      // Every other read into the lent memory: both kinds of chunk must land in order.
      () => (reads++ % 2 === 0 ? lent.subarray(filled) : undefined),
    );
    expect(error).toBeUndefined();
    expect(lent.equals(payload)).toBe(true);
    expect(lentChunks).toBeGreaterThan(0);
    expect(ownChunks).toBeGreaterThan(0);
  });

  it('rejects when no head arrives in time, and ends the body with the abort reason when cancelled', async () => {
    const silent = await listen(createNetServer(() => undefined));
    await expect(storageGet(silent, {}, { headersTimeoutMs: 50 })).rejects.toThrow('no response headers within 50 ms');
    const stalled = await rawServer('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsome', () => undefined);
    const abort = new AbortController();
    const res = await storageGet(stalled, {}, { signal: abort.signal });
    const delivered = collect(res.body);
    abort.abort(new Error('worker stopped'));
    expect((await delivered).error?.message).toBe('worker stopped');
    const timed = await storageGet(stalled, {}, { bodyTimeoutMs: 50 });
    expect((await collect(timed.body)).error?.message).toBe('no body bytes for 50 ms');
  });
});
