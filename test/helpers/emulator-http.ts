/** Plain HTTP calls against an in-process emulator, for tests of the emulator itself. */
import { afterEach } from 'vitest';
import { Agent, request } from 'undici';
import type { Emulator, EmulatorOptions } from '@longhaul/emulator';
import { startTestEmulator, TEST_TOKEN } from './emulator';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Parsed JSON body, when it is JSON. */
  json: unknown;
}

export interface CallOptions {
  /** Bearer token; `null` sends no Authorization header. Default `TEST_TOKEN`. */
  token?: string | null;
  body?: unknown;
  /** A raw body sent as is (for malformed JSON). */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Abort the request after this long. @format milliseconds */
  timeoutMs?: number;
  /** Abort the request when this signal fires. */
  signal?: AbortSignal;
}

// A private agent, and no connection reused (`reset` below): the emulator, in this process, closes a connection idle
// for 5 s, and a test that computed for longer between two calls (schema checks beside a CPU load) sent its next
// request on a connection the server's overdue timer closed in the same turn: ECONNRESET (test:busy).
const agent = new Agent({ keepAliveTimeout: 1, connections: 32 });

export async function call(baseUrl: string, method: string, path: string, opts: CallOptions = {}): Promise<RawResponse> {
  const token = opts.token === undefined ? TEST_TOKEN : opts.token;
  const headers: Record<string, string> = { accept: 'application/vnd.github+json', ...(opts.headers ?? {}) };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(new URL(path, baseUrl), {
    method: method as 'GET',
    headers,
    body,
    dispatcher: agent,
    reset: true,
    signal: opts.signal ?? (opts.timeoutMs !== undefined ? AbortSignal.timeout(opts.timeoutMs) : undefined),
  });
  const text = await res.body.text();
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: flat, text, json };
}

/** The `message` of a GitHub-style error body. */
export function messageOf(res: RawResponse): string | undefined {
  return (res.json as { message?: string } | undefined)?.message;
}

/** Emulators on an injected clock, one per test, closed after each test. */
export interface ClockedEmulators {
  /** Emulator time in epoch ms; tests move it. Reset to the start time by `start()`. */
  now: number;
  start(options?: EmulatorOptions): Promise<Emulator>;
}

export function clockedEmulators(startMs: number): ClockedEmulators {
  let current: Emulator | undefined;
  const clocked: ClockedEmulators = {
    now: startMs,
    async start(options = {}) {
      clocked.now = startMs;
      current = await startTestEmulator({ port: 0, clock: () => clocked.now, ...options });
      return current;
    },
  };
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return clocked;
}

/** Every route of the source-import API under `importPath` (`/repos/o/r/import`), each with a body it accepts. */
export function everyImportRoute(importPath: string, vcsUrl: string): [method: string, path: string, body: unknown][] {
  return [
    ['GET', importPath, undefined],
    ['PUT', importPath, { vcs_url: vcsUrl }],
    ['PATCH', importPath, {}],
    ['DELETE', importPath, undefined],
    ['GET', `${importPath}/authors`, undefined],
    ['PATCH', `${importPath}/authors/1`, { name: 'A' }],
    ['GET', `${importPath}/large_files`, undefined],
    ['PATCH', `${importPath}/lfs`, { use_lfs: 'opt_in' }],
  ];
}
