/**
 * The token-less client of the HTTP core: no credential ever reaches a storage or sink URL (not even one the
 * caller put in a header, not even a pre-signed URL on the API's own origin), and what an answer means is the
 * core's decision for both transports, the archive download and the HTTP sink alike.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageClient } from '../../src/archive/storage/client';
import { createGithubClient } from '../../src/http/github';
import { FailureType } from '../../src/http/retry-policy';
import type { ApiObservation } from '../../src/http/observer';
import { archiveDownloader } from '../../src/processes/org-migration/activities/archive';
import { ArchiveFailure } from '../../src/archive/storage/checks';
import { postSignedBatches } from '../../src/processes/feed-poll/activities/sinks/http';
import { failureOf } from '../helpers/failures';

const TOKEN = 'ghp_never_leaves_the_api';
const ARCHIVE = gzipSync(Buffer.from('an archive'.repeat(100)));

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
}

type Handler = (req: { method?: string; url?: string }, reply: (status: number, headers?: Record<string, string>, body?: Buffer | string) => void) => void;

let server: Server | undefined;
afterEach(async () => {
  delete process.env.LONGHAUL_SINK_TOKENLESS_SECRET;
  delete process.env.LONGHAUL_SINK_SECRETS;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server standing in for the API, storage and a sink at once (one origin: the hardest case for credentials). */
async function serve(handler: Handler): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers });
      handler(req, (status, headers = {}, body = '') => {
        res.writeHead(status, { 'content-length': String(Buffer.byteLength(body)), ...headers });
        res.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

/** The outbound policy's context of the emulator's case: the API is http on loopback, so are storage and sinks. */
const LOOPBACK_API = { outbound: async () => ({ api: { protocol: 'http:', addresses: ['127.0.0.1'] }, allowedHosts: [] }) };

const credentialHeaders = (s: Seen) => ['authorization', 'cookie', 'proxy-authorization'].filter((h) => s.headers[h] !== undefined);

function archiveRoutes(storage: (reply: Parameters<Handler>[1]) => void): Handler {
  return (req, reply) => {
    if (req.url?.startsWith('/orgs/')) return reply(302, { location: '/storage/archive.tar.gz?X-Signature=abc' });
    storage(reply);
  };
}

async function download(base: string) {
  const deps = { github: createGithubClient({ baseUrl: base, token: () => TOKEN }), dataDir: await mkdtemp(join(tmpdir(), 'longhaul-tokenless-')) };
  return archiveDownloader(deps)({ org: 'octo-org', migrationId: 7, path: 'a.tar.gz' }, { heartbeat: () => undefined });
}


describe('token-less client: no credential reaches storage or a sink', () => {
  it('downloads a pre-signed URL on the API origin itself without the token the API call carried', async () => {
    const { base, seen } = await serve(archiveRoutes((reply) => reply(200, { 'content-type': 'application/gzip' }, ARCHIVE)));
    const result = await download(base);
    expect(result.bytes).toBe(ARCHIVE.length);
    const [api, storage] = seen;
    expect(api.url).toBe('/orgs/octo-org/migrations/7/archive');
    expect(api.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(storage.url).toBe('/storage/archive.tar.gz?X-Signature=abc');
    expect(credentialHeaders(storage)).toEqual([]);
    expect(JSON.stringify(storage.headers)).not.toContain(TOKEN);
  });

  it('drops credential headers a caller hands it, on both transports', async () => {
    const { base, seen } = await serve((_req, reply) => reply(200, { 'content-type': 'application/json' }, '{}'));
    const client = new StorageClient({ api: 'sink', route: '/sink', observer: { observe: () => undefined }, ...LOOPBACK_API });
    const sneaky = { Authorization: `Bearer ${TOKEN}`, cookie: 'session=1', 'Proxy-Authorization': 'Basic eA==', 'x-kept': 'yes' };
    await client.send({ method: 'POST', url: `${base}/in`, headers: sneaky, body: '{}' });
    const res = await client.get(new URL(`${base}/object`), { from: 5, ifRange: '"etag"' });
    res.body.destroy();
    expect(seen).toHaveLength(2);
    for (const s of seen) {
      expect(credentialHeaders(s)).toEqual([]);
      expect(s.headers['user-agent']).toBe('longhaul/0.1');
    }
    expect(seen[0].headers['x-kept']).toBe('yes');
    expect(seen[1].headers).toMatchObject({ range: 'bytes=5-', 'if-range': '"etag"' });
  });

  it('posts sink batches without any credential, even with GITHUB_TOKEN set on the worker', async () => {
    process.env.GITHUB_TOKEN = TOKEN;
    process.env.LONGHAUL_SINK_SECRETS = 'tokenless';
    process.env.LONGHAUL_SINK_TOKENLESS_SECRET = 'sink-secret';
    try {
      const { base, seen } = await serve((_req, reply) => reply(204));
      await postSignedBatches({ url: `${base}/in?key=k`, secret: 'tokenless', feed: '/events', events: [{ id: '1' } as never], ...LOOPBACK_API });
      expect(seen).toHaveLength(1);
      expect(credentialHeaders(seen[0])).toEqual([]);
      expect(seen[0].headers['x-hub-signature-256']).toMatch(/^sha256=/);
      expect(JSON.stringify(seen[0].headers)).not.toContain(TOKEN);
    } finally {
      delete process.env.GITHUB_TOKEN;
    }
  });
});

describe("token-less client: the core's decision for every answer", () => {
  it('judges statuses with the core and tells the observer under its own api label and a fixed route', () => {
    const observed: ApiObservation[] = [];
    const client = new StorageClient({ api: 'storage', route: '/object', observer: { observe: (o) => observed.push(o) }, clock: () => 0, attempt: () => 1 });
    expect(client.judge('GET', 206, {})).toEqual({ kind: 'success' });
    expect(client.judge('GET', 503, { 'retry-after': '7' })).toMatchObject({ kind: 'retry', type: FailureType.Server, delayMs: 7000 });
    expect(client.judge('GET', 429, {})).toMatchObject({ kind: 'retry', delayMs: 1000 });
    expect(client.judge('GET', 408, {})).toMatchObject({ kind: 'retry', type: FailureType.Server });
    expect(client.judge('GET', 404, {})).toMatchObject({ kind: 'permanent', type: FailureType.NotFound });
    // A 403 is a refusal here, never an API's secondary rate limit.
    expect(client.judge('GET', 403, {}, 'You have exceeded a secondary rate limit')).toMatchObject({ kind: 'permanent', type: FailureType.Forbidden });
    expect(observed.map((o) => o.kind === 'answer' && `${o.method} ${o.path} ${o.status}`)).toEqual([
      'GET /object 206', 'GET /object 503', 'GET /object 429', 'GET /object 408', 'GET /object 404', 'GET /object 403',
    ]);
  });

  it('does not follow a sink redirect (the signed batch goes nowhere else) and names it without the query', async () => {
    const { base, seen } = await serve((req, reply) => (req.url === '/in' ? reply(307, { location: '/elsewhere?token=t' }) : reply(200)));
    process.env.LONGHAUL_SINK_SECRETS = 'tokenless';
    process.env.LONGHAUL_SINK_TOKENLESS_SECRET = 'sink-secret';
    const err = await failureOf(postSignedBatches({ url: `${base}/in`, secret: 'tokenless', feed: '/events', events: [{ id: '1' } as never], ...LOOPBACK_API }));
    expect(err).toMatchObject({ type: 'SinkRejected', nonRetryable: true });
    expect(err.message).toContain(`redirects to ${base}/elsewhere`);
    expect(err.message).not.toContain('token=t');
    expect(seen.map((s) => s.url)).toEqual(['/in']);
  });

  it('turns a sink 429 into SinkUnavailable after the wait it asks for, and a storage 429 into a retry, no longer a permanent failure', async () => {
    process.env.LONGHAUL_SINK_SECRETS = 'tokenless';
    process.env.LONGHAUL_SINK_TOKENLESS_SECRET = 'sink-secret';
    const sink = await serve((_req, reply) => reply(429, { 'retry-after': '3' }, 'slow down'));
    const err = await failureOf(postSignedBatches({ url: `${sink.base}/in`, secret: 'tokenless', feed: '/events', events: [{ id: '1' } as never], ...LOOPBACK_API }));
    expect(err).toMatchObject({ type: 'SinkUnavailable', nonRetryable: false, nextRetryDelay: 3000 });
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const storage = await serve(archiveRoutes((reply) => reply(429, { 'retry-after': '9' }, 'SlowDown')));
    const limited = await failureOf(download(storage.base));
    expect(limited).toMatchObject({ nonRetryable: false, nextRetryDelay: 9000 });
    expect(limited.message).not.toContain('X-Signature');
  });

  it('ends a storage 5xx as a retryable ServerError on the core backoff, and a 410 as ArchiveGone', async () => {
    const busy = await serve(archiveRoutes((reply) => reply(503, {}, 'maintenance')));
    expect(await failureOf(download(busy.base))).toMatchObject({ type: FailureType.Server, nonRetryable: false, nextRetryDelay: 1000 });
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const gone = await serve(archiveRoutes((reply) => reply(410, {}, 'deleted')));
    expect(await failureOf(download(gone.base))).toMatchObject({ type: ArchiveFailure.Gone, nonRetryable: true });
  });
});
