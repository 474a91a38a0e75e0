/**
 * The corporate egress of the proxy tests: a real forward proxy in a process of its own (`forward-proxy-child.ts`),
 * and origins that only it can reach (`startProxyOnlyGate`): a gate on 127.0.0.1 in front of an origin that accepts a
 * connection only from the proxy's own source address (127.0.0.2) and closes any other at once, counting both. A
 * worker that bypassed the proxy would be refused and counted; one that used it leaves a line in the proxy's log.
 * A gate can also terminate TLS with a certificate of the test's own CA (a TLS-inspecting company network: the
 * worker trusts it only through `LONGHAUL_CA_FILE`).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import type { ForwardProxyEvent, ForwardProxyInput } from './forward-proxy-child';

/** The proxy's own source address: the only one the gates accept. */
export const PROXY_SOURCE = '127.0.0.2';

export interface ForwardProxy {
  /** `http://127.0.0.1:P` (no credentials). */
  url: string;
  /** What it was asked for, in order: `connect` targets (`host:port`) and `request` targets (absolute URLs). */
  events(): ForwardProxyEvent[];
  /** The targets (`host:port`) it connected to, tunnels and forwarded requests alike. */
  targets(): Set<string>;
  close(): Promise<void>;
}

export async function startForwardProxy(options: { credentials?: string } = {}): Promise<ForwardProxy> {
  const input: ForwardProxyInput = { localAddress: PROXY_SOURCE, ...options };
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'forward-proxy-child.ts'), JSON.stringify(input)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const events: ForwardProxyEvent[] = [];
  let output = '';
  let rest = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      rest += d.toString();
      const lines = rest.split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const event = JSON.parse(line) as ForwardProxyEvent;
        if (event.kind === 'listening') resolve(event.port);
        else events.push(event);
      }
    });
    child.once('exit', (code) => reject(new Error(`the forward proxy exited with code ${code}:\n${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    events: () => [...events],
    targets: () => new Set(events.filter((e) => e.kind !== 'listening' && e.kind !== 'refused').map((e) => ('target' in e ? (e.kind === 'request' ? new URL(e.target).host : e.target) : ''))),
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface ProxyOnlyGate {
  /** `http(s)://127.0.0.1:G`: the origin's address for the worker. */
  url: string;
  /** `127.0.0.1:G`, as the proxy's log names it. */
  host: string;
  /** Connections from the proxy, passed on to the origin. */
  accepted(): number;
  /** Connections from any other source address, closed unanswered. */
  refused(): number;
  close(): Promise<void>;
}

/**
 * A gate in front of the origin on `targetPort()` (read per connection, so the gate can start before its origin).
 * With `tls`, it terminates TLS with that certificate and speaks plain TCP to the origin. `only`: the one source
 * address accepted (null: any, a plain TLS front for the bench).
 */
export async function startProxyOnlyGate(targetPort: () => number, tls?: { certFile: string; keyFile: string }, only: string | null = PROXY_SOURCE): Promise<ProxyOnlyGate> {
  let accepted = 0;
  let refused = 0;
  const sockets = new Set<Socket>();
  const onConnection = (socket: Socket, source: string | undefined) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (only !== null && source !== only) {
      refused++;
      return void socket.destroy();
    }
    accepted++;
    const upstream = connect({ host: '127.0.0.1', port: targetPort() });
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  };
  let server: Server;
  if (tls) {
    server = createTlsServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, (socket) => onConnection(socket, socket.remoteAddress));
    // Refused before the handshake: a direct connection learns nothing, not even the certificate.
    server.on('connection', (raw: Socket) => {
      if (only !== null && raw.remoteAddress !== only) {
        refused++;
        raw.destroy();
      }
    });
    server.on('tlsClientError', () => undefined);
  } else {
    server = createServer((socket) => onConnection(socket, socket.remoteAddress));
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    accepted: () => accepted,
    refused: () => refused,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The proxy tests' user; the password is made per run (a password-shaped literal in the source is not the subject). */
export const PROXY_USER = 'egress';
export const PROXY_PASSWORD = `pw-${randomUUID()}`;

/** The proxy's URL with the tests' credentials in it. */
export function withCredentials(proxy: ForwardProxy): string {
  return proxy.url.replace('//', `//${PROXY_USER}:${PROXY_PASSWORD}@`);
}

/** The standard variables cleared, so the test's own environment cannot change a worker's way out. */
export const NO_INHERITED_PROXY = { HTTPS_PROXY: '', https_proxy: '', HTTP_PROXY: '', http_proxy: '', NO_PROXY: '', no_proxy: '', NODE_EXTRA_CA_CERTS: '' };

/** A port known once its server listens, for a gate that starts before it. */
export function laterPort(): { get: () => number; set: (url: string) => void } {
  let port = 0;
  return { get: () => port, set: (url) => void (port = Number(new URL(url).port)) };
}
