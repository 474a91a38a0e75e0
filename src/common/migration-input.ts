/**
 * Input, result and status types of the org-migration workflow, and the input validation that runs
 * before any API call. Deterministic: shared by the workflow, the starter and tests.
 */

export interface PollBounds {
  /** @format milliseconds — first wait before polling. Default 2 000. */
  initialIntervalMs?: number;
  /** @format milliseconds — the interval never grows past this. Default 60 000. */
  maxIntervalMs?: number;
  /** Growth per poll (≥ 1). Default 1.2: the wait overshoots the export by at most ~20 %. */
  backoffFactor?: number;
  /** @format milliseconds — give up waiting after this long. Default 24 h. */
  timeoutMs?: number;
}

export interface OrgMigrationInput {
  org: string;
  /** Repository names in `org` (1..N); empty only with `orgMetadataOnly`. */
  repositories: string[];
  lockRepositories?: boolean;
  excludeMetadata?: boolean;
  excludeGitData?: boolean;
  excludeAttachments?: boolean;
  excludeReleases?: boolean;
  excludeOwnerProjects?: boolean;
  orgMetadataOnly?: boolean;
  /** Where the archive goes, relative to the worker's data directory unless absolute. Default `archives`. */
  downloadDir?: string;
  /** Delete the archive on the server once it is safely on disk. */
  deleteArchiveAfterDownload?: boolean;
  poll?: PollBounds;
  /**
   * @format milliseconds — start-to-close timeout of each API-call activity (default 60 000). A call that
   * takes longer is abandoned and treated as an unknown outcome (the start call then looks for the
   * migration it may have created before trying again).
   */
  apiCallTimeoutMs?: number;
}

export interface OrgMigrationResult {
  migrationId: number;
  state: 'exported';
  archive: { path: string; bytes: number; sha256: string };
  unlockedRepositories: string[];
}

export type MigrationPhase = 'starting' | 'waiting' | 'downloading' | 'unlocking' | 'deleting-archive' | 'done' | 'failed' | 'cancelled';

/** What the `status` query answers. */
export interface OrgMigrationStatus {
  phase: MigrationPhase;
  org: string;
  migrationId?: number;
  /** The migration's server-side state as last polled. */
  state?: string;
  polls: number;
  /** @format milliseconds */
  nextPollInMs?: number;
  download?: { offset: number; total?: number };
  unlockedRepositories: string[];
  error?: string;
}

export const DEFAULT_POLL: Required<PollBounds> = {
  initialIntervalMs: 2_000,
  maxIntervalMs: 60_000,
  backoffFactor: 1.2,
  timeoutMs: 24 * 60 * 60 * 1000,
};

const ORG_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
const REPO_NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** Returns every problem with the input (empty when valid). */
export function migrationInputProblems(input: OrgMigrationInput): string[] {
  const problems: string[] = [];
  if (typeof input?.org !== 'string' || input.org.trim() === '') problems.push('org must be a non-empty organization name');
  else if (!ORG_NAME.test(input.org)) problems.push(`org ${JSON.stringify(input.org)} is not a valid organization name`);
  const repos = Array.isArray(input?.repositories) ? input.repositories : undefined;
  if (!repos) problems.push('repositories must be an array of repository names');
  else {
    if (repos.length === 0 && !input.orgMetadataOnly) problems.push('at least one repository is required unless orgMetadataOnly is true');
    if (repos.length > 0 && input.orgMetadataOnly) problems.push('orgMetadataOnly exports take no repositories');
    const seen = new Set<string>();
    for (const repo of repos) {
      if (typeof repo !== 'string' || !REPO_NAME.test(repo) || repo === '.' || repo === '..') problems.push(`repository ${JSON.stringify(repo)} is not a valid repository name`);
      else if (seen.has(repo.toLowerCase())) problems.push(`repository ${repo} is listed twice`);
      else seen.add(repo.toLowerCase());
    }
  }
  if (input?.apiCallTimeoutMs !== undefined && !(typeof input.apiCallTimeoutMs === 'number' && Number.isFinite(input.apiCallTimeoutMs) && input.apiCallTimeoutMs >= 1)) {
    problems.push('apiCallTimeoutMs must be a positive number of milliseconds');
  }
  const poll = input?.poll ?? {};
  const positive = (name: keyof PollBounds) => {
    const v = poll[name];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v > 0)) problems.push(`poll.${name} must be a positive number`);
  };
  (['initialIntervalMs', 'maxIntervalMs', 'backoffFactor', 'timeoutMs'] as const).forEach(positive);
  if (poll.backoffFactor !== undefined && poll.backoffFactor < 1) problems.push('poll.backoffFactor must be at least 1');
  if (poll.initialIntervalMs !== undefined && poll.maxIntervalMs !== undefined && poll.maxIntervalMs < poll.initialIntervalMs) {
    problems.push('poll.maxIntervalMs must be at least poll.initialIntervalMs');
  }
  return problems;
}

/** The next poll interval: grows by the factor, never past the maximum. */
export function nextPollInterval(currentMs: number, bounds: Required<PollBounds>): number {
  return Math.min(bounds.maxIntervalMs, Math.round(currentMs * bounds.backoffFactor));
}
