/**
 * Organization-migration activities (spec 002): one API call each, except the archive download, which
 * streams one file through the 302 and heartbeats its byte offset so a retry resumes with `Range`.
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
import type { components } from '@octokit/openapi-types';
import type { ActivityDeps } from '../context';
import { MIGRATION_FLAGS, type MigrationFlag, type OrgMigrationInput } from '../../common/org-migration';
import { LonghaulMigrationGuid } from '../../common/search-attributes';
import { FailureType } from '../../http/retry-policy';

type Migration = components['schemas']['migration'];

/** The part of a migration workflows need (keeps workflow history small). */
export interface MigrationSummary {
  id: number;
  guid: string;
  state: string;
  lockRepositories: boolean;
  repositories: string[];
  createdAt: string;
  /** The body flags the migration was started with (`lockRepositories`… as the workflow input names them). */
  flags: Record<MigrationFlag, boolean>;
}

/** What a lookup after an unknown start outcome may adopt. */
export interface FindMigrationInput {
  org: string;
  repositories: string[];
  /** The flags this workflow sends: a migration started with other flags is not ours. */
  flags: Partial<Record<MigrationFlag, boolean>>;
  /** This workflow's attempt window (ISO times): a migration created outside it is not ours. */
  notBefore: string;
  notAfter: string;
}

/** What the start call sends: the spec's body fields, as the workflow input names them. */
export type StartMigrationInput = Pick<
  OrgMigrationInput,
  | 'org'
  | 'repositories'
  | 'lockRepositories'
  | 'excludeMetadata'
  | 'excludeGitData'
  | 'excludeAttachments'
  | 'excludeReleases'
  | 'excludeOwnerProjects'
  | 'orgMetadataOnly'
>;

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

/** The API's name of each body flag. */
const FLAG_FIELDS: Record<MigrationFlag, keyof Migration> = {
  lockRepositories: 'lock_repositories',
  excludeMetadata: 'exclude_metadata',
  excludeGitData: 'exclude_git_data',
  excludeAttachments: 'exclude_attachments',
  excludeReleases: 'exclude_releases',
  excludeOwnerProjects: 'exclude_owner_projects',
  orgMetadataOnly: 'org_metadata_only',
};

export function summarizeMigration(m: Migration): MigrationSummary {
  return {
    flags: Object.fromEntries(MIGRATION_FLAGS.map((f) => [f, m[FLAG_FIELDS[f]] === true])) as Record<MigrationFlag, boolean>,
    id: Number(m.id),
    guid: m.guid,
    state: m.state,
    lockRepositories: m.lock_repositories,
    repositories: (m.repositories ?? []).map((r) => r.name),
    createdAt: m.created_at,
  };
}

const enc = encodeURIComponent;

export function createMigrationActivities(deps: ActivityDeps) {
  const { github } = deps;

  return {
    /** POST /orgs/{org}/migrations — starts an export. Not idempotent: the workflow guards re-sends. */
    async startMigration(input: StartMigrationInput): Promise<MigrationSummary> {
      const body: Record<string, unknown> = { repositories: input.repositories };
      for (const flag of MIGRATION_FLAGS) if (input[flag] !== undefined) body[FLAG_FIELDS[flag]] = input[flag];
      const res = await github.request<Migration>({ method: 'POST', path: `/orgs/${enc(input.org)}/migrations`, body });
      return summarizeMigration(res.body);
    },

    /**
     * Finds the migration this workflow may already have created (after a start call whose outcome is
     * unknown), the newest that matches all of: exactly these repositories, the same flags, created inside
     * this workflow's attempt window, and not recorded by another workflow (`LonghaulMigrationGuid`).
     */
    async findMigration(input: FindMigrationInput): Promise<MigrationSummary | undefined> {
      const wanted = [...input.repositories].map((r) => r.toLowerCase()).sort().join(',');
      const [notBefore, notAfter] = [Date.parse(input.notBefore), Date.parse(input.notAfter)];
      for await (const page of github.paginate<Migration>(`/orgs/${enc(input.org)}/migrations`, { per_page: 100 }, 10)) {
        for (const m of page.items) {
          const candidate = summarizeMigration(m);
          const names = candidate.repositories.map((r) => r.toLowerCase()).sort().join(',');
          const created = Date.parse(candidate.createdAt);
          if (names !== wanted || !(created >= notBefore && created <= notAfter)) continue;
          if (MIGRATION_FLAGS.some((f) => candidate.flags[f] !== (input.flags[f] ?? false))) continue;
          if (await recordedByAnotherWorkflow(candidate.guid)) continue;
          return candidate;
        }
      }
      return undefined;
    },

    /** GET /orgs/{org}/migrations/{id} */
    async getMigration(input: { org: string; migrationId: number }): Promise<MigrationSummary> {
      const res = await github.request<Migration>({
        method: 'GET',
        path: `/orgs/${enc(input.org)}/migrations/${input.migrationId}`,
        query: { exclude: ['repositories'] },
      });
      return summarizeMigration(res.body);
    },

    /** DELETE /orgs/{org}/migrations/{id}/repos/{repo}/lock */
    async unlockRepository(input: { org: string; migrationId: number; repository: string }): Promise<void> {
      await github.request({ method: 'DELETE', path: `/orgs/${enc(input.org)}/migrations/${input.migrationId}/repos/${enc(input.repository)}/lock` });
    },

    /** DELETE /orgs/{org}/migrations/{id}/archive */
    async deleteArchive(input: { org: string; migrationId: number }): Promise<void> {
      await github.request({ method: 'DELETE', path: `/orgs/${enc(input.org)}/migrations/${input.migrationId}/archive` });
    },

    /**
     * GET …/archive (302) and stream the storage URL to disk, hashing as it goes. The storage origin
     * gets no credentials. A retry (after a crash or timeout) resumes at the size already on disk
     * with `Range`; an expired pre-signed URL is refreshed by asking the API again.
     */
    async downloadArchive(input: ArchiveDownloadInput): Promise<ArchiveDownload> {
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
    },
  };
}

/**
 * Whether another workflow has recorded this migration as its own (search attribute `LonghaulMigrationGuid`,
 * set as soon as a workflow knows its migration): such a migration is never adopted.
 */
async function recordedByAnotherWorkflow(guid: string): Promise<boolean> {
  const ctx = Context.current();
  const own = ctx.info.workflowExecution?.workflowId ?? '';
  const quote = (v: string) => `'${v.replace(/['\\]/g, '')}'`;
  const { count } = await ctx.client.workflow.count(`${LonghaulMigrationGuid.name} = ${quote(guid)} AND WorkflowId != ${quote(own)}`);
  return count > 0;
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
