/**
 * The archive module against the one failure registry and the one judge of a storage answer:
 *
 * - every throw site under `src/archive/` (and the migration's archive activity) builds its failure with
 *   `storageFailure`, from the registry, so none can make retryable what the registry calls permanent (three did:
 *   `ArchiveTransferBroken` for a changed archive, and `UnexpectedResponseError` for an answer without a length on
 *   both paths); each site is walked against the registry;
 * - those sites, driven by a real storage server on loopback, fail as the registry says;
 * - the judge, the HTTP core's decision for storage and the object stores' transient check agree on every status.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allFailures, FAILURES, failureHandling, type FailureSpec } from '../../src/common/failures';
import { storageFailure } from '../../src/archive/storage/failures';
import { isTransientStorageStatus, judgeStorageStatus, STORAGE_RETRY_POLICY } from '../../src/archive/storage/answer';
import { StorageClient } from '../../src/archive/storage/client';
import { storageDownloader } from '../../src/archive/download';
import { streamArchiveTo } from '../../src/archive/to-store';
import { isTransient } from '../../src/archive/object-store/stores/store';
import { decideRetry } from '../../src/http/retry-policy';
import { failureOf } from '../helpers/failures';

const repo = join(__dirname, '..', '..');
const SOURCES = [join(repo, 'src', 'archive'), join(repo, 'src', 'processes', 'org-migration', 'activities', 'archive.ts')];

function files(path: string): string[] {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path).flatMap((name) => files(join(path, name)));
}

/** Every `storageFailure('group', 'Key'` call in the module, with where it is. */
function throwSites(): { where: string; group: string; key: string }[] {
  return SOURCES.flatMap(files).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(/storageFailure\(\s*'(\w+)',\s*'(\w+)'/g)].map((m) => ({
      where: `${relative(repo, file)}:${text.slice(0, m.index).split('\n').length}`,
      group: m[1],
      key: m[2],
    }));
  });
}

describe('the archive module builds every failure from the registry', () => {
  it('has no way of making a failure but storageFailure', () => {
    const builder = join(repo, 'src', 'archive', 'storage', 'failures.ts');
    const elsewhere = SOURCES.flatMap(files)
      .filter((file) => file !== builder)
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, where: `${relative(repo, file)}:${i + 1}` }))
          .filter(({ line }) => /ApplicationFailure\.(create|retryable|nonRetryable|fromError)\(|new ApplicationFailure\(/.test(line))
          .map(({ where }) => where),
      );
    expect(elsewhere).toEqual([]);
  });

  it('walks each throw site against the registry: a type it has, retryable exactly when not permanent', () => {
    const sites = throwSites();
    // The download, the upload's source, the stores, the checks, the lock and the migration's lookup.
    expect(sites.length).toBeGreaterThanOrEqual(25);
    for (const site of sites) {
      const spec = (FAILURES as unknown as Record<string, Record<string, FailureSpec>>)[site.group]?.[site.key];
      expect(spec, `${site.where}: ${site.group}.${site.key} is not in the registry`).toBeDefined();
      const failure = storageFailure(site.group as 'archive', site.key as 'Gone', 'walked');
      expect(failure.type, site.where).toBe(spec!.type);
      expect(failure.nonRetryable, `${site.where}: ${spec!.type} is ${spec!.handling}`).toBe(spec!.handling === 'permanent');
    }
    // The three sites that disagreed with the registry before.
    const kinds = new Set(sites.map((s) => `${s.group}.${s.key}`));
    expect(kinds).toContain('archive.Changed');
    expect(kinds).toContain('http.UnexpectedResponse');
  });

  it('builds retryable failures for every handling the registry does not call permanent', () => {
    for (const group of ['archive', 'objectStore', 'http'] as const) {
      for (const [key, spec] of Object.entries(FAILURES[group]) as [string, FailureSpec][]) {
        const failure = storageFailure(group, key as never, 'x');
        expect(failure.nonRetryable, spec.type).toBe(failureHandling(spec.type) === 'permanent');
      }
    }
    expect(allFailures().some((s) => s.type === 'ArchiveChanged' && s.handling === 'back-off')).toBe(true);
  });
});

let server: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A storage origin on loopback whose archive comes chunked, without a Content-Length. */
async function storageWithoutLength(): Promise<URL> {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/gzip', etag: '"a"', 'transfer-encoding': 'chunked' });
    res.end(Buffer.from([0x1f, 0x8b, 1, 2, 3]));
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/archive.tar.gz?X-Signature=s`);
}

const LOOPBACK = { outbound: async () => ({ api: { protocol: 'http:' as const, addresses: ['127.0.0.1'] }, allowedHosts: [] }), observer: { observe: () => undefined } };

describe('the sites that disagreed with the registry, driven by a storage server', () => {
  it('the download to disk ends UnexpectedResponseError, non-retryable, on an answer without a length', async () => {
    const url = await storageWithoutLength();
    dir = await mkdtemp(join(tmpdir(), 'archive-failures-'));
    const download = storageDownloader({ dataDir: dir, ...LOOPBACK });
    const err = await failureOf(download({ source: 'o/1', path: 'a.tar.gz', askApi: async () => url }, { heartbeat: () => undefined }));
    expect(err).toMatchObject({ type: 'UnexpectedResponseError', nonRetryable: true });
    expect(err.message).toContain('without a length');
  });

  it("the upload's source ends UnexpectedResponseError, non-retryable, on an answer without a length, before any store call", async () => {
    const url = await storageWithoutLength();
    const storage = new StorageClient({ api: 'storage', route: '/object', ...LOOPBACK });
    const follow = async (u: URL, opts: { from?: number; ifRange?: string; signal: AbortSignal }) => ({ res: await storage.get(u, opts), finalUrl: u });
    const err = await failureOf(streamArchiveTo('s3://no-such-bucket/prefix', 'a.tar.gz', { storage, askApi: async () => url, follow }, { heartbeat: () => undefined }));
    expect(err).toMatchObject({ type: 'UnexpectedResponseError', nonRetryable: true });
  });
});

describe('one judge of a storage answer', () => {
  const statuses = Array.from({ length: 500 }, (_, i) => i + 100);

  it("agrees with the HTTP core's decision for storage on every status: transient exactly when it retries", () => {
    for (const status of statuses) {
      const decision = decideRetry({ status, headers: {} }, { nowMs: 0, attempt: 1 }, STORAGE_RETRY_POLICY);
      const transient = judgeStorageStatus(status) === 'transient';
      if (status >= 400) expect(decision.kind === 'retry', `status ${status}`).toBe(transient);
    }
  });

  it("is the object stores' transient check, 425 included", () => {
    for (const status of statuses) {
      expect(isTransient({ $metadata: { httpStatusCode: status } }), `status ${status}`).toBe(isTransientStorageStatus(status) && status >= 400);
    }
    expect([408, 425, 429, 500, 503].every(isTransientStorageStatus)).toBe(true);
  });

  it('tells a pre-signed URL to ask again on 403 and a store that it is refused; 404 and 410 are gone on both', () => {
    expect(judgeStorageStatus(403, 'presigned')).toBe('ask-again');
    expect(judgeStorageStatus(403, 'store')).toBe('refused');
    expect(judgeStorageStatus(401, 'store')).toBe('refused');
    for (const side of ['presigned', 'store'] as const) {
      expect(judgeStorageStatus(404, side)).toBe('gone');
      expect(judgeStorageStatus(410, side)).toBe('gone');
    }
    expect(judgeStorageStatus(416)).toBe('out-of-range');
    expect(judgeStorageStatus(206)).toBe('ok');
    expect(judgeStorageStatus(204)).toBe('unexpected');
  });
});
