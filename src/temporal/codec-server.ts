/**
 * The codec server the Temporal Web UI (and `temporal` CLI) call to show encrypted payloads in clear:
 * Temporal's remote-codec protocol, `POST /decode` and `POST /encode` with `{ "payloads": [...] }` (proto3
 * JSON: metadata values and data in base64), answered with the same shape. The UI calls it from the
 * browser, so it answers CORS preflights for the UI's origin.
 *
 * It holds the keys, so it listens on loopback by default; put it behind your own authentication before
 * exposing it anywhere else.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';

export const DEFAULT_CODEC_SERVER_PORT = 8234;
export const DEFAULT_CODEC_CORS_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'];
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface CodecServerOptions {
  codec: PayloadCodec;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Browser origins allowed to call (the Web UI's). */
  corsOrigins?: readonly string[];
}

export interface RunningCodecServer {
  /** e.g. `http://127.0.0.1:8234`: what `--ui-codec-endpoint` / the UI's "Codec Server" setting takes. */
  url: string;
  server: Server;
  close(): Promise<void>;
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

export async function startCodecServer(opts: CodecServerOptions): Promise<RunningCodecServer> {
  const origins = new Set(opts.corsOrigins ?? DEFAULT_CODEC_CORS_ORIGINS);
  const cors = (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    if (origin && origins.has(origin)) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-allow-credentials', 'true');
      res.setHeader('vary', 'Origin');
    }
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server = createServer((req, res) => {
    cors(req, res);
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'content-type, x-namespace, authorization',
        'access-control-max-age': '600',
      });
      res.end();
      return;
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
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? DEFAULT_CODEC_SERVER_PORT, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
