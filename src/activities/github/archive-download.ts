/**
 * The archive download activity `downloadArchive`: GET …/archive (302) and stream the storage URL to disk.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, truncate } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { request } from 'undici';
import type { ActivityDeps } from '../context';
import { FailureType } from '../../http/retry-policy';

export interface ArchiveDownloadInput {
  org: string;
  migrationId: number;
  /** Destination file; relative paths resolve under the worker's data directory. */
  path: string;
}

export interface ArchiveDownload {
  path: string;
  bytes: number;
  sha256: string;
  /** How many bytes this attempt fetched (less than `bytes` when it resumed). */
  fetchedBytes: number;
  resumedFrom: number;
}

/** Heartbeat details of the download: where a retry resumes. */
export interface DownloadProgress {
  offset: number;
  total?: number;
}

const enc = encodeURIComponent;

export function createArchiveDownload(deps: ActivityDeps) {
  const { github } = deps;
    /**
     * GET …/archive (302) and stream the storage URL to disk, hashing as it goes. The storage origin
     * gets no credentials. A retry (after a crash or timeout) resumes at the size already on disk
     * with `Range`; an expired pre-signed URL is refreshed by asking the API again.
     */
  return async function downloadArchive(input: ArchiveDownloadInput): Promise<ArchiveDownload> {
      const ctx = Context.current();
      const path = isAbsolute(input.path) ? input.path : resolve(deps.dataDir, input.path);
      const partPath = `${path}.part`;
      await mkdir(dirname(path), { recursive: true });

      // The first attempt starts clean; later attempts keep what an earlier attempt wrote.
      let offset = 0;
      if (ctx.info.attempt > 1) offset = await fileSize(partPath);
      else await truncate(partPath, 0).catch(() => undefined);

      const hash = createHash('sha256');
      if (offset > 0) await pipeline(createReadStream(partPath, { end: offset - 1 }), hashSink(hash));
      const resumedFrom = offset;

      const archiveUrl = async () => {
        const res = await github.request({ method: 'GET', path: `/orgs/${enc(input.org)}/migrations/${input.migrationId}/archive`, redirect: 'manual' });
        if (!res.location) throw ApplicationFailure.nonRetryable(`archive of migration ${input.migrationId} answered ${res.status} without a Location`, FailureType.UnexpectedResponse);
        return res.location;
      };

      let url = await archiveUrl();
      let refreshed = false;
      for (;;) {
        const res = await request(url, {
          method: 'GET',
          // Deliberately no Authorization: pre-signed storage URLs must not receive the API token.
          headers: offset > 0 ? { range: `bytes=${offset}-` } : {},
          signal: ctx.cancellationSignal,
          headersTimeout: 30_000,
          bodyTimeout: 60_000,
        }).catch((err: Error) => {
          throw ApplicationFailure.retryable(`archive download from storage failed: ${err.message}`, FailureType.Network);
        });
        if (res.statusCode === 403 && !refreshed) {
          // Pre-signed URLs expire (minutes); a resumed attempt may hold a stale one.
          await res.body.dump();
          url = await archiveUrl();
          refreshed = true;
          continue;
        }
        if (res.statusCode === 416 && offset > 0) {
          // Everything is on disk already.
          await res.body.dump();
          break;
        }
        if (res.statusCode !== 200 && res.statusCode !== 206) {
          const text = (await res.body.text()).slice(0, 300);
          const type = res.statusCode >= 500 ? FailureType.Server : FailureType.UnexpectedResponse;
          throw ApplicationFailure.create({ type, message: `storage answered ${res.statusCode}: ${text}`, nonRetryable: res.statusCode < 500 });
        }
        if (res.statusCode === 200 && offset > 0) {
          // The server ignored Range: drop the partial file so the next attempt starts over.
          await res.body.dump();
          await truncate(partPath, 0);
          throw ApplicationFailure.retryable('storage ignored the Range header; the next attempt starts from byte 0', FailureType.UnexpectedResponse);
        }
        const contentRange = res.headers['content-range'];
        const total = typeof contentRange === 'string' ? Number(contentRange.split('/')[1]) : Number(res.headers['content-length'] ?? NaN) + offset;
        let lastBeat = 0;
        const out = createWriteStream(partPath, { flags: offset > 0 ? 'r+' : 'w', start: offset });
        await pipeline(
          res.body,
          new Writable({
            write(chunk: Buffer, _enc, done) {
              hash.update(chunk);
              offset += chunk.length;
              const now = Date.now();
              if (now - lastBeat > 500) {
                lastBeat = now;
                ctx.heartbeat({ offset, total } satisfies DownloadProgress);
              }
              out.write(chunk, done);
            },
            final(done) {
              out.end(done);
            },
          }),
        );
        ctx.heartbeat({ offset, total } satisfies DownloadProgress);
        break;
      }
      await rename(partPath, path);
      return { path, bytes: offset, sha256: hash.digest('hex'), fetchedBytes: offset - resumedFrom, resumedFrom };
    };
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

function hashSink(hash: ReturnType<typeof createHash>): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done();
    },
  });
}
