/**
 * Bounded reads (issue 35): every body read from the network is read with a counter that stops at its cap.
 * A loopback server streams far more than the cap (chunked, so no length tells the client up front); the read
 * stops at the cap (the bytes read are counted), the failure names the cap, and the server sees its connection
 * closed long before it has sent everything.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/http/api-client';
import { TokenlessClient } from '../../src/http/tokenless';
import { BODY_LIMITS, BodyTooLarge, readCapped } from '../../src/http/body-limits';
import { FailureType } from '../../src/http/retry-policy';
import { startEmulator, type Emulator } from '@longhaul/emulator';
import { failureOf } from '../helpers/failures';
import { eventually } from '../helpers/wait';

const CAP = 64 * 1024;
const CHUNK = 16 * 1024;
/** What the server would send if nobody stopped reading: far past any socket buffer. */
const ENDLESS = 256 * 1024 * 1024;
/** The read stops at the chunk that crosses the cap: undici hands over at most 64 KiB at a time. */
const MAX_CHUNK = 64 * 1024;

interface Flood {
  url: string;
  /** Bytes the server managed to write before the client closed the connection. */
  written(): number;
  closed(): boolean;
}

let servers: Server[] = [];
afterEach(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  servers = [];
});

/** A loopback server that answers `status` with a JSON body of up to `ENDLESS` bytes, written as fast as it is read. */
async function flood(status: number, contentType = 'application/json'): Promise<Flood> {
  let written = 0;
  let closed = false;
  const server = createServer((req, res) => {
    res.writeHead(status, { 'content-type': contentType });
    const chunk = Buffer.alloc(CHUNK, 0x20);
    res.write('[');
    const pump = () => {
      while (written < ENDLESS && !closed) {
        written += CHUNK;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end(']');
    };
    res.on('close', () => (closed = true));
    pump();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, written: () => written, closed: () => closed };
}

describe('bounded reads', () => {
  it('readCapped stops at the cap and names it; with truncate it keeps the first bytes', async () => {
    const chunks = () => Readable.from(Array.from({ length: 100 }, () => Buffer.alloc(CHUNK, 0x61)));
    const refused = await readCapped(chunks(), { name: 'a test body', bytes: CAP }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BodyTooLarge);
    expect((refused as BodyTooLarge).bytesRead).toBe(CAP + CHUNK);
    expect((refused as BodyTooLarge).message).toBe(`the body is larger than 64 KiB (65536 bytes), the cap on a test body; the read stopped after ${CAP + CHUNK} bytes`);
    const kept = await readCapped(chunks(), { name: 'a test body', bytes: CAP }, { truncate: true });
    expect({ length: kept.bytes.length, truncated: kept.truncated, bytesRead: kept.bytesRead }).toEqual({ length: CAP, truncated: true, bytesRead: CAP + CHUNK });
  });

  it('an API success answer past its cap stops being read at the cap: a MalformedAnswer naming the cap, the connection closed', async () => {
    const server = await flood(200);
    const api = new ApiClient({ baseUrl: server.url, token: () => 'test-token', maxAnswerBytes: CAP, attempt: () => 1 });
    const failure = await failureOf(api.request({ method: 'GET', path: '/orgs/octo-org/migrations' }));
    expect(failure.type).toBe(FailureType.MalformedAnswer);
    expect(failure.message).toContain('the body is larger than 64 KiB (65536 bytes), the cap on an API answer');
    const details = failure.details?.[0] as { capBytes: number; bytesRead: number };
    expect(details.capBytes).toBe(CAP);
    expect(details.bytesRead).toBeGreaterThan(CAP);
    expect(details.bytesRead).toBeLessThanOrEqual(CAP + MAX_CHUNK);
    // The answer is judged like any malformed one: retryable within the malformed budget (an outage, not final).
    expect(failure.nonRetryable).toBe(false);
    await eventually(() => server.closed() || undefined, 'the server to see the connection closed');
    expect(server.written()).toBeLessThan(ENDLESS);
  });

  it('an API error answer is read for its message only: its first 64 KiB, then the connection is closed', async () => {
    const server = await flood(500, 'text/html');
    const api = new ApiClient({ baseUrl: server.url, token: () => 'test-token', attempt: () => 1 });
    const failure = await failureOf(api.request({ method: 'GET', path: '/orgs/octo-org/migrations' }));
    expect(failure.type).toBe(FailureType.Server);
    await eventually(() => server.closed() || undefined, 'the server to see the connection closed');
    expect(server.written()).toBeLessThan(ENDLESS);
    expect(BODY_LIMITS.apiErrorAnswer.bytes).toBe(64 * 1024);
  });

  it("a sink's success answer past its cap is the sink's retryable failure naming the cap; the read stops there", async () => {
    const server = await flood(200);
    // The sink is on loopback, as the API is (the emulator's case): the outbound policy lets it through.
    const loopbackApi = async () => ({ api: { protocol: 'http:', addresses: ['127.0.0.1'] }, allowedHosts: [] });
    const client = new TokenlessClient({ api: 'sink', route: '/sink', observer: { observe: () => undefined }, maxAnswerBytes: CAP, attempt: () => 1, outbound: loopbackApi });
    const failure = await failureOf(client.send({ method: 'POST', url: `${server.url}/hook`, body: '{}' }, { retry: 'SinkUnavailable', permanent: 'SinkRejected' }));
    expect(failure.type).toBe('SinkUnavailable');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('the body is larger than 64 KiB (65536 bytes), the cap on a sink answer');
    expect((failure.details?.[0] as { bytesRead: number }).bytesRead).toBeLessThanOrEqual(CAP + MAX_CHUNK);
    await eventually(() => server.closed() || undefined, 'the server to see the connection closed');
    expect(server.written()).toBeLessThan(ENDLESS);
  });
});

describe("the emulator's request bodies", () => {
  let emulator: Emulator | undefined;
  afterEach(async () => {
    await emulator?.close();
    emulator = undefined;
  });

  /** Sends `total` bytes of body (chunked unless `declare`); resolves with the status, or the error that ended the send. */
  function post(url: string, total: number, declare = false): Promise<{ status?: number; body?: string; sent: number }> {
    return new Promise((resolve) => {
      let sent = 0;
      const req = httpRequest(url, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json', ...(declare ? { 'content-length': String(total) } : {}) } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode, body, sent }));
        res.on('error', () => resolve({ status: res.statusCode, body, sent }));
      });
      req.on('error', () => resolve({ sent }));
      const chunk = Buffer.alloc(CHUNK, 0x20);
      const pump = () => {
        while (sent < total) {
          sent += CHUNK;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
  }

  it('answers 413 to a body past its cap, stops reading it and closes the connection', async () => {
    emulator = await startEmulator({ maxRequestBytes: CAP });
    const answer = await post(`${emulator.apiUrl}/orgs/octo-org/migrations`, ENDLESS);
    expect(answer.status).toBe(413);
    expect(answer.body).toContain(`larger than ${CAP} bytes`);
    expect(answer.sent).toBeLessThan(ENDLESS);
  });

  it('answers 413 to a declared content-length past its cap before reading a byte', async () => {
    emulator = await startEmulator({ maxRequestBytes: CAP });
    const answer = await post(`${emulator.apiUrl}/orgs/octo-org/migrations`, CAP + CHUNK, true);
    expect(answer.status).toBe(413);
  });

  it('still reads a body under its cap', async () => {
    emulator = await startEmulator({ maxRequestBytes: CAP });
    const res = await fetch(`${emulator.apiUrl}/orgs/octo-org/migrations`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ repositories: ['alpha'] }),
    });
    expect(res.status).toBe(201);
  });
});
