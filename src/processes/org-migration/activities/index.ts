/**
 * Organization-migration activities (spec 002): one API call each. The archive download (one file
 * streamed through the 302) is `archive.ts` (the API lookup; the bytes are the archive module's, `src/archive/`), part of this factory's activities.
 */
import type { components } from '@octokit/openapi-types';
import { githubFor, type ActivityDeps } from '../../../activities/context';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { MIGRATION_FLAG_FIELDS, MIGRATION_FLAGS, MigrationFailure, type MigrationFlag, type MigrationFlags } from '../model';
import { LonghaulMigrationGuid } from '../../../common/search-attributes';
import { basename } from 'node:path';
import { createArchiveDownload } from './archive';
import { abortArchiveUpload, checkArchiveDestination, type ArchiveDestinationOutcome } from '../../../archive';
import { pathInDataDir } from '../../../activities/data-dir';
import { answer, expectList, expectShape, optional, required } from '../../../http/answer';
import { countPoll, countSendLookup } from '../../../telemetry/metrics';
import { conditionalPoll } from '../../../activities/conditional-poll';
import type { Polled } from '../../../common/poll-schedule';
import { quietly } from '../../../activities/quiet-poll';
import { Process } from '../names';
import { FailureType } from '../../../common/failures';

type Migration = components['schemas']['migration'];

/** `POST/GET /orgs/{org}/migrations[/{id}]`: what `summarizeMigration` reads (checked as the HTTP core's `answer.ts` says). */
export const MIGRATION_SHAPE = answer({ id: required('integer'), guid: required('string'), state: required('string'), created_at: required('string'), lock_repositories: optional('boolean'), repositories: optional('array') });

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
export interface StartMigrationInput extends MigrationFlags {
  org: string;
  repositories: string[];
}

export type { ArchiveDownloadInput, ArchiveDownload } from './archive';
export type { ArchiveDestinationOutcome } from '../../../archive';
export type { DownloadProgress } from '../model';

export function summarizeMigration(m: Migration): MigrationSummary {
  return {
    flags: Object.fromEntries(MIGRATION_FLAGS.map((f) => [f, m[MIGRATION_FLAG_FIELDS[f]] === true])) as Record<MigrationFlag, boolean>,
    id: Number(m.id),
    guid: m.guid,
    state: m.state,
    lockRepositories: m.lock_repositories,
    repositories: repositoryNames(m) ?? [],
    createdAt: m.created_at,
  };
}

/**
 * A migration's repository names, from what both REST API versions return: 2022-11-28 gives each as a full
 * `repository`, 2026-03-10 as a `simple-repository` (changeset restrict_repo_fields_in_migration_resource); both
 * carry `name` and `full_name`. Undefined when the answer names none that can be read (`repositories` absent, or an
 * entry with neither field): such a migration cannot be told apart by its repositories.
 */
function repositoryNames(m: Migration): string[] | undefined {
  const entries = (m as { repositories?: unknown }).repositories;
  if (!Array.isArray(entries)) return undefined;
  const names = entries.map((r: { name?: unknown; full_name?: unknown } | null) =>
    typeof r?.name === 'string' ? r.name : typeof r?.full_name === 'string' ? r.full_name.split('/').pop() : undefined,
  );
  return names.every((n): n is string => typeof n === 'string' && n !== '') ? names : undefined;
}

const enc = encodeURIComponent;

export function createMigrationActivities(deps: ActivityDeps) {
  /** GET /orgs/{org}/migrations/{id}, conditional on `etag` (the last answer's): unchanged comes back as `notModified`. */
  async function getMigration(input: { org: string; migrationId: number; etag?: string }): Promise<Polled<MigrationSummary>> {
    countPoll(Process.OrgMigration);
    return conditionalPoll<Migration, MigrationSummary>(
      deps,
      { path: `/orgs/${enc(input.org)}/migrations/${input.migrationId}`, query: { exclude: ['repositories'] }, etag: input.etag, shape: MIGRATION_SHAPE },
      summarizeMigration,
    );
  }

  return {
    /** POST /orgs/{org}/migrations — starts an export. Not idempotent: the workflow guards re-sends. */
    async startMigration(input: StartMigrationInput): Promise<MigrationSummary> {
      const body: Record<string, unknown> = { repositories: input.repositories };
      for (const flag of MIGRATION_FLAGS) if (input[flag] !== undefined) body[MIGRATION_FLAG_FIELDS[flag]] = input[flag];
      const res = await githubFor(deps).request<Migration>({ method: 'POST', path: `/orgs/${enc(input.org)}/migrations`, body });
      return summarizeMigration(expectShape<Migration>(res, 'POST', MIGRATION_SHAPE));
    },

    /**
     * Finds the migration this workflow may already have created (after a start call whose outcome is
     * unknown), the newest that matches all of: exactly these repositories, the same flags, created inside
     * this workflow's attempt window, and not recorded by another workflow (`LonghaulMigrationGuid`).
     * The list is newest first: paging stops at the first migration created before the window (at most 10
     * pages), so an organization's long history of migrations costs one page, not ten.
     */
    async findMigration(input: FindMigrationInput): Promise<MigrationSummary | undefined> {
      countSendLookup(Process.OrgMigration);
      const wanted = [...input.repositories].map((r) => r.toLowerCase()).sort().join(',');
      const [notBefore, notAfter] = [Date.parse(input.notBefore), Date.parse(input.notAfter)];
      for await (const page of githubFor(deps).paginate<Migration>(`/orgs/${enc(input.org)}/migrations`, { per_page: 100 }, 10)) {
        for (const m of expectList<Migration>(page.response, 'GET', MIGRATION_SHAPE)) {
          const candidate = summarizeMigration(m);
          const names = candidate.repositories.map((r) => r.toLowerCase()).sort().join(',');
          const created = Date.parse(candidate.createdAt);
          // Every later one is older still: none of them is this workflow's.
          if (created < notBefore) return undefined;
          if (created > notAfter) continue;
          if (MIGRATION_FLAGS.some((f) => candidate.flags[f] !== (input.flags[f] ?? false))) continue;
          // The safe side: an export of this window and these flags whose repositories cannot be read may be this
          // workflow's. Passing it over would start the export again (twice, silently); adopting it might take
          // another's. Neither: the start fails, naming the migration to check.
          if (repositoryNames(m) === undefined && wanted !== '') throw unidentifiable(input.org, candidate);
          if (names !== wanted) continue;
          if (await recordedByAnotherWorkflow(candidate.guid)) continue;
          return candidate;
        }
      }
      return undefined;
    },

    getMigration,

    /**
     * `getMigration` as a quiet poll (`src/activities/quiet-poll.ts`): one activity whose attempts are the polls;
     * an unchanged answer fails benignly until the next one, so unchanged polls cost the workflow nothing.
     */
    quietGetMigration: quietly(getMigration),

    /** DELETE /orgs/{org}/migrations/{id}/repos/{repo}/lock */
    async unlockRepository(input: { org: string; migrationId: number; repository: string }): Promise<void> {
      await githubFor(deps).request({ method: 'DELETE', path: `/orgs/${enc(input.org)}/migrations/${input.migrationId}/repos/${enc(input.repository)}/lock` });
    },

    /**
     * DELETE /orgs/{org}/migrations/{id}/archive. An archive already gone (404, 410) is deleted, not a failure: the
     * attempt before this one deleted it and its answer was lost with the connection or the host, or GitHub's 7 days
     * passed. Access is not in question here: the same credential has just unlocked the export's repositories.
     */
    async deleteArchive(input: { org: string; migrationId: number }): Promise<void> {
      try {
        await githubFor(deps).request({ method: 'DELETE', path: `/orgs/${enc(input.org)}/migrations/${input.migrationId}/archive` });
      } catch (err) {
        if (err instanceof ApplicationFailure && (err.type === FailureType.NotFound || err.type === FailureType.Gone)) return;
        throw err;
      }
    },

    downloadArchive: createArchiveDownload(deps),

    /**
     * The archive's destination (the input's `archiveTo`, else the worker's `LONGHAUL_ARCHIVE_TO`), checked with
     * one call to the store before the export is started: a missing bucket or a refusal fails typed and
     * non-retryable; a store that is down fails retryable. For the local data directory, `downloadDir` must stay
     * inside it, links followed (`PathOutsideDataDir` otherwise): no export is started for an archive that could
     * not be written.
     */
    async checkArchiveDestination(input: { archiveTo?: string; downloadDir?: string }): Promise<ArchiveDestinationOutcome> {
      const outcome = await checkArchiveDestination(input.archiveTo);
      if (outcome.store === 'local' && input.downloadDir !== undefined) await pathInDataDir(deps.dataDir, input.downloadDir, 'downloadDir');
      return outcome;
    },

    /** Drops the upload still open for the archive `path` names (its file name is the object's), after a failure or cancellation. */
    async abortArchiveUpload(input: { org: string; migrationId: number; path: string; archiveTo?: string }): Promise<ArchiveDestinationOutcome> {
      return abortArchiveUpload(input.archiveTo, basename(input.path));
    },
  };
}

function unidentifiable(org: string, m: MigrationSummary): ApplicationFailure {
  return ApplicationFailure.create({
    type: MigrationFailure.StartUnidentifiable,
    nonRetryable: true,
    message: `migration ${m.id} (guid ${m.guid}, created ${m.createdAt}) of ${org} matches this start's attempt window and flags but its answer names no repositories: it is neither adopted nor started again; check GET /orgs/${org}/migrations/${m.id}/repositories`,
    details: [{ migrationId: m.id, guid: m.guid, createdAt: m.createdAt }],
  });
}

/** The migration's activities, as its workflow proxies them. */
export type MigrationActivityFunctions = ReturnType<typeof createMigrationActivities>;

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
