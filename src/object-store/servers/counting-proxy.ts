/**
 * A loopback TCP relay in front of a store server that counts the bytes clients send through it, so tests and
 * the benchmark can say how much of an archive was sent to the store in all (re-uploads included), whichever
 * SDK sent it. `refuse()` makes it drop every connection, as a store that fails every request would.
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
  close(): Promise<void>;
}

export async function startCountingProxy(targetPort: number, listenPort = 0, host = '127.0.0.1'): Promise<CountingProxy> {
  let sent = 0;
  let refusing = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, host);
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (d: Buffer) => (sent += d.length));
    client.pipe(upstream);
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
