/**
 * The tests' counting relay (test/servers/counting-proxy.ts) in front of a server that closes the connection after
 * its answer, as versitygw does for every request: the reader gets the whole answer however slowly it reads.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startCountingProxy } from '../servers/counting-proxy';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server that answers each connection's first bytes with `bytes` bytes and closes; resolves when it closed. */
async function closingServer(bytes: number): Promise<{ port: number; closed: Promise<void> }> {
  let closedOne!: () => void;
  const closed = new Promise<void>((resolve) => (closedOne = resolve));
  const server = createServer((socket) => {
    socket.once('data', () => socket.end(Buffer.alloc(bytes, 7)));
    socket.on('close', () => closedOne());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, closed };
}

/** Reads the connection to its end, one chunk per turn of the timers, so the relay holds bytes it could not write. */
function readSlowly(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      socket.pause();
      setTimeout(() => socket.resume(), 1);
    });
    socket.on('end', () => resolve(received));
    socket.on('error', (err) => reject(Object.assign(err, { received })));
  });
}

describe('the counting relay', () => {
  it('delivers the whole answer of a server that closes after answering, to a reader slower than the server', async () => {
    const bytes = 8 * 1024 * 1024 + 1000;
    const origin = await closingServer(bytes);
    const relay = await startCountingProxy(origin.port);
    cleanups.push(() => relay.close());
    const socket = connect(relay.port, '127.0.0.1');
    cleanups.push(() => void socket.destroy());
    socket.write('GET / HTTP/1.1\r\n\r\n');
    const received = await readSlowly(socket);
    await origin.closed;
    expect(received).toBe(bytes);
    expect(relay.sentBytes()).toBe(Buffer.byteLength('GET / HTTP/1.1\r\n\r\n'));
  });
});
