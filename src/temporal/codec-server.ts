/**
 * The codec server the Temporal Web UI (and `temporal` CLI) call to show encrypted payloads in clear:
 * Temporal's remote-codec protocol, `POST /decode` and `POST /encode` with `{ "payloads": [...] }` (proto3
 * JSON: metadata values and data in base64), answered with the same shape.
 *
 * It holds the keys, so whoever it answers can read every history: each request must carry
 * `Authorization: Bearer <token>` with one of the configured tokens (compared in constant time), its `Host`
 * must be one of the configured host names (a DNS-rebinding page names its own host), and a browser may call it
 * only from a configured origin (the UI's). Anything else is refused before the body is read: 401 with
 * `WWW-Authenticate` without valid credentials, 403 for another origin, 421 for another host. Only a server bound
 * to loopback may run without a token, and only when asked to (`allowUnauthenticatedLoopback`, for the embedded
 * dev stack whose UI cannot send one).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { isIP, type AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';

export const DEFAULT_CODEC_SERVER_PORT = 8234;
export const DEFAULT_CODEC_CORS_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'];
/** Host names every codec server answers for besides its bind address. */
export const LOOPBACK_HOST_NAMES = ['localhost', '127.0.0.1', '::1'];
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Shorter tokens are refused at start: a bearer token is the only thing between the network and the keys. */
export const MIN_CODEC_TOKEN_CHARS = 24;
const REALM = 'longhaul-codec';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** The address to bind; default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Browser origins allowed to call (the Web UI's); default the local UI's. */
  corsOrigins?: readonly string[];
  /**
   * Host names (the `Host` header without its port) this server answers for; loopback names and the bind address
   * are always included.
   */
  hostNames?: readonly string[];
  /** Bearer tokens accepted (any of them: rotation). Empty only with `allowUnauthenticatedLoopback`. */
  tokens: readonly string[];
  /** Serve without a token; refused unless `host` is a loopback address. */
  allowUnauthenticatedLoopback?: boolean;
  /** PEM certificate and key: serve https (the Web UI passes its access token only to an https endpoint). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** One line per refused request (never a token). */
  log?: (line: string) => void;
}

export interface RunningCodecServer {
  /** e.g. `http://127.0.0.1:8234`: what `--ui-codec-endpoint` / the UI's "Codec Server" setting takes. */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** A codec server that would be reachable without authentication, or with a token too short to be one. */
export class CodecServerConfigError extends Error {
  override readonly name = 'CodecServerConfigError';
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

function fromJson(p: JsonPayload): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) metadata[k] = Buffer.from(v, 'base64');
  return { metadata, data: Buffer.from(p.data ?? '', 'base64') };
}

function toJson(p: Payload): JsonPayload {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) if (v) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** 127.0.0.0/8, ::1 or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/** The host name of a `Host` header, without its port and brackets, lower-cased; undefined when malformed. */
export function hostNameOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d+)?$/i.exec(header);
  if (bracketed) return bracketed[1].toLowerCase();
  const plain = /^([a-z0-9.-]+)(?::\d+)?$/i.exec(header);
  return plain ? plain[1].toLowerCase() : undefined;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Whether `presented` is one of `tokens`, in time that depends on neither: both sides are hashed to 32 bytes
 * and every token is compared.
 */
export function tokenMatches(presented: string, tokens: readonly Buffer[]): boolean {
  const mine = digest(presented);
  let match = false;
  for (const token of tokens) match = timingSafeEqual(mine, token) || match;
  return match;
}

/** The refusal of a start that would expose the keys; undefined when the options are safe. */
export function unsafeCodecServerOptions(opts: Pick<CodecServerOptions, 'host' | 'tokens' | 'allowUnauthenticatedLoopback'>): string | undefined {
  const host = opts.host ?? '127.0.0.1';
  const short = opts.tokens.find((t) => t.length < MIN_CODEC_TOKEN_CHARS);
  if (short !== undefined) return `a codec server token must be at least ${MIN_CODEC_TOKEN_CHARS} characters (openssl rand -base64 32), one has ${short.length}`;
  if (opts.tokens.length > 0) return undefined;
  if (!opts.allowUnauthenticatedLoopback) return 'the codec server needs a token (LONGHAUL_CODEC_SERVER_TOKEN or LONGHAUL_CODEC_SERVER_TOKEN_FILE): whoever reaches it can decrypt every payload';
  if (!isLoopbackHost(host)) return `the codec server runs without a token only on loopback, not on ${host}`;
  return undefined;
}

export async function startCodecServer(opts: CodecServerOptions): Promise<RunningCodecServer> {
  const unsafe = unsafeCodecServerOptions(opts);
  if (unsafe) throw new CodecServerConfigError(unsafe);
  const host = opts.host ?? '127.0.0.1';
  const origins = new Set(opts.corsOrigins ?? DEFAULT_CODEC_CORS_ORIGINS);
  const hostNames = new Set([...LOOPBACK_HOST_NAMES, host, ...(opts.hostNames ?? [])].map((h) => h.replace(/^\[|\]$/g, '').toLowerCase()));
  const tokens = opts.tokens.map(digest);
  const log = opts.log ?? (() => undefined);

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, why: string, headers: Record<string, string> = {}) => {
    log(`codec server: refused ${req.method ?? '?'} ${(req.url ?? '/').split('?')[0]} from ${req.socket.remoteAddress ?? '?'}: ${why}`);
    // The body is not read: a refused caller does not get to make the server buffer 64 MiB.
    res.setHeader('connection', 'close');
    send(res, status, { message: why }, headers);
  };

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const hostName = hostNameOf(req.headers.host);
    if (!hostName || !hostNames.has(hostName)) {
      refuse(req, res, 421, `Host ${JSON.stringify(req.headers.host ?? '')} is not one this codec server answers for (LONGHAUL_CODEC_SERVER_HOSTS)`);
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!origins.has(origin)) {
        refuse(req, res, 403, `origin ${JSON.stringify(origin)} is not allowed (LONGHAUL_CODEC_SERVER_CORS_ORIGINS)`);
        return;
      }
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-allow-credentials', 'true');
      res.setHeader('vary', 'Origin');
    }
    // A preflight carries no credentials (browsers never send them): it learns only what the UI may send.
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'content-type, x-namespace, authorization',
        'access-control-max-age': '600',
      });
      res.end();
      return;
    }
    if (tokens.length > 0) {
      const auth = /^Bearer +(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!auth) {
        refuse(req, res, 401, 'no credentials: send Authorization: Bearer <token>', { 'www-authenticate': `Bearer realm="${REALM}"` });
        return;
      }
      if (!tokenMatches(auth[1], tokens)) {
        refuse(req, res, 401, 'the token is not valid', { 'www-authenticate': `Bearer realm="${REALM}", error="invalid_token"` });
        return;
      }
    }
    if (req.method !== 'POST' || (path !== '/encode' && path !== '/decode')) {
      send(res, 404, { message: 'POST /encode or /decode' });
      return;
    }
    readBody(req)
      .then(async (text) => {
        let payloads: JsonPayload[];
        try {
          const parsed = JSON.parse(text) as { payloads?: unknown };
          if (!Array.isArray(parsed?.payloads)) throw new Error('"payloads" must be an array');
          payloads = parsed.payloads as JsonPayload[];
        } catch (err) {
          send(res, 400, { message: `bad request: ${(err as Error).message}` });
          return;
        }
        const input = payloads.map(fromJson);
        const output = path === '/encode' ? await opts.codec.encode(input) : await opts.codec.decode(input);
        send(res, 200, { payloads: output.map(toJson) });
      })
      .catch((err: Error) => send(res, 400, { message: err.message }));
  };
  const server: Server = opts.tls ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, handler) : createHttpServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? DEFAULT_CODEC_SERVER_PORT, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = isIP(host) === 6 ? `[${host}]` : host;
  return {
    url: `${opts.tls ? 'https' : 'http'}://${urlHost}:${port}`,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
