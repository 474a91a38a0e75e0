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
import { refill, type Durable, type EmulatorContext } from '../../module';
import {
  detectVcs,
  PROJECT_CHOICES,
  STATUS_TEXT,
  STEPS,
  sha256,
  type Blocked,
  type EmulatedAuthor,
  type EmulatedImport,
  type ImportOptions,
  type ImportStatus,
  type ImportStep,
} from './model';

/** The imports of one emulator and the transitions between their states; the routes only read and patch facts. */
export function createImportMachine(ctx: EmulatorContext, options: ImportOptions) {
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
      // Whole percents, as git push reports them ("Writing objects: 42%"): the description's type is integer.
      push_percent: pushProgress !== undefined ? Math.floor(pushProgress * 100) : imp.step === 'complete' ? 100 : null,
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

  // `history` holds the same objects as `imports`: the snapshot keeps them shared.
  const durable = {
    snapshot: () => ({ imports, history, nextAuthorId }),
    restore(saved) {
      refill(imports, saved.imports);
      refill(history, saved.history);
      nextAuthorId = saved.nextAuthorId;
    },
  } satisfies Durable<{ imports: typeof imports; history: typeof history; nextAuthorId: number }>;

  return { imports, history, key, durationOf, advance, enterStep, resume, statusOf, importObject, authorObject, rewriteIfPushed, durable };
}

export type ImportMachine = ReturnType<typeof createImportMachine>;
