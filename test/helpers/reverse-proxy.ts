/**
 * A reverse proxy in front of an emulator origin, as a front end mounting it under a path of its own host would
 * (`http://127.0.0.1:P/api/v3/…` → `<target>/…`; anything else is a 404): for the emulator's public-URL options. The target is read per
 * request, so the proxy can start before the origin it forwards to (which listens on a free port).
 */
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReverseProxy {
  /** The proxy's base URL, its path prefix included. */
  url: string;
  /** The paths it forwarded, prefix removed, in order. */
  forwarded: string[];
  close(): Promise<void>;
}

export async function startReverseProxy(target: () => string, prefix: string): Promise<ReverseProxy> {
  const forwarded: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    // Only what is under its prefix is forwarded, so a link that lost the prefix shows as a 404.
    if (!(url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`))) {
      res.writeHead(404);
      res.end();
      return;
    }
    const path = url.slice(prefix.length) || '/';
    forwarded.push(path);
    const upstream = forward(`${target()}${path}`, { method: req.method, headers: { ...req.headers, host: new URL(target()).host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`,
    forwarded,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
