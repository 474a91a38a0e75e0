/**
 * Organization-migration activities (spec 002): one API call each. The archive download (one file
 * streamed through the 302) lives in `archive-download.ts` and is part of this factory's activities.
 */
import type { components } from '@octokit/openapi-types';
import type { ActivityDeps } from '../context';
import type { OrgMigrationInput } from '../../common/migration-input';
import { createArchiveDownload } from './archive-download';

type Migration = components['schemas']['migration'];

/** The part of a migration workflows need (keeps workflow history small). */
export interface MigrationSummary {
  id: number;
  guid: string;
  state: string;
  lockRepositories: boolean;
  repositories: string[];
  createdAt: string;
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

export type { ArchiveDownloadInput, ArchiveDownload, DownloadProgress } from './archive-download';

export function summarizeMigration(m: Migration): MigrationSummary {
  return {
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
      const flags: [keyof StartMigrationInput, string][] = [
        ['lockRepositories', 'lock_repositories'],
        ['excludeMetadata', 'exclude_metadata'],
        ['excludeGitData', 'exclude_git_data'],
        ['excludeAttachments', 'exclude_attachments'],
        ['excludeReleases', 'exclude_releases'],
        ['excludeOwnerProjects', 'exclude_owner_projects'],
        ['orgMetadataOnly', 'org_metadata_only'],
      ];
      for (const [from, to] of flags) if (input[from] !== undefined) body[to] = input[from];
      const res = await github.request<Migration>({ method: 'POST', path: `/orgs/${enc(input.org)}/migrations`, body });
      return summarizeMigration(res.body);
    },

    /**
     * Finds a migration this workflow may already have created (after a start call whose outcome is
     * unknown): the newest one created at or after `notBefore` with exactly these repositories.
     */
    async findMigration(input: { org: string; repositories: string[]; notBefore: string }): Promise<MigrationSummary | undefined> {
      const wanted = [...input.repositories].map((r) => r.toLowerCase()).sort().join(',');
      const notBefore = Date.parse(input.notBefore);
      for await (const page of github.paginate<Migration>(`/orgs/${enc(input.org)}/migrations`, { per_page: 100 }, 10)) {
        for (const m of page.items) {
          const names = (m.repositories ?? []).map((r) => r.name.toLowerCase()).sort().join(',');
          if (names === wanted && Date.parse(m.created_at) >= notBefore) return summarizeMigration(m);
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

    downloadArchive: createArchiveDownload(deps),
  };
}
