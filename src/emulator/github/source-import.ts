/**
 * Source imports (spec 002, "Source import" and "Import status"): the import status machine
 * detecting → importing → mapping → pushing → complete, with the blocking states `auth_failed`,
 * `detection_needs_auth`, `detection_found_multiple`, `detection_found_nothing` and `error`.
 *
 * The scenario is chosen through the real API, by the last path segment of `vcs_url`:
 * `happy`, `needs-auth`, `multiple-projects`, `nothing-found`, `error-<step>` (`error-importing`,
 * `error-detecting`, `error-mapping`, `error-pushing`; `?fail_times=N` in the URL makes the error repeat
 * N times) and `large-files`. Any other segment behaves like `happy`.
 *
 * State advances lazily from the emulator clock (no timers): every transition happens at an exact
 * instant computed from stored facts, so tests with an injected clock are exact and a request that
 * arrives late sees what happened in between (e.g. the push snapshot is taken at the instant pushing
 * began, with the author identities of that instant).
 *
 * What the spec leaves open, decided here: when large files were found and no `use_lfs` choice was
 * made, the import holds in `mapping` (nothing is pushed) until `PATCH …/lfs`; `opt_out` removes the
 * large files from the pushed history, `opt_in` stores them with LFS. Mapping an author or changing
 * the LFS choice after the push began rewrites and pushes again, as the real importer did.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Router, RouteResult } from '../router';
import type { EmulatorContext } from '../emulator';
import { EmulatorHttpError } from '../http-error';
import { validateBody } from '../validation';
import { IMPORT_VCS_TYPES, type ImportStatusName } from '../../common/source-import-input';

export type ImportStatus = ImportStatusName;

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

interface EmulatedAuthor {
  id: number;
  remoteId: string;
  remoteName: string;
  name: string;
  email: string;
}

interface ProjectChoice {
  vcs: string;
  tfvc_project?: string;
  human_name: string;
}

interface Blocked {
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

const STEPS: ImportStep[] = ['detecting', 'importing', 'mapping', 'pushing'];

const STATUS_TEXT: Record<ImportStatus, string> = {
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

const PROJECT_CHOICES: ProjectChoice[] = [
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
function detectVcs(vcsUrl: string): string {
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

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export function registerImportRoutes(router: Router, ctx: EmulatorContext, options: ImportOptions) {
  /** Current imports by `owner/repo` (lower case). */
  const imports = new Map<string, EmulatedImport>();
  /** Every import ever started, deleted ones included, for inspection. */
  const history: EmulatedImport[] = [];
  let nextAuthorId = 2_268_557;

  const key = (owner: string, repo: string) => `${owner}/${repo}`.toLowerCase();
  const durationOf = (step: ImportStep) => {
    const base = { detecting: options.detectingMs, importing: options.importingMs, mapping: options.mappingMs, pushing: options.pushingMs }[step];
    return Math.max(1, Math.round(base * options.timeScale));
  };

  const inMaintenance = (now: number) => options.maintenanceWindows.some((w) => now >= w.fromMs && now < w.untilMs);

  /** Checks shared by every import route: retired, maintenance, repository exists. */
  const guard = (owner: string, repo: string, now: number) => {
    if (options.retired) throw new EmulatorHttpError(404, 'Not Found');
    if (inMaintenance(now)) {
      const headers: Record<string, string> =
        options.maintenanceRetryAfterSeconds !== undefined ? { 'retry-after': String(options.maintenanceRetryAfterSeconds) } : {};
      throw new EmulatorHttpError(503, 'Service Unavailable: source imports are under maintenance.', {}, headers);
    }
    const repository = ctx.fixture.repositories.find((r) => r.owner.toLowerCase() === owner.toLowerCase() && r.name.toLowerCase() === repo.toLowerCase());
    if (!repository) throw new EmulatorHttpError(404, 'Not Found');
    return repository;
  };

  const current = (owner: string, repo: string): EmulatedImport => {
    const imp = imports.get(key(owner, repo));
    if (!imp) throw new EmulatorHttpError(404, 'Not Found');
    return imp;
  };

  const credentialsValid = (imp: EmulatedImport): boolean => {
    if (!imp.credentials) return false;
    const required = options.requiredCredentials;
    if (!required) return true;
    return imp.credentials.username === required.username && imp.credentials.passwordSha256 === sha256(required.password);
  };

  const hasLargeFileSupport = (imp: EmulatedImport) => imp.vcs !== undefined && imp.vcs !== 'git';

  /**
   * The interruption a step runs into, as a fraction of the step's duration, given the facts now
   * stored (credentials, choice, errors left).
   */
  const interruptionOf = (imp: EmulatedImport, step: ImportStep): { fraction: number; blocked: Omit<Blocked, 'at' | 'step' | 'progress'> } | undefined => {
    if (imp.scenario === 'error' && imp.errorStep === step && imp.errorsLeft > 0) {
      return {
        fraction: 0.5,
        blocked: {
          status: 'error',
          failedStep: step,
          errorMessage: `The importer hit an error while ${step}: fatal: the remote end hung up unexpectedly (${imp.vcsUrl}).`,
        },
      };
    }
    if (step === 'detecting') {
      if (imp.scenario === 'needs-auth' && !credentialsValid(imp)) return { fraction: 1, blocked: { status: 'detection_needs_auth' } };
      if (imp.scenario === 'nothing-found') return { fraction: 1, blocked: { status: 'detection_found_nothing' } };
      if (imp.scenario === 'multiple-projects' && !imp.chosenProject) return { fraction: 1, blocked: { status: 'detection_found_multiple' } };
    }
    if (step === 'importing' && imp.scenario === 'needs-auth' && !credentialsValid(imp)) return { fraction: 0.1, blocked: { status: 'auth_failed' } };
    return undefined;
  };

  const revealAuthors = (imp: EmulatedImport, count: number) => {
    while (imp.authorsRevealed < Math.min(count, options.authors.length)) {
      const seed = options.authors[imp.authorsRevealed++];
      imp.authors.push({ id: nextAuthorId++, remoteId: seed.remoteId, remoteName: seed.remoteName, name: seed.remoteName, email: `${seed.remoteId}@${imp.guid}` });
    }
  };

  /** Discoveries made while importing: authors across the first 80 %, large files from half way. */
  const discover = (imp: EmulatedImport, progress: number) => {
    revealAuthors(imp, Math.floor(options.authors.length * Math.min(1, progress / 0.8)));
    if (imp.scenario === 'large-files' && hasLargeFileSupport(imp) && progress >= 0.5 && options.largeFiles.length > 0) imp.largeFilesFound = true;
  };

  const recordPush = (imp: EmulatedImport, at: number) => {
    const commitsPer = imp.authors.length > 0 ? Math.floor(options.commitCount / imp.authors.length) : 0;
    const large = imp.largeFilesFound ? options.largeFiles.map((f) => f.path) : [];
    imp.pushes.push({
      at,
      vcs: imp.vcs ?? 'git',
      commitCount: options.commitCount,
      authors: imp.authors.map((a, i) => ({
        id: a.id,
        remoteId: a.remoteId,
        name: a.name,
        email: a.email,
        commits: commitsPer + (i === 0 ? options.commitCount - commitsPer * imp.authors.length : 0),
      })),
      useLfs: imp.useLfs,
      lfsObjects: imp.useLfs === 'opt_in' ? large : [],
      removedFiles: imp.useLfs === 'opt_out' ? large : [],
    });
    imp.events.push({ at, kind: 'push' });
  };

  const enterStep = (imp: EmulatedImport, step: ImportStep | 'complete', at: number) => {
    imp.step = step;
    imp.stepStartedAt = at;
    if (step === 'importing' && imp.vcs === undefined) imp.vcs = imp.chosenProject?.vcs ?? detectVcs(imp.vcsUrl);
    if (step === 'pushing') recordPush(imp, at);
    if (step === 'complete') {
      imp.completedAt = at;
      revealAuthors(imp, options.authors.length);
    }
  };

  /** Moves an import forward to `now`, applying every transition at the instant it happened. */
  const advance = (imp: EmulatedImport, now: number) => {
    for (;;) {
      if (imp.blocked || imp.step === 'complete') return;
      const step = imp.step;
      const duration = durationOf(step);
      const interruption = interruptionOf(imp, step);
      if (interruption) {
        const at = imp.stepStartedAt + Math.round(duration * interruption.fraction);
        if (now < at) {
          if (step === 'importing') discover(imp, (now - imp.stepStartedAt) / duration);
          return;
        }
        if (step === 'importing') discover(imp, interruption.fraction);
        if (interruption.blocked.status === 'error') imp.errorsLeft--;
        imp.blocked = { ...interruption.blocked, at, step, progress: interruption.fraction };
        return;
      }
      const end = imp.stepStartedAt + duration;
      if (step === 'importing') discover(imp, Math.min(1, (now - imp.stepStartedAt) / duration));
      if (now < end) return;
      if (step === 'mapping' && imp.largeFilesFound && imp.useLfs === 'undecided') return; // held until PATCH …/lfs
      enterStep(imp, STEPS[STEPS.indexOf(step) + 1] ?? 'complete', end);
    }
  };

  /** Resumes at `step` from its beginning (restart, credentials, choice, rewrite). */
  const resume = (imp: EmulatedImport, step: ImportStep, now: number) => {
    imp.blocked = undefined;
    imp.completedAt = undefined;
    enterStep(imp, step, now);
  };

  const statusOf = (imp: EmulatedImport): ImportStatus => imp.blocked?.status ?? imp.step;

  const importObject = (imp: EmulatedImport, now: number) => {
    advance(imp, now);
    const base = ctx.apiUrl();
    const status = statusOf(imp);
    const url = `${base}/repos/${imp.owner}/${imp.repo}/import`;
    const largeFiles = imp.largeFilesFound ? options.largeFiles : [];
    const progressOf = (step: ImportStep) => {
      if (imp.blocked) return imp.blocked.step === step ? imp.blocked.progress : undefined;
      if (imp.step !== step) return undefined;
      return Math.min(1, (now - imp.stepStartedAt) / durationOf(step));
    };
    const importProgress = progressOf('importing');
    const pushProgress = progressOf('pushing');
    const pastImporting = imp.step === 'mapping' || imp.step === 'pushing' || imp.step === 'complete';
    const body: Record<string, unknown> = {
      vcs: imp.vcs ?? null,
      use_lfs: imp.useLfs,
      vcs_url: imp.vcsUrl,
      status,
      status_text: imp.step === 'mapping' && !imp.blocked && now >= imp.stepStartedAt + durationOf('mapping') ? 'Waiting for a decision on large files (PATCH …/import/lfs)' : STATUS_TEXT[status],
      has_large_files: imp.largeFilesFound,
      large_files_size: Math.round((largeFiles.reduce((sum, f) => sum + f.size, 0) / 1024 ** 3) * 1000) / 1000,
      large_files_count: largeFiles.length,
      authors_count: imp.authors.length,
      commit_count: importProgress !== undefined || pastImporting ? options.commitCount : null,
      percent: importProgress !== undefined ? Math.floor(importProgress * 100) : pastImporting ? 100 : null,
      push_percent: pushProgress !== undefined ? Math.round(pushProgress * 1000) / 10 : imp.step === 'complete' ? 100 : null,
      url,
      html_url: `https://github.example.test/${imp.owner}/${imp.repo}/import`,
      authors_url: `${url}/authors`,
      repository_url: `${base}/repos/${imp.owner}/${imp.repo}`,
    };
    if (imp.tfvcProject) body.tfvc_project = imp.tfvcProject;
    if (status === 'error') {
      body.failed_step = imp.blocked?.failedStep;
      body.error_message = imp.blocked?.errorMessage;
    }
    if (status === 'detection_found_multiple') body.project_choices = PROJECT_CHOICES.map((c) => ({ ...c }));
    return body;
  };

  const authorObject = (imp: EmulatedImport, a: EmulatedAuthor) => {
    const url = `${ctx.apiUrl()}/repos/${imp.owner}/${imp.repo}/import/authors/${a.id}`;
    return { id: a.id, remote_id: a.remoteId, remote_name: a.remoteName, email: a.email, name: a.name, url, import_url: `${ctx.apiUrl()}/repos/${imp.owner}/${imp.repo}/import` };
  };

  /** A change that must reach the repository: if the push already began, rewrite and push again. */
  const rewriteIfPushed = (imp: EmulatedImport, now: number) => {
    if (!imp.blocked && (imp.step === 'pushing' || imp.step === 'complete')) resume(imp, 'mapping', now);
  };

  const checkUrl = (value: string, field: string) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new EmulatorHttpError(422, `Invalid request.\n\n"${field}" must be a URL.`, { errors: [{ resource: 'Import', field, code: 'invalid' }] });
    }
    if (!['http:', 'https:', 'svn:', 'svn+ssh:', 'git:', 'ssh:'].includes(url.protocol)) {
      throw new EmulatorHttpError(422, `Invalid request.\n\n"${field}" has an unsupported scheme ${url.protocol}.`, { errors: [{ resource: 'Import', field, code: 'invalid' }] });
    }
  };
  const checkVcs = (vcs: unknown) => {
    if (vcs !== undefined && !(IMPORT_VCS_TYPES as readonly string[]).includes(vcs as string)) {
      throw new EmulatorHttpError(422, `Invalid request.\n\n"vcs" must be one of ${IMPORT_VCS_TYPES.join(', ')}, got ${JSON.stringify(vcs)}.`, {
        errors: [{ resource: 'Import', field: 'vcs', code: 'invalid' }],
      });
    }
  };
  /** Credentials come as a pair: half a pair is a mistake worth a 422, not a silent auth failure. */
  const readCredentials = (input: Record<string, unknown>) => {
    const username = input.vcs_username as string | undefined;
    const password = input.vcs_password as string | undefined;
    if ((username === undefined) !== (password === undefined)) {
      throw new EmulatorHttpError(422, 'Invalid request.\n\n"vcs_username" and "vcs_password" must be given together.');
    }
    if (username === undefined || password === undefined) return undefined;
    if (username === '' || password === '') throw new EmulatorHttpError(422, 'Invalid request.\n\n"vcs_username" and "vcs_password" must not be empty.');
    return { username, passwordSha256: sha256(password) };
  };

  router.put(
    '/repos/:owner/:repo/import',
    ({ params, body, now }): RouteResult => {
      const repository = guard(params.owner, params.repo, now);
      const input = validateBody(body, {
        fields: { vcs_url: 'string', vcs: 'string', vcs_username: 'string', vcs_password: 'string', tfvc_project: 'string' },
        required: ['vcs_url'],
      });
      const vcsUrl = input.vcs_url as string;
      checkUrl(vcsUrl, 'vcs_url');
      checkVcs(input.vcs);
      if (input.tfvc_project !== undefined && input.vcs !== undefined && input.vcs !== 'tfvc') {
        throw new EmulatorHttpError(422, 'Invalid request.\n\n"tfvc_project" applies only to "vcs": "tfvc".');
      }
      const credentials = readCredentials(input);
      if (repository.workflowsEnabled) {
        throw new EmulatorHttpError(422, `Starting an import into ${repository.owner}/${repository.name} is not supported: the repository has workflows enabled.`, {
          errors: [{ resource: 'Import', field: 'repository', code: 'workflows_enabled' }],
        });
      }
      const existing = imports.get(key(repository.owner, repository.name));
      if (existing) {
        // The same import asked for again (a retry after a lost answer) gets the import that exists.
        if (existing.vcsUrl === vcsUrl && existing.step !== 'complete') return { status: 201, body: importObject(existing, now) };
        throw new EmulatorHttpError(422, `An import into ${repository.owner}/${repository.name} already exists (from ${existing.vcsUrl}); cancel it first.`, {
          errors: [{ resource: 'Import', field: 'vcs_url', code: 'already_exists' }],
        });
      }
      const { scenario, errorStep, failTimes } = scenarioOf(vcsUrl);
      const imp: EmulatedImport = {
        guid: randomUUID(),
        owner: repository.owner,
        repo: repository.name,
        repositoryId: repository.id,
        vcsUrl,
        scenario,
        errorStep,
        errorsLeft: scenario === 'error' ? (failTimes ?? options.errorTimes) : 0,
        vcs: input.vcs as string | undefined,
        tfvcProject: input.tfvc_project as string | undefined,
        credentials,
        createdAt: now,
        step: 'detecting',
        stepStartedAt: now,
        authors: [],
        authorsRevealed: 0,
        largeFilesFound: false,
        useLfs: 'undecided',
        pushes: [],
        restarts: 0,
        events: [{ at: now, kind: 'put' }],
      };
      // With a VCS given, detection is skipped.
      enterStep(imp, imp.vcs === undefined ? 'detecting' : 'importing', now);
      imports.set(key(imp.owner, imp.repo), imp);
      history.push(imp);
      return { status: 201, body: importObject(imp, now) };
    },
    { contentCreating: true },
  );

  router.get('/repos/:owner/:repo/import', ({ params, now }) => {
    guard(params.owner, params.repo, now);
    return { status: 200, body: importObject(current(params.owner, params.repo), now) };
  });

  router.patch('/repos/:owner/:repo/import', ({ params, body, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    const input = validateBody(body, {
      fields: { vcs_username: 'string', vcs_password: 'string', vcs: 'string', tfvc_project: 'string', human_name: 'string' },
    });
    checkVcs(input.vcs);
    advance(imp, now);
    const credentials = readCredentials(input);
    const choosing = input.vcs !== undefined || input.tfvc_project !== undefined || input.human_name !== undefined;
    const status = statusOf(imp);

    if (credentials) {
      imp.credentials = credentials;
      imp.events.push({ at: now, kind: 'patch:credentials' });
    }
    if (choosing) {
      if (status === 'detection_found_multiple') {
        const matching = PROJECT_CHOICES.filter(
          (c) =>
            (input.vcs === undefined || c.vcs === input.vcs) &&
            (input.tfvc_project === undefined || c.tfvc_project === input.tfvc_project) &&
            (input.human_name === undefined || c.human_name === input.human_name),
        );
        const choice = matching.length === 1 ? matching[0] : undefined;
        if (!choice) {
          throw new EmulatorHttpError(422, 'Invalid request.\n\nThe project choice must be one of "project_choices".', {
            errors: [{ resource: 'Import', field: 'project_choices', code: 'invalid' }],
          });
        }
        imp.chosenProject = choice;
        imp.vcs = choice.vcs;
        imp.tfvcProject = choice.tfvc_project;
        imp.events.push({ at: now, kind: 'patch:choice' });
        resume(imp, 'importing', now);
      } else {
        if (input.vcs !== undefined) imp.vcs = input.vcs as string;
        if (input.tfvc_project !== undefined) imp.tfvcProject = input.tfvc_project as string;
        imp.events.push({ at: now, kind: 'patch:vcs' });
        resume(imp, 'importing', now);
      }
    } else if (credentials) {
      if (status === 'detection_needs_auth') resume(imp, 'detecting', now);
      else if (status === 'auth_failed') resume(imp, 'importing', now);
    } else {
      // No parameters: restart. An import in `error` resumes at the step that failed.
      imp.restarts++;
      imp.events.push({ at: now, kind: 'patch:restart' });
      if (imp.blocked?.status === 'error') resume(imp, imp.blocked.step, now);
      else if (imp.step !== 'complete' || imp.blocked) resume(imp, imp.vcs === undefined ? 'detecting' : 'importing', now);
    }
    return { status: 200, body: importObject(imp, now) };
  });

  router.delete('/repos/:owner/:repo/import', ({ params, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    imp.deletedAt = now;
    imp.events.push({ at: now, kind: 'delete' });
    imports.delete(key(imp.owner, imp.repo));
    return { status: 204 };
  });

  router.get('/repos/:owner/:repo/import/authors', ({ params, query, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    const sinceText = query.get('since');
    if (sinceText !== null && !/^\d+$/.test(sinceText)) {
      throw new EmulatorHttpError(422, `Invalid request.\n\n"since" must be a non-negative integer, got ${JSON.stringify(sinceText)}.`);
    }
    advance(imp, now);
    const since = sinceText === null ? 0 : Number(sinceText);
    const page = imp.authors.filter((a) => a.id > since).slice(0, options.authorsPageSize);
    return { status: 200, body: page.map((a) => authorObject(imp, a)) };
  });

  router.patch('/repos/:owner/:repo/import/authors/:authorId', ({ params, body, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    advance(imp, now);
    const author = /^\d+$/.test(params.authorId) ? imp.authors.find((a) => a.id === Number(params.authorId)) : undefined;
    if (!author) throw new EmulatorHttpError(404, 'Not Found');
    const input = validateBody(body, { fields: { email: 'string', name: 'string' } });
    if (input.email === undefined && input.name === undefined) throw new EmulatorHttpError(422, 'Invalid request.\n\nGive "email", "name" or both.');
    if (input.email !== undefined && !/^[^\s@<>]+@[^\s@<>]+$/.test(input.email as string)) {
      throw new EmulatorHttpError(422, `Invalid request.\n\n"email" ${JSON.stringify(input.email)} is not an email address.`, {
        errors: [{ resource: 'PorterAuthor', field: 'email', code: 'invalid' }],
      });
    }
    if (input.name !== undefined && ((input.name as string).trim() === '' || /[<>\n]/.test(input.name as string))) {
      throw new EmulatorHttpError(422, 'Invalid request.\n\n"name" must be a non-empty name without <, > or line breaks.', {
        errors: [{ resource: 'PorterAuthor', field: 'name', code: 'invalid' }],
      });
    }
    if (input.email !== undefined) author.email = input.email as string;
    if (input.name !== undefined) author.name = input.name as string;
    imp.events.push({ at: now, kind: 'patch:author' });
    rewriteIfPushed(imp, now);
    return { status: 200, body: authorObject(imp, author) };
  });

  router.get('/repos/:owner/:repo/import/large_files', ({ params, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    advance(imp, now);
    const files = imp.largeFilesFound ? options.largeFiles : [];
    return {
      status: 200,
      body: files.map((f) => ({ ref_name: f.refName, path: f.path, oid: sha256(`${imp.guid}:${f.path}`).slice(0, 40), size: f.size })),
    };
  });

  router.patch('/repos/:owner/:repo/import/lfs', ({ params, body, now }) => {
    guard(params.owner, params.repo, now);
    const imp = current(params.owner, params.repo);
    const input = validateBody(body, { fields: { use_lfs: 'string' }, required: ['use_lfs'] });
    if (input.use_lfs !== 'opt_in' && input.use_lfs !== 'opt_out') {
      throw new EmulatorHttpError(422, `Invalid request.\n\n"use_lfs" must be "opt_in" or "opt_out", got ${JSON.stringify(input.use_lfs)}.`, {
        errors: [{ resource: 'Import', field: 'use_lfs', code: 'invalid' }],
      });
    }
    advance(imp, now);
    const changed = imp.useLfs !== input.use_lfs;
    imp.useLfs = input.use_lfs;
    imp.events.push({ at: now, kind: 'patch:lfs' });
    const held = !imp.blocked && imp.step === 'mapping' && imp.largeFilesFound && now >= imp.stepStartedAt + durationOf('mapping');
    if (held) enterStep(imp, 'pushing', now);
    else if (changed && imp.largeFilesFound) rewriteIfPushed(imp, now);
    return { status: 200, body: importObject(imp, now) };
  });

  const find = (owner: string, repo: string) => {
    const imp = imports.get(key(owner, repo));
    if (imp) advance(imp, ctx.clock());
    return imp;
  };

  return {
    /** The current import into `owner/repo` (advanced to now), if any. */
    get: find,
    /** Every import ever started, deleted ones included. */
    all: () => [...history],
    status: (owner: string, repo: string): ImportStatus | undefined => {
      const imp = find(owner, repo);
      return imp ? statusOf(imp) : undefined;
    },
    /** What each push wrote (author identities, LFS objects, removed files), oldest first. */
    pushes: (owner: string, repo: string): PushedResult[] =>
      find(owner, repo)?.pushes ?? history.filter((i) => key(i.owner, i.repo) === key(owner, repo)).at(-1)?.pushes ?? [],
    /** Starts a maintenance window of `durationMs` now (every import endpoint answers 503). */
    startMaintenance: (durationMs: number) => {
      const fromMs = ctx.clock();
      options.maintenanceWindows.push({ fromMs, untilMs: fromMs + durationMs });
    },
    options,
  };
}
