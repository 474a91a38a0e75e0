/**
 * The backup process (issue 38), as every layer sees it: a run's input, its status and the one status text,
 * the run folder's name, the manifest's shape and the workflow ids. Deterministic: the workflow imports this.
 *
 * A run exports every repository an organization has into `<prefix>/<org>/<run start, UTC>/` of an object store,
 * as child org migrations (never locking), and writes `manifest.json` last: a folder without one is an incomplete
 * run.
 */
import * as v from 'valibot';
import { loginSchema } from '../../common/github-names';
import { msBetween, object, problemsOf, wholeBetween } from '../../common/schema';
import { type StatusView } from '../../common/search-attributes';
import { pollBoundsSchema } from '../../common/poll-schedule';
import { EventBudgetSchema } from '../../common/run-budget';
import type { CredentialChoice } from '../../common/credential';
import { Process } from './names';
import { failureTypes } from '../../common/failures';
import { BACKUP_FAILURES } from './failures';
import { destinationUrlSchema } from '../../archive/object-store/destination';
import { DEFAULT_REPOS_PER_EXPORT, GITHUB_MAX_REPOSITORIES_PER_EXPORT } from './plan';

export const BackupFailure = failureTypes(BACKUP_FAILURES);

/** The export flags a backup passes on to each export (never `lockRepositories`, never `orgMetadataOnly`). */
export const BACKUP_EXCLUDE_FLAGS = ['excludeMetadata', 'excludeGitData', 'excludeAttachments', 'excludeReleases', 'excludeOwnerProjects'] as const;
export type BackupExcludeFlag = (typeof BACKUP_EXCLUDE_FLAGS)[number];

/** GitHub's body field of each exclude flag (`--exclude-git-data` is the CLI's option). */
export const BACKUP_EXCLUDE_FIELDS: Record<BackupExcludeFlag, string> = {
  excludeMetadata: 'exclude_metadata',
  excludeGitData: 'exclude_git_data',
  excludeAttachments: 'exclude_attachments',
  excludeReleases: 'exclude_releases',
  excludeOwnerProjects: 'exclude_owner_projects',
};

/**
 * Each export is an org migration started by its workflow type (processes do not import one another: the
 * import-boundary lint): the part of its input a backup sets and of its result it reads, by the same field names
 * (`src/processes/org-migration/model.ts` is the definition; `test/integration/org-backup.test.ts` runs them together).
 */
export const EXPORT_WORKFLOW_TYPE = 'orgMigration';
export interface ExportInput extends Partial<Record<BackupExcludeFlag, boolean>>, CredentialChoice {
  org: string;
  repositories: string[];
  lockRepositories: false;
  archiveTo: string;
  deleteArchiveAfterDownload: boolean;
  poll?: unknown;
  apiCallTimeoutMs?: number;
}
export interface ExportResult {
  migrationId: number;
  archive: { path: string; url?: string; bytes: number; sha256: string };
}
/**
 * The failure types of an export a backup tells apart, as the migration's group of the failure registry names them
 * (`src/processes/org-migration/failures.ts` is the definition; test/unit/processes.test.ts holds these equal to it).
 */
export const ExportFailure = { ExportFailed: 'MigrationExportFailed', StartFailed: 'MigrationStartFailed' } as const;

/** The name of the object that makes a run folder complete, written last. */
export const MANIFEST = 'manifest.json';
/** Where a run keeps its listing and plan inside its folder (read by the run itself, on any host). */
export const RUN_STATE_DIR = '_run/';

/** The run folder's name: its start, UTC, to the second, sortable (`20261128T102917Z`). */
export function runStamp(startedAtMs: number): string {
  return new Date(startedAtMs).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

/** The start a run folder's name carries, or undefined for a name that is not one. */
export function stampTime(stamp: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(stamp);
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : undefined;
}

/** `s3://bucket/prefix/` + `<org>/`: where an organization's runs lie. */
export function orgFolderUrl(archiveTo: string, org: string): string {
  return `${archiveTo.endsWith('/') ? archiveTo : `${archiveTo}/`}${org}/`;
}

/** The run folder's URL: `<archiveTo>/<org>/<stamp>/`. */
export function runFolderUrl(archiveTo: string, org: string, startedAtMs: number): string {
  return `${orgFolderUrl(archiveTo, org)}${runStamp(startedAtMs)}/`;
}

/** One repository in the manifest. */
export interface ManifestRepository {
  name: string;
  /** The archive object's URL (several repositories share one archive). */
  archive: string;
  sha256: string;
  bytes: number;
  /** GitHub's migration id of the export. */
  exportId: number;
}

/** A repository the run could not back up. */
export interface FailedRepository {
  name: string;
  /** GitHub's reason: the export's state, or the start's refusal. */
  reason: string;
  /** `export-failed`: GitHub ended every export holding it `failed`; `gone`: deleted or renamed since the listing. */
  kind: 'export-failed' | 'gone' | 'error';
}

export interface Manifest {
  format: 'longhaul-backup/1';
  org: string;
  startedAt: string;
  finishedAt: string;
  destination: string;
  /** Repositories the listing found. */
  listed: number;
  repositories: ManifestRepository[];
  failed: FailedRepository[];
  exports: { exportId: number; archive: string; sha256: string; bytes: number; repositories: number }[];
}

/** One stored export as the run keeps it: a plan entry (`part`) or a split's names, and its archive. */
export interface StoredExport {
  part?: number;
  names?: string[];
  migrationId: number;
  url: string;
  sha256: string;
  bytes: number;
}

/** An export still to make: a plan entry, or a half of a failed one. */
export interface ExportWork {
  part?: number;
  names?: string[];
  /** How many halvings led here (0: the plan's). */
  depth: number;
}

export type BackupPhase = 'checking' | 'listing' | 'planning' | 'exporting' | 'manifest' | 'retention' | 'cleanup' | 'done' | 'failed';

/** What the `status` query answers. */
export interface BackupStatus {
  phase: BackupPhase;
  org: string;
  destination: string;
  /** The run folder's URL. */
  folder: string;
  startedAt: string;
  listedPages: number;
  listed: number;
  plannedExports: number;
  exportsStarted: number;
  exportsStored: number;
  /** Repositories in stored archives. */
  backedUp: number;
  failed: FailedRepository[];
  halvings: number;
  runningExports: number;
  /** Run folders retention deleted. */
  pruned?: string[];
  continuedAsNew: number;
}

/** What a run hands to the next when it continues as new: everything it knows, no names in bulk. */
export interface BackupResume {
  startedAtMs: number;
  status: BackupStatus;
  nextPage?: number;
  listingDone: boolean;
  planned?: number;
  nextPart: number;
  queue: ExportWork[];
  stored: StoredExport[];
}

export interface BackupResult {
  org: string;
  folder: string;
  manifest: string;
  listed: number;
  backedUp: number;
  failed: FailedRepository[];
  exports: number;
  halvings: number;
  pruned: string[];
}

/** A backup run's input: the organization, where to, and how. Names a credential, never holds one. */
export type BackupInput = v.InferInput<typeof BackupInputSchema> & CredentialChoice;

const flag = () => v.optional(v.boolean((issue) => `must be true or false (got ${JSON.stringify(issue.input)})`));

export const BackupInputSchema = object(
  {
    org: loginSchema(),
    /** `s3://BUCKET/PREFIX`, `gs://…` or `azblob://…`: runs go under `<PREFIX>/<org>/<run start>/`. */
    archiveTo: destinationUrlSchema(),
    /** At most this many repositories per export (1..5,000; default 100, docs/backups.md). */
    reposPerExport: v.optional(wholeBetween(1, GITHUB_MAX_REPOSITORIES_PER_EXPORT, `must be a whole number from 1 to ${GITHUB_MAX_REPOSITORIES_PER_EXPORT}`)),
    /** Exports running at once (1..20; default 4). */
    concurrentExports: v.optional(wholeBetween(1, 20, 'must be a whole number from 1 to 20')),
    /** @format milliseconds — after a complete run, runs older than this are deleted (never the newest complete one). */
    keepMs: v.optional(msBetween(1_000, 100 * 365 * 24 * 3600_000, 'must be a duration of at least 1 s')),
    /** Keep GitHub's copy of each export archive (default: deleted once stored). */
    keepGithubArchives: flag(),
    ...(Object.fromEntries(BACKUP_EXCLUDE_FLAGS.map((f) => [f, flag()])) as Record<BackupExcludeFlag, ReturnType<typeof flag>>),
    /** How each export is polled (the migration's `poll`). */
    exportPoll: pollBoundsSchema(),
    /** @format milliseconds — each API call's timeout (the migration's `apiCallTimeoutMs`). */
    apiCallTimeoutMs: v.optional(msBetween(1_000, 24 * 3600_000, 'must be a number of milliseconds between 1000 and 86400000')),
    /** History events per run before continuing as new between exports (default 8,000). */
    eventsPerRun: EventBudgetSchema,
    /** Who started the run: a Schedule, or `backup --now`. */
    origin: v.optional(v.picklist(['schedule', 'now'], 'must be "schedule" or "now"')),
    resume: v.optional(v.custom<BackupResume>((r) => typeof r === 'object' && r !== null && typeof (r as BackupResume).startedAtMs === 'number', 'is set by the workflow when it continues as new; it is malformed')),
  },
  'input must be an object',
);

export function backupInputProblems(input: unknown): string[] {
  return problemsOf(BackupInputSchema, input);
}

export function defaultReposPerExport(input: Pick<BackupInput, 'reposPerExport'>): number {
  return input.reposPerExport ?? DEFAULT_REPOS_PER_EXPORT;
}

/** FNV-1a, 32 bits (no Node crypto in workflow-safe code). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** The Schedule of one organization and destination: `backup:<org>:<hash of the destination>`. */
export function backupScheduleId(org: string, archiveTo: string): string {
  return `backup:${org.toLowerCase()}:${fnv1a(orgFolderUrl(archiveTo, org.toLowerCase()))}`;
}

/**
 * The workflow id of a run's `n`th export: `backup-<org>-<destination hash>-<run stamp>-export-<n>`. From the run's
 * own facts, not its workflow id, so a history replays under any id (the replay test names runs by their file).
 */
export function exportWorkflowId(org: string, archiveTo: string, startedAtMs: number, n: number): string {
  return `backup-${org.toLowerCase()}-${fnv1a(orgFolderUrl(archiveTo, org.toLowerCase()))}-${runStamp(startedAtMs)}-export-${n}`;
}

/** The coverage line: `1,199 of 1,200 repositories`. */
export function coverage(s: Pick<BackupStatus, 'backedUp' | 'listed'>): string {
  return `${s.backedUp.toLocaleString('en-US')} of ${s.listed.toLocaleString('en-US')} repositories`;
}

/** The one status text of a run (UI's current details, `status`), with the search attributes. */
export function describeBackup(s: BackupStatus): StatusView {
  const parts: string[] = [s.phase, `${s.org} → ${s.folder}`];
  if (s.phase === 'listing') parts.push(`${s.listed} listed (${s.listedPages} pages)`);
  if (s.plannedExports > 0) parts.push(`exports ${s.exportsStored}/${s.plannedExports} stored${s.runningExports ? `, ${s.runningExports} running` : ''}${s.halvings ? `, ${s.halvings} halvings` : ''}`);
  if (s.listed > 0 && s.phase !== 'listing') parts.push(`coverage ${coverage(s)}`);
  if (s.failed.length) parts.push(`failed: ${s.failed.slice(0, 5).map((f) => f.name).join(', ')}${s.failed.length > 5 ? ` (+${s.failed.length - 5})` : ''}`);
  if (s.continuedAsNew) parts.push(`run ${s.continuedAsNew + 1}`);
  return { line: parts.join(' · '), attributes: { process: Process.Backup, org: s.org, target: s.destination, state: s.phase } };
}

/** The UI's summary of a run: org, destination and coverage. */
export function backupSummary(s: BackupStatus): string {
  return `Back up ${s.org} into ${s.destination}${s.listed ? `: ${coverage(s)}` : ''}`;
}
