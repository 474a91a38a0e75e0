/**
 * Source-import activities (spec 002, "Source import"): one API call each. Credentials reach them as the
 * name of a credential configured on the workers and are resolved here, at call time
 * (`activities/named-secrets.ts`): the secret never enters an activity's input, result or failure, so it never
 * enters workflow history. A retired `env:`/`file:` reference (in the history of an import 0.4.0 started) is
 * never resolved.
 */
import { ApplicationFailure } from '@temporalio/common';
import { githubFor, type ActivityDeps } from '../../activities/context';
import { importCredential } from '../../activities/named-secrets';
import { isCredentialReference } from '../../common/credential';
import { activityLog } from '../../telemetry/log';
import { FailureType } from '../../http/retry-policy';
import {
  type ImportAuthor,
  type ImportRecord,
  type LargeFile,
  type ProjectChoice,
} from './model';
import { answer, expectList, expectShape, optional, required } from '../../http/answer';
import { countPoll } from '../../telemetry/metrics';
import { conditionalPoll } from '../../activities/conditional-poll';
import type { Polled } from '../../common/poll-schedule';
import { quietly } from '../../activities/quiet-poll';
import { Process } from './names';

/** `PUT/GET/PATCH /repos/{owner}/{repo}/import`: what `summarizeImport` reads to decide. */
export const IMPORT_SHAPE = answer({ status: required('string'), vcs_url: optional('string'), status_text: optional('string'), failed_step: optional('string'), error_message: optional('string') });
/** `GET/PATCH …/import/authors[/{id}]` items (`porter-author`): what the author mapping reads and acts on. */
export const IMPORT_AUTHOR_SHAPE = answer({ id: required('integer'), remote_id: required('string'), remote_name: required('string'), email: required('string'), name: required('string') });
/** `GET …/import/large_files` items (`porter-large-file`). */
export const LARGE_FILE_SHAPE = answer({ ref_name: required('string'), path: required('string'), oid: required('string'), size: required('integer') });

/** The import record as the API sends it (spec 002 field names). */
interface ImportBody {
  vcs?: string | null;
  use_lfs?: string;
  vcs_url: string;
  tfvc_project?: string;
  status: string;
  status_text?: string | null;
  failed_step?: string | null;
  error_message?: string | null;
  message?: string;
  percent?: number | null;
  import_percent?: number | null;
  commit_count?: number | null;
  push_percent?: number | null;
  has_large_files?: boolean;
  large_files_size?: number;
  large_files_count?: number;
  authors_count?: number | null;
  project_choices?: { vcs?: string; tfvc_project?: string; human_name?: string }[];
  repository_url?: string;
  html_url?: string;
}

interface AuthorBody {
  id: number;
  remote_id: string;
  remote_name: string;
  email: string;
  name: string;
}

interface LargeFileBody {
  ref_name: string;
  path: string;
  oid: string;
  size: number;
}

export interface ImportTarget {
  owner: string;
  repo: string;
}

export interface StartImportInput extends ImportTarget {
  vcsUrl: string;
  vcs?: string;
  tfvcProject?: string;
  /** The name of a configured import credential, resolved here. */
  credentials?: string;
}

const opt = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

export function summarizeImport(body: ImportBody): ImportRecord {
  return {
    status: body.status,
    statusText: opt(body.status_text),
    vcs: opt(body.vcs),
    vcsUrl: body.vcs_url,
    tfvcProject: body.tfvc_project,
    useLfs: body.use_lfs,
    hasLargeFiles: body.has_large_files === true,
    largeFilesCount: body.large_files_count ?? 0,
    largeFilesSizeGb: body.large_files_size ?? 0,
    authorsCount: body.authors_count ?? 0,
    commitCount: opt(body.commit_count),
    percent: opt(body.percent ?? body.import_percent),
    pushPercent: opt(body.push_percent),
    failedStep: opt(body.failed_step),
    errorMessage: opt(body.error_message) ?? (body.status === 'error' ? body.message : undefined),
    projectChoices: body.project_choices?.map((c) => ({ vcs: c.vcs, tfvcProject: c.tfvc_project, humanName: c.human_name })),
    repositoryUrl: body.repository_url,
    htmlUrl: body.html_url,
  };
}

const author = (a: AuthorBody): ImportAuthor => ({ id: a.id, remoteId: a.remote_id, remoteName: a.remote_name, name: a.name, email: a.email });

const enc = encodeURIComponent;
const importPath = (t: ImportTarget) => `/repos/${enc(t.owner)}/${enc(t.repo)}/import`;

export function createImportActivities(deps: ActivityDeps) {

  const activities = {
    /** PUT /repos/{owner}/{repo}/import — starts the import (the server answers the existing one to a repeat). */
    async startImport(input: StartImportInput): Promise<ImportRecord> {
      const body: Record<string, string> = { vcs_url: input.vcsUrl };
      if (input.vcs !== undefined) body.vcs = input.vcs;
      if (input.tfvcProject !== undefined) body.tfvc_project = input.tfvcProject;
      if (isCredentialReference(input.credentials)) {
        // Scheduled by 0.4.0 with a reference: started without credentials, the import asks for them
        // (auth_failed, detection_needs_auth) and the workflow waits for `import-credentials` with a name.
        activityLog('warn', 'credential-reference-dropped', `the start of the import into ${input.owner}/${input.repo} carried an env: or file: reference, which this release never resolves: started without credentials; answer with import-credentials --credentials NAME if it asks`, { owner: input.owner, repo: input.repo });
      } else if (input.credentials !== undefined) {
        const { username, password } = importCredential(input.credentials);
        body.vcs_username = username;
        body.vcs_password = password;
      }
      const res = await githubFor(deps).request<ImportBody>({ method: 'PUT', path: importPath(input), body });
      return summarizeImport(expectShape<ImportBody>(res, 'PUT', IMPORT_SHAPE));
    },

    /** GET /repos/{owner}/{repo}/import, conditional on `etag` (the last answer's): unchanged comes back as `notModified`. */
    async getImport(input: ImportTarget & { etag?: string }): Promise<Polled<ImportRecord>> {
      countPoll(Process.SourceImport);
      return conditionalPoll<ImportBody, ImportRecord>(deps, { path: importPath(input), etag: input.etag, shape: IMPORT_SHAPE }, summarizeImport);
    },

    /** PATCH /repos/{owner}/{repo}/import with `vcs_username`/`vcs_password` of the named credential. */
    async sendImportCredentials(input: ImportTarget & { credentials: string }): Promise<ImportRecord> {
      const { username, password } = importCredential(input.credentials);
      const res = await githubFor(deps).request<ImportBody>({ method: 'PATCH', path: importPath(input), body: { vcs_username: username, vcs_password: password } });
      return summarizeImport(expectShape<ImportBody>(res, 'PATCH', IMPORT_SHAPE));
    },

    /** PATCH /repos/{owner}/{repo}/import with one of `project_choices`. */
    async chooseImportProject(input: ImportTarget & { choice: ProjectChoice }): Promise<ImportRecord> {
      const body: Record<string, string> = {};
      if (input.choice.vcs !== undefined) body.vcs = input.choice.vcs;
      if (input.choice.tfvcProject !== undefined) body.tfvc_project = input.choice.tfvcProject;
      if (input.choice.humanName !== undefined) body.human_name = input.choice.humanName;
      const res = await githubFor(deps).request<ImportBody>({ method: 'PATCH', path: importPath(input), body });
      return summarizeImport(expectShape<ImportBody>(res, 'PATCH', IMPORT_SHAPE));
    },

    /** PATCH /repos/{owner}/{repo}/import with no parameters: restarts the import. */
    async restartImport(input: ImportTarget): Promise<ImportRecord> {
      const res = await githubFor(deps).request<ImportBody>({ method: 'PATCH', path: importPath(input), body: {} });
      return summarizeImport(expectShape<ImportBody>(res, 'PATCH', IMPORT_SHAPE));
    },

    /** DELETE /repos/{owner}/{repo}/import — an import already gone counts as cancelled (safe to retry). */
    async cancelImport(input: ImportTarget): Promise<{ deleted: boolean }> {
      try {
        await githubFor(deps).request({ method: 'DELETE', path: importPath(input) });
        return { deleted: true };
      } catch (err) {
        if (err instanceof ApplicationFailure && err.type === FailureType.NotFound) return { deleted: false };
        throw err;
      }
    },

    /**
     * GET /repos/{owner}/{repo}/import/authors?since=ID — authors with an id greater than `since`. A body that
     * is not a list of authors is MalformedAnswer, never an empty list (that would read as "no authors to map").
     */
    async listImportAuthors(input: ImportTarget & { since?: number }): Promise<ImportAuthor[]> {
      const res = await githubFor(deps).request<AuthorBody[]>({ method: 'GET', path: `${importPath(input)}/authors`, query: { since: input.since } });
      return expectList<AuthorBody>(res, 'GET', IMPORT_AUTHOR_SHAPE).map(author);
    },

    /** PATCH /repos/{owner}/{repo}/import/authors/{id} — sets the Git name and email of one author. */
    async mapImportAuthor(input: ImportTarget & { authorId: number; name: string; email: string }): Promise<ImportAuthor> {
      const res = await githubFor(deps).request<AuthorBody>({
        method: 'PATCH',
        path: `${importPath(input)}/authors/${input.authorId}`,
        body: { name: input.name, email: input.email },
      });
      return author(expectShape<AuthorBody>(res, 'PATCH', IMPORT_AUTHOR_SHAPE));
    },

    /** GET /repos/{owner}/{repo}/import/large_files — a malformed list is MalformedAnswer, never "no large files". */
    async listImportLargeFiles(input: ImportTarget): Promise<LargeFile[]> {
      const res = await githubFor(deps).request<LargeFileBody[]>({ method: 'GET', path: `${importPath(input)}/large_files` });
      return expectList<LargeFileBody>(res, 'GET', LARGE_FILE_SHAPE).map((f) => ({ refName: f.ref_name, path: f.path, oid: f.oid, size: f.size }));
    },

    /** PATCH /repos/{owner}/{repo}/import/lfs */
    async setImportLfs(input: ImportTarget & { useLfs: 'opt_in' | 'opt_out' }): Promise<ImportRecord> {
      const res = await githubFor(deps).request<ImportBody>({ method: 'PATCH', path: `${importPath(input)}/lfs`, body: { use_lfs: input.useLfs } });
      return summarizeImport(expectShape<ImportBody>(res, 'PATCH', IMPORT_SHAPE));
    },
  };
  // The same poll as a quiet poll (see quiet-poll.ts): attempts are polls, unchanged ones cost the workflow nothing.
  return { ...activities, quietGetImport: quietly(activities.getImport) };
}

/** The source import's activities, as its workflow proxies them. */
export type ImportActivities = ReturnType<typeof createImportActivities>;
