/**
 * A loopback TCP relay in front of a store server that counts the bytes clients send through it, so tests and
 * the benchmark can say how much of an archive was sent to the store in all (re-uploads included), whichever
 * SDK sent it. `refuse()` makes it drop every connection, as a store that fails every request would;
 * `failWith()` decides per connection: dropped, or answered `503 Service Unavailable` (S3's XML error) and closed.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** `http://127.0.0.1:PORT`. */
  endpoint: string;
  port: number;
  /** Bytes clients sent through the relay so far. */
  sentBytes(): number;
  /** While refusing, every connection (new and open) is dropped. */
  refuse(on: boolean): void;
  /**
   * From now on, `decide()` is asked for each new connection: `refuse` drops it, `unavailable` answers its request
   * 503 and closes it, `undefined` relays it. Connections already open are dropped. `failWith(undefined)` ends it.
   */
  failWith(decide: (() => ConnectionFault | undefined) | undefined): void;
  /** Connections failed by `failWith`, by fault. */
  failed(): Record<ConnectionFault, number>;
  close(): Promise<void>;
}

export type ConnectionFault = 'refuse' | 'unavailable';

const UNAVAILABLE_BODY = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code><Message>down</Message></Error>';
const UNAVAILABLE = `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/xml\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(UNAVAILABLE_BODY)}\r\n\r\n${UNAVAILABLE_BODY}`;

export async function startCountingProxy(targetPort: number, listenPort = 0, host = '127.0.0.1'): Promise<CountingProxy> {
  let sent = 0;
  let refusing = false;
  let decide: (() => ConnectionFault | undefined) | undefined;
  const failures: Record<ConnectionFault, number> = { refuse: 0, unavailable: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const fault = decide?.();
    if (fault) {
      failures[fault]++;
      client.on('error', () => undefined);
      // Answered once the request has begun arriving, as a store would; the rest of it is not read.
      if (fault === 'unavailable') client.once('data', () => client.end(UNAVAILABLE));
      else client.destroy();
      return;
    }
    const upstream = connect(targetPort, host);
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (d: Buffer) => (sent += d.length));
    // pipe() ends each side once the other has ended, after writing what it still holds: a store that closes the
    // connection after its answer (versitygw answers every request `Connection: close`) must not lose the answer's
    // tail to a reader slower than the store. Destroying the other side on 'close' did: a read-back of an archive
    // ended "aborted" in a clean-clone run on a busy machine.
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    // A side destroyed without ending (refuse(), failWith()) ends nothing through pipe(): end the other one here.
    client.on('close', () => {
      sockets.delete(client);
      upstream.end();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(listenPort, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://${host}:${port}`,
    port,
    sentBytes: () => sent,
    refuse(on) {
      refusing = on;
      if (on) for (const s of sockets) s.destroy();
    },
    failWith(next) {
      decide = next;
      if (next) for (const s of sockets) s.destroy();
    },
    failed: () => ({ ...failures }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
