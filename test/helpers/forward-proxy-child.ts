/**
 * A real forward proxy (the `proxy` package: CONNECT tunnels and absolute-form http requests, as Squid serves
 * them) in a process of its own, for `forward-proxy.ts`. Its outgoing connections leave from `LOCAL_ADDRESS`
 * (127.0.0.2), the only source address the test's origins accept. Input: one JSON argument; prints one JSON line
 * per event on stdout: `listening` (its port), then every `connect`/`request` it was asked for and every refused
 * authentication.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ForwardProxyInput {
  /** The address its outgoing connections leave from. */
  localAddress: string;
  /** `user:password` the clients must send (`Proxy-Authorization: Basic`), or none. */
  credentials?: string;
}

export type ForwardProxyEvent = { kind: 'listening'; port: number } | { kind: 'connect' | 'request' | 'refused'; target: string };

/** What the package adds to the server (its types need a module resolution this project does not use). */
interface ProxyServer extends Server {
  localAddress?: string;
  authenticate?: (req: IncomingMessage) => boolean | Promise<boolean>;
}

const say = (event: ForwardProxyEvent) => process.stdout.write(`${JSON.stringify(event)}\n`);

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]) as ForwardProxyInput;
  // The package is ESM only.
  const { createProxy } = (await import('proxy' as string)) as { createProxy: (server: Server) => ProxyServer };
  const server = createProxy(createServer());
  server.localAddress = input.localAddress;
  const expected = input.credentials ? `Basic ${Buffer.from(input.credentials).toString('base64')}` : undefined;
  server.authenticate = (req: IncomingMessage) => {
    const ok = expected === undefined || req.headers['proxy-authorization'] === expected;
    if (!ok) say({ kind: 'refused', target: req.url ?? '' });
    return ok;
  };
  server.on('connect', (req: IncomingMessage) => say({ kind: 'connect', target: req.url ?? '' }));
  server.on('request', (req: IncomingMessage) => say({ kind: 'request', target: req.url ?? '' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  say({ kind: 'listening', port: (server.address() as AddressInfo).port });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
