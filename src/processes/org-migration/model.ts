/**
 * The org-migration process (spec 002), as every layer sees it: input, result and status types, the
 * failure types the workflow ends with, input validation (before any API call; the CLI runs the same), the
 * deterministic workflow id per repository set, and `describeOrgMigration`, the one status text shown by
 * the workflow (current details, search attributes) and the CLI. Deterministic: workflows import this.
 */
import * as v from 'valibot';
import { loginSchema, RepositoryListSchema } from '../../common/github-names';
import { msBetween, notBoth, object, problemsOf, rule } from '../../common/schema';
import { summarizeList, type StatusView } from '../../common/search-attributes';
import { HONEST_POLL_SHAPE, pollBoundsSchema, type ResolvedPollBounds } from '../../common/poll-schedule';
import { formatDuration, OutageBoundsSchema } from '../../common/outage';
import type { PollState } from '../../common/poll-decision';
import { EventBudgetSchema } from '../../common/run-budget';
import { sendOnceGraceSchema } from '../../common/send-once-grace';
import type { CredentialChoice } from '../../common/credential';
import { Process } from './names';
import { failureTypes } from '../../common/failures';
import { MIGRATION_FAILURES } from './failures';
import { destinationUrlSchema } from '../../archive/object-store/destination';
import type { DownloadProgress } from '../../archive/progress';

export type { PollBounds } from '../../common/poll-schedule';

/** Failure types the org-migration workflow ends with (stable strings for callers). */
export const MigrationFailure = failureTypes(MIGRATION_FAILURES);

/**
 * The body flags of the start call, defined once: the workflow input's name → the API's body field (the CLI's
 * option is the field with dashes). Adoption requires them to match. Every list of flags derives from this one.
 */
export const MIGRATION_FLAG_FIELDS = {
  lockRepositories: 'lock_repositories',
  excludeMetadata: 'exclude_metadata',
  excludeGitData: 'exclude_git_data',
  excludeAttachments: 'exclude_attachments',
  excludeReleases: 'exclude_releases',
  excludeOwnerProjects: 'exclude_owner_projects',
  orgMetadataOnly: 'org_metadata_only',
} as const;
export type MigrationFlag = keyof typeof MIGRATION_FLAG_FIELDS;
export const MIGRATION_FLAGS = Object.keys(MIGRATION_FLAG_FIELDS) as MigrationFlag[];
/** The flags as the workflow input carries them (each optional, default false). */
export type MigrationFlags = { [F in MigrationFlag]?: boolean };

/** A migration's input: see `OrgMigrationInputSchema` for each field; `sendOnceGraceMs` is the start's grace. */
export type OrgMigrationInput = v.InferInput<typeof OrgMigrationInputSchema> & CredentialChoice;

/** What one run hands to the next when it continues as new. */
export interface OrgMigrationResume {
  migrationId: number;
  /** The repositories the migration locked (unlocked at the end, whatever happens). */
  locked: string[];
  status: OrgMigrationStatus;
  /** While waiting: the export's state as last polled. */
  state?: string;
  /** While waiting: the poller's schedule position, counters, outage budget spent, start of the total time bound. */
  poll?: PollState;
  /** Once the export ended: how the workflow ends after the unlocks still to make (many repositories, long outages). */
  ending?: MigrationEnding;
}

/** How a migration ends once every repository is unlocked. */
export type MigrationEnding =
  | { kind: 'exported'; archive: MigrationArchive }
  | {
      kind: 'failed';
      type: string;
      message: string;
      details?: unknown[];
      cancelled?: boolean;
      /** The ending came mid-download: the archive's upload is aborted once every repository is unlocked. */
      abortUpload?: boolean;
    };

/** Where the archive went: a local file, or an object (then `path` is the object's URL too). */
export interface MigrationArchive {
  path: string;
  bytes: number;
  sha256: string;
  /** The object's URL (`s3://bucket/key`, `gs://…`, `azblob://…`) when the archive went to an object store. */
  url?: string;
  /** The store's ETag (S3, Azure) or generation (GCS). */
  version?: string;
}

/**
 * The memo key under which a migration records where its archive went (`MigrationArchive`), once it is stored:
 * what `longhaul list` shows. A memo rather than a search attribute: nothing filters on it, so no attribute has
 * to be registered in every namespace before a worker may poll (docs/operations.md, "Upgrading"); an object's
 * URL is not cut to SQL visibility's 255 characters; and, like every payload, it is encrypted when a codec key is
 * configured. Set by the workflow the moment the download returns, the same way whether the destination came
 * from the input, from the worker's `LONGHAUL_ARCHIVE_TO`, or is the worker's disk.
 */
export const ARCHIVE_MEMO = 'archive';

/** The archive's name: the object's name under the destination's prefix, or the file's under the download directory. */
export function archiveFileName(org: string, migrationId: number): string {
  return `${org}-migration-${migrationId}.tar.gz`;
}

export interface OrgMigrationResult {
  migrationId: number;
  state: 'exported';
  archive: MigrationArchive;
  unlockedRepositories: string[];
}

export type MigrationPhase = 'starting' | 'waiting' | 'downloading' | 'unlocking' | 'deleting-archive' | 'done' | 'failed' | 'cancelled';

/** What the `status` query answers. */
export interface OrgMigrationStatus {
  phase: MigrationPhase;
  org: string;
  /** The repositories, summarised within the search-attribute limit. */
  target: string;
  migrationId?: number;
  /** The migration's server-side state as last polled. */
  state?: string;
  polls: number;
  /** Polls that failed (each followed by another poll). */
  failedPolls: number;
  /** Failed polls since the last answer: an outage in progress when > 0. */
  failuresInRow: number;
  /** @format milliseconds */
  nextPollInMs?: number;
  download?: { offset: number; total?: number };
  /**
   * The object the download streams into, when the input names a destination (`archiveTo`): known before the
   * download starts. The worker's default destination (`LONGHAUL_ARCHIVE_TO`) is known only once it ends.
   */
  archiveTo?: string;
  /** Where the archive went once it is stored: the object's URL, or the file on the worker's disk. */
  archive?: Pick<MigrationArchive, 'path' | 'url' | 'bytes'>;
  unlockedRepositories: string[];
  /** Runs this migration continued as new. */
  continuedAsNew: number;
  /**
   * Lookups of the migration list after a start whose outcome was unknown (the exactly-once start): two at
   * most per such start. Absent in statuses from before it was counted.
   */
  startLookups?: number;
  error?: string;
}

/**
 * How an export is polled unless the input says otherwise: the kit's honest shape (every 30 s, then 10 % of
 * the wait, ≤ 10 min: the end is noticed at most max(10 % of the wait, 30 s) late) for at most 24 h. Polls
 * are conditional: while the state does not change they are 304s, which do not count against the rate limit.
 */
export const DEFAULT_POLL: ResolvedPollBounds = { ...HONEST_POLL_SHAPE, timeoutMs: 24 * 60 * 60 * 1000 };

/** A fresh status for the input. */
export function newMigrationStatus(input: Pick<OrgMigrationInput, 'org' | 'repositories'>): OrgMigrationStatus {
  return {
    phase: 'starting',
    org: input.org,
    target: input.repositories.length > 0 ? summarizeList(input.repositories) : '(org metadata)',
    polls: 0,
    failedPolls: 0,
    failuresInRow: 0,
    unlockedRepositories: [],
    continuedAsNew: 0,
  };
}

/**
 * The most repositories GitHub takes in one export (`POST /orgs/{org}/migrations`): a longer list is refused here,
 * before any request, instead of by the API after the repositories were looked up.
 */
export const MAX_REPOSITORIES_PER_EXPORT = 5_000;

const exportFlag = () => v.optional(v.boolean((issue) => `must be true or false (got ${JSON.stringify(issue.input)})`));
const callMs = () => v.optional(msBetween(1_000, 24 * 60 * 60 * 1000, 'must be a number of milliseconds between 1000 and 86400000'));

/** A migration's input, checked before any API call (the workflow runs it; so does the CLI through it). */
export const OrgMigrationInputSchema = v.pipe(
  object(
    {
      org: loginSchema(),
      /** Repository names in `org` (1..N); empty only with `orgMetadataOnly`. */
      repositories: v.pipe(
        RepositoryListSchema,
        v.maxLength(MAX_REPOSITORIES_PER_EXPORT, (issue) => `may name at most ${MAX_REPOSITORIES_PER_EXPORT} repositories, GitHub's maximum per export (got ${(issue.input as unknown[]).length}): split them over several migrations`),
      ),
      ...(Object.fromEntries(MIGRATION_FLAGS.map((flag) => [flag, exportFlag()])) as Record<MigrationFlag, ReturnType<typeof exportFlag>>),
      /** Delete the archive on the server once it is safely on disk. */
      deleteArchiveAfterDownload: exportFlag(),
      /**
       * An object-store destination for the archive: `s3://BUCKET/PREFIX`, `gs://BUCKET/PREFIX` or
       * `azblob://CONTAINER/PREFIX` (docs/org-migration.md, "Archive destinations"). The endpoint and credentials
       * come from the worker's SDK settings, never from here. Absent: the worker's `LONGHAUL_ARCHIVE_TO`, else
       * `downloadDir` on the worker's disk.
       */
      archiveTo: v.optional(destinationUrlSchema()),
      /**
       * Where the archive goes, relative to the worker's data directory (absolute paths, `..` and links leading
       * out of it are refused: `PathOutsideDataDir`). Default `archives`.
       */
      downloadDir: v.optional(v.pipe(v.string('must be a non-empty path'), v.check((dir) => dir.trim() !== '', 'must be a non-empty path'))),
      /**
       * @format milliseconds — start-to-close timeout of each API-call activity (default 60 000). A call that
       * takes longer is abandoned and treated as an unknown outcome (the start call then looks for the
       * migration it may have created before trying again).
       */
      apiCallTimeoutMs: callMs(),
      /**
       * @format milliseconds — the archive download's heartbeat timeout (default 30 000, 5 000..600 000): how long after
       * its worker's last heartbeat (one a second while bytes flow) another worker takes the download over from its
       * checkpoint when the first one died.
       */
      downloadHeartbeatTimeoutMs: v.optional(msBetween(5_000, 600_000, 'must be a number of milliseconds between 5000 and 600000')),
      /** @format milliseconds — how long the start lookups go on after an unknown outcome. Default 2 × apiCallTimeoutMs + 60 s. */
      sendOnceGraceMs: sendOnceGraceSchema(24 * 60 * 60 * 1000),
      /** @deprecated The former name of `sendOnceGraceMs` (the start's grace), still read: inputs written before carry it. */
      startGraceMs: sendOnceGraceSchema(24 * 60 * 60 * 1000),
      poll: pollBoundsSchema(DEFAULT_POLL),
      /** How long failing polls, lookups and cleanup calls are retried in a row. Default 6 h, backoff 5 s doubling to 3 min. */
      outage: OutageBoundsSchema,
      /** History events per run before continuing as new between polls (50..8,000; default 8,000). */
      eventsPerRun: EventBudgetSchema,
      /** Set by the workflow itself when it continues as new: what the previous run knew. */
      resume: v.optional(
        v.custom<OrgMigrationResume>((r) => {
          const resume = r as OrgMigrationResume | null;
          return (
            typeof resume === 'object' &&
            resume !== null &&
            Number.isInteger(resume.migrationId) &&
            Array.isArray(resume.locked) &&
            typeof resume.status === 'object' &&
            (resume.ending !== undefined || (typeof resume.poll === 'object' && typeof resume.state === 'string'))
          );
        }, 'is set by the workflow when it continues as new; it is malformed'),
      ),
    },
    'input must be an object',
  ),
  rule(['repositories', 'orgMetadataOnly'], (input) => input.repositories.length > 0 || !!input.orgMetadataOnly, 'at least one repository is required unless orgMetadataOnly is true'),
  rule(['repositories', 'orgMetadataOnly'], (input) => input.repositories.length === 0 || !input.orgMetadataOnly, 'orgMetadataOnly exports take no repositories'),
  rule(
    ['repositories', 'resume'],
    (input) => input.resume === undefined || input.resume.locked.every((repo) => input.repositories.includes(repo)),
    '{path}.locked names repositories that are not in repositories',
    'resume',
  ),
  notBoth('sendOnceGraceMs', 'startGraceMs'),
);

/** Returns every problem with the input (empty when valid). */
export function migrationInputProblems(input: unknown): string[] {
  return problemsOf(OrgMigrationInputSchema, input);
}

/** FNV-1a, 32 bits: a small deterministic hash (no Node crypto in workflow-safe code). */
function fnv1a(text: string, seed = 0x811c9dc5): string {
  let hash = seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * The workflow id of a migration of these repositories: `migrate-<org>-<first names>-<hash of the sorted
 * set>`. The same set (in any order or case) gives the same id, so a second migration of the same
 * repositories is refused while the first runs; `--workflow-id` overrides it deliberately.
 */
export function migrationWorkflowId(org: string, repositories: readonly string[]): string {
  const sorted = [...repositories].map((r) => r.toLowerCase()).sort();
  const key = `${org.toLowerCase()}/${sorted.join('\n')}`;
  const readable = (sorted.length > 0 ? sorted.join('-') : 'org-metadata').replace(/[^a-z0-9._-]+/g, '-').slice(0, 60).replace(/-+$/, '');
  return `migrate-${org.toLowerCase()}-${readable}-${fnv1a(key)}${fnv1a(key, 0x01234567)}`;
}

/**
 * The one status text of a migration: the UI's current details and the CLI's progress line, plus the search
 * attributes. `heartbeat` is the download's progress when the CLI has it.
 */
export type { DownloadProgress, ResumeReport } from '../../archive/progress';

export function describeOrgMigration(
  s: OrgMigrationStatus,
  heartbeat?: Partial<DownloadProgress>,
  // The workflow passes `patched(…)` here: runs recorded before this rule must replay without its extra upsert.
  opts: { listEnding?: boolean } = {},
): StatusView & { percent?: number } {
  const parts: string[] = [s.phase];
  if (s.migrationId !== undefined) parts.push(`migration ${s.migrationId}`);
  if (s.state) parts.push(`state ${s.state}`);
  if (s.startLookups) parts.push(`${s.startLookups} start lookup${s.startLookups === 1 ? '' : 's'}`);
  if (s.phase === 'waiting') {
    parts.push(`${s.polls} polls${s.failedPolls ? ` (${s.failedPolls} failed)` : ''}`);
    if (s.failuresInRow > 0) parts.push(`API failing: ${s.failuresInRow} polls in a row`);
    if (s.nextPollInMs !== undefined) parts.push(`next poll in ${formatDuration(s.nextPollInMs)}`);
  }
  let percent: number | undefined;
  const progress: Partial<DownloadProgress> | undefined = heartbeat ?? s.download;
  const kib = (n: number) => `${Math.round(n / 1024)} KiB`;
  if (s.phase === 'downloading' && typeof progress?.offset === 'number') {
    const url = typeof progress.url === 'string' ? progress.url : s.archiveTo;
    parts.push(`${kib(progress.offset)}${progress.total ? ` of ${kib(progress.total)}` : ''}${url !== undefined ? ` stored in ${url}` : ''}`);
    if (progress.total) percent = (100 * progress.offset) / progress.total;
    const resume = progress.resume;
    if (resume && typeof resume.from === 'number' && resume.from > 0) {
      parts.push(`resumed at ${kib(resume.from)} (${resume.basis}; ${kib(resume.reRead)} fetched again${resume.readBack ? `, ${kib(resume.readBack)} read back from disk` : ''})`);
    }
  } else if (s.phase === 'downloading' && s.archiveTo !== undefined) {
    // What the workflow knows while the activity runs (the bytes are in the activity's heartbeat).
    parts.push(`into ${s.archiveTo}`);
  } else if (s.archive) {
    parts.push(`archive ${kib(s.archive.bytes)} ${s.archive.url !== undefined ? `stored in ${s.archive.url}` : `at ${s.archive.path}`}`);
  }
  if (s.unlockedRepositories.length) parts.push(`unlocked ${summarizeList(s.unlockedRepositories, 200)}`);
  if (s.continuedAsNew > 0) parts.push(`run ${s.continuedAsNew + 1}`);
  if (s.error) parts.push(`error: ${s.error}`);
  return {
    line: parts.join(' · '),
    percent,
    // A migration that ended cancelled or failed is listed as such, not under the export state it last saw
    // (`list --state exporting` must not show it).
    attributes: { process: Process.OrgMigration, org: s.org, target: s.target, state: migrationEnded(s) && opts.listEnding !== false ? s.phase : (s.state ?? s.phase) },
  };
}

/** Cancelled or failed: the phases a migration is listed under instead of the export state it last saw. */
export function migrationEnded(s: Pick<OrgMigrationStatus, 'phase'>): boolean {
  return s.phase === 'cancelled' || s.phase === 'failed';
}
