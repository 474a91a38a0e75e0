/**
 * The emulated source import's data: options and their defaults, the stored facts of one import, what a push
 * wrote, the scenarios a `vcs_url` selects and the fixed texts of the spec ("Import status").
 */
import { createHash } from 'node:crypto';

/**
 * The `vcs` values a start or an update may name: the enum of `vcs` in GitHub's description of
 * `PUT /repos/{owner}/{repo}/import` (spec 002 leaves them "not shown"; its `tfvc` type is among them).
 */
export const VCS_TYPES = ['subversion', 'git', 'mercurial', 'tfvc'] as const;

/** The statuses the emulated import reaches: spec 002's table ("Import `status`"). */
export type ImportStatus =
  | 'detecting'
  | 'importing'
  | 'mapping'
  | 'pushing'
  | 'complete'
  | 'auth_failed'
  | 'error'
  | 'detection_needs_auth'
  | 'detection_found_nothing'
  | 'detection_found_multiple';

/** The steps that run on their own (the others wait for the caller). */
export type ImportStep = 'detecting' | 'importing' | 'mapping' | 'pushing';

export type ImportScenario = 'happy' | 'needs-auth' | 'multiple-projects' | 'nothing-found' | 'error' | 'large-files';

export interface EmulatedAuthorSeed {
  remoteId: string;
  remoteName: string;
}

export interface EmulatedLargeFileSeed {
  refName: string;
  path: string;
  /** @format bytes */
  size: number;
}

export interface MaintenanceWindow {
  /** Epoch ms on the emulator clock (inclusive). */
  fromMs: number;
  /** Epoch ms on the emulator clock (exclusive). */
  untilMs: number;
}

export interface ImportOptions {
  /** Duration of each step before `timeScale`. @format milliseconds */
  detectingMs: number;
  importingMs: number;
  mappingMs: number;
  pushingMs: number;
  /** Multiplies every step duration (`0.001` turns the defaults' seconds into milliseconds). */
  timeScale: number;
  /** Total raw commits every import reports. */
  commitCount: number;
  /** The foreign authors every import discovers, in order, while `importing`. */
  authors: EmulatedAuthorSeed[];
  /** At most this many authors per `GET …/authors` answer (callers page with `since`). */
  authorsPageSize: number;
  /** The files over 100 MB the `large-files` scenario finds. */
  largeFiles: EmulatedLargeFileSeed[];
  /** When set, `needs-auth` accepts only these credentials; otherwise any non-empty pair. */
  requiredCredentials?: { username: string; password: string };
  /** How many times an `error-<step>` scenario fails before a restart gets through (URL `?fail_times=N` overrides). */
  errorTimes: number;
  /** Every import endpoint answers 503 inside these windows. */
  maintenanceWindows: MaintenanceWindow[];
  /** A `retry-after` header on maintenance 503s (the spec shows none). @format seconds */
  maintenanceRetryAfterSeconds?: number;
  /** The endpoints are retired (as on github.com since 2024-04-12): every import route answers 404. */
  retired: boolean;
}

export const defaultImportOptions: ImportOptions = {
  detectingMs: 5_000,
  importingMs: 30_000,
  mappingMs: 10_000,
  pushingMs: 15_000,
  timeScale: 1,
  commitCount: 1_234,
  authors: [
    { remoteId: 'alice', remoteName: 'alice' },
    { remoteId: 'bob', remoteName: 'bob' },
    { remoteId: 'carol', remoteName: 'carol' },
    { remoteId: 'dave', remoteName: 'dave' },
  ],
  authorsPageSize: 100,
  largeFiles: [
    { refName: 'refs/heads/trunk', path: 'assets/video/intro.mov', size: 262_144_000 },
    { refName: 'refs/heads/trunk', path: 'data/dump.sql', size: 157_286_400 },
  ],
  errorTimes: 1,
  maintenanceWindows: [],
  retired: false,
};

/** One author identity as it was pushed. */
export interface PushedAuthor {
  id: number;
  remoteId: string;
  name: string;
  email: string;
  commits: number;
}

/** What one push wrote into the repository: the inspection API's proof of mapping and LFS handling. */
export interface PushedResult {
  /** Emulator time the push began. */
  at: number;
  vcs: string;
  commitCount: number;
  authors: PushedAuthor[];
  useLfs: 'opt_in' | 'opt_out' | 'undecided';
  /** Large files stored as LFS objects (`opt_in`). */
  lfsObjects: string[];
  /** Large files removed from the history (`opt_out`). */
  removedFiles: string[];
}

export interface EmulatedAuthor {
  id: number;
  remoteId: string;
  remoteName: string;
  name: string;
  email: string;
}

export interface ProjectChoice {
  vcs: string;
  tfvc_project?: string;
  human_name: string;
}

export interface Blocked {
  status: Exclude<ImportStatus, ImportStep | 'complete'>;
  at: number;
  /** The step that was running (where a restart resumes). */
  step: ImportStep;
  /** Progress of that step when it stopped (0..1). */
  progress: number;
  failedStep?: string;
  errorMessage?: string;
}

/** Everything the emulator knows about one import (credentials only as a digest). */
export interface EmulatedImport {
  guid: string;
  owner: string;
  repo: string;
  repositoryId: number;
  vcsUrl: string;
  scenario: ImportScenario;
  /** For `error`: the step that fails. */
  errorStep?: ImportStep;
  errorsLeft: number;
  /** The VCS given by the caller or found by detection (undefined while detecting without one). */
  vcs?: string;
  tfvcProject?: string;
  chosenProject?: ProjectChoice;
  credentials?: { username: string; passwordSha256: string };
  createdAt: number;
  step: ImportStep | 'complete';
  stepStartedAt: number;
  completedAt?: number;
  blocked?: Blocked;
  authors: EmulatedAuthor[];
  /** How many of the scenario's authors have been discovered so far. */
  authorsRevealed: number;
  largeFilesFound: boolean;
  useLfs: 'opt_in' | 'opt_out' | 'undecided';
  pushes: PushedResult[];
  restarts: number;
  deletedAt?: number;
  /** What happened, in order, for tests: `put`, `patch:credentials`, `patch:choice`, `patch:restart`, `patch:author`, `patch:lfs`, `push`, `delete`. */
  events: { at: number; kind: string }[];
}

export const STEPS: ImportStep[] = ['detecting', 'importing', 'mapping', 'pushing'];

export const STATUS_TEXT: Record<ImportStatus, string> = {
  detecting: 'Detecting source control',
  importing: 'Importing commits',
  mapping: 'Rewriting history and applying author updates',
  pushing: 'Pushing to the repository',
  complete: 'Done',
  auth_failed: 'Authentication failed: the source repository requires credentials',
  error: 'Import failed',
  detection_needs_auth: 'Detection needs authentication',
  detection_found_nothing: 'No source control detected at that address',
  detection_found_multiple: 'Several projects found: choose one',
};

export const PROJECT_CHOICES: ProjectChoice[] = [
  { vcs: 'subversion', human_name: 'Subversion' },
  { vcs: 'git', human_name: 'Git' },
  { vcs: 'tfvc', tfvc_project: 'Fabrikam', human_name: 'Fabrikam (tfs)' },
  { vcs: 'tfvc', tfvc_project: 'Contoso', human_name: 'Contoso (tfs)' },
];

/** The scenario a `vcs_url` selects (by its last path segment), and for `error-<step>` the failing step. */
export function scenarioOf(vcsUrl: string): { scenario: ImportScenario; errorStep?: ImportStep; failTimes?: number } {
  let url: URL;
  try {
    url = new URL(vcsUrl);
  } catch {
    return { scenario: 'happy' };
  }
  const segment = url.pathname.split('/').filter(Boolean).pop()?.toLowerCase() ?? '';
  const failTimesText = url.searchParams.get('fail_times');
  const failTimes = failTimesText !== null && /^\d+$/.test(failTimesText) ? Number(failTimesText) : undefined;
  const error = /^error-(detecting|importing|mapping|pushing)$/.exec(segment);
  if (error) return { scenario: 'error', errorStep: error[1] as ImportStep, failTimes };
  if (segment === 'needs-auth' || segment === 'multiple-projects' || segment === 'nothing-found' || segment === 'large-files') {
    return { scenario: segment };
  }
  return { scenario: 'happy' };
}

/** What detection finds at a URL: the VCS its host name suggests. */
export function detectVcs(vcsUrl: string): string {
  const host = (() => {
    try {
      return new URL(vcsUrl).host.toLowerCase();
    } catch {
      return '';
    }
  })();
  if (host.includes('svn')) return 'subversion';
  if (host.includes('hg') || host.includes('mercurial')) return 'mercurial';
  if (host.includes('tfs') || host.includes('visualstudio')) return 'tfvc';
  return 'git';
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

