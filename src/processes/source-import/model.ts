/**
 * Source import (spec 002): the model of the process, deterministic, shared by the workflow, activities, the
 * CLI and tests. The workflow's input and every validation that runs before an API call or decides whether an
 * update is accepted; the import records activities hand to the workflow; the decision helpers (author
 * mapping, project choice, LFS policy); the status the workflow answers to `status` and its one description
 * (UI details, CLI progress line, search attributes), the update answers, the failure types, the default poll
 * bounds and what a run carries across continue-as-new.
 *
 * Secrets never appear here: credentials travel as the *name* of a credential configured on the workers,
 * which only an activity resolves.
 */
import * as v from 'valibot';
import { credentialInUrlProblems } from '../../common/url-secrets';
import { isGithubLogin, isRepositoryName } from '../../common/github-names';
import { object, positiveNumber, problemsOf, rule, wholeBetween } from '../../common/schema';
import { OutageBoundsSchema } from '../../common/outage';
import { HONEST_POLL_SHAPE, pollBoundsSchema, type ResolvedPollBounds } from '../../common/poll-schedule';
import { EventBudgetSchema } from '../../common/run-budget';
import type { StatusView } from '../../common/search-attributes';
import type { PollState } from '../../common/poll-decision';
import { configuredNameSchema, IMPORT_CREDENTIALS_SETTING, type CredentialChoice } from '../../common/credential';
import { Process } from './names';
import { failureTypes } from '../../common/failures';
import { IMPORT_FAILURES } from './failures';

export const IMPORT_VCS_TYPES = ['subversion', 'git', 'mercurial', 'tfvc'] as const;
export type ImportVcs = (typeof IMPORT_VCS_TYPES)[number];

/** Statuses of the spec's table ("Import status"). */
export type ImportStatusName =
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

/** One entry of `project_choices` (its keys differ by VCS). */
export interface ProjectChoice {
  vcs?: string;
  tfvcProject?: string;
  humanName?: string;
}

/** The part of an import record the workflow needs (keeps history small; never credentials). */
export interface ImportRecord {
  status: string;
  statusText?: string;
  vcs?: string;
  vcsUrl: string;
  tfvcProject?: string;
  useLfs?: string;
  hasLargeFiles: boolean;
  largeFilesCount: number;
  /** @format gigabytes, as the API reports it */
  largeFilesSizeGb: number;
  authorsCount: number;
  commitCount?: number;
  percent?: number;
  pushPercent?: number;
  failedStep?: string;
  errorMessage?: string;
  projectChoices?: ProjectChoice[];
  repositoryUrl?: string;
  htmlUrl?: string;
}

/** A commit author of the import, as the server currently has it. */
export interface ImportAuthor {
  id: number;
  remoteId: string;
  remoteName: string;
  name: string;
  email: string;
}

export interface LargeFile {
  refName: string;
  path: string;
  oid: string;
  /** @format bytes */
  size: number;
}

/** Maps a foreign author (matched by `remote_id`, `remote_name` or current email) to a Git identity. */
export interface AuthorMapping {
  /** Matches an author whose `remote_id` or `remote_name` equals this, or whose email equals it (case-insensitively). */
  remote: string;
  name: string;
  email: string;
}

/**
 * What to do with files over 100 MB: store them with LFS (`opt_in`), leave them out (`opt_out`),
 * or decide by size: LFS when the large files add up to at most `maxTotalBytes` (an LFS budget),
 * otherwise opt out.
 */
export type LfsPolicy = 'opt_in' | 'opt_out' | { auto: { maxTotalBytes: number } };

/** A rule that picks one of `project_choices` without asking. Every given field must match. */
export interface ProjectChoiceRule {
  vcs?: string;
  tfvcProject?: string;
  humanName?: string;
}

/** A source import's input: see `SourceImportInputSchema` for each field. */
export type SourceImportInput = v.InferInput<typeof SourceImportInputSchema> & CredentialChoice;

export const DEFAULT_MAX_RESTARTS = 2;
export const DEFAULT_ANSWER_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** An author whose identity the workflow set. */
export interface MappedAuthor {
  id: number;
  remoteId: string;
  remoteName: string;
  name: string;
  email: string;
}

export interface LfsDecision {
  useLfs: 'opt_in' | 'opt_out';
  /** Why, in words (which policy, which sizes). */
  reason: string;
  largeFiles: LargeFile[];
  /** @format bytes */
  totalBytes: number;
}

export interface SourceImportResult {
  /** The import's final status on the server. */
  status: 'complete';
  owner: string;
  repo: string;
  vcsUrl: string;
  vcs?: string;
  commitCount: number;
  authorsMapped: MappedAuthor[];
  /** Mappings no author of this import matched. */
  unmatchedMappings: AuthorMapping[];
  /** Set when the import had large files. */
  lfs?: LfsDecision;
  chosenProject?: ProjectChoice;
  repositoryUrl?: string;
  htmlUrl?: string;
  restarts: number;
  polls: number;
  /** Things that went less well than planned (e.g. a mapping applied after the push began). */
  warnings: string[];
}

const EMAIL = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;

/**
 * The `credentials` of an import: the name of a source credential configured on the workers
 * (`LONGHAUL_IMPORT_CREDENTIALS`, each with `LONGHAUL_IMPORT_<NAME>_USERNAME` / `_PASSWORD` or their `_FILE`).
 * The `env:NAME` and `file:/path` references of 0.4.0 are refused: they let a caller send any variable or file of
 * the worker to a URL the same caller chose. No message echoes the value.
 */
export const ImportCredentialNameSchema = configuredNameSchema('a source-import credential', IMPORT_CREDENTIALS_SETTING);

/** Problems with an import credential name (empty when it is a valid name). */
export function importCredentialProblems(name: unknown): string[] {
  return problemsOf(ImportCredentialNameSchema, name, 'credentials');
}

const mappingFor = (mapping: Partial<AuthorMapping>) => `{=}author mapping for ${JSON.stringify(mapping.remote ?? '')}`;
const nonBlank = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** An author mapping; its messages name the mapping by its `remote`, field by field, as a person fixes them. */
export const AuthorMappingSchema = v.pipe(
  // Loose on purpose: every field's problem is reported, each naming the mapping.
  v.custom<AuthorMapping>((mapping) => typeof mapping === 'object' && mapping !== null, '{=}an author mapping needs remote, name and email'),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    for (const key of Object.keys(dataset.value)) {
      if (!['remote', 'name', 'email'].includes(key)) addIssue({ message: `{=}unknown field ${JSON.stringify(key)} in author mapping` });
    }
  }),
  v.check((m) => nonBlank(m.remote), '{=}author mapping: remote must name the remote id, name or email of an author'),
  v.check(
    (m) => nonBlank(m.name) && !/[<>\r\n]/.test(m.name) && m.name.length <= 255,
    (issue) => `${mappingFor(issue.input)}: name must be a non-empty Git name without <, > or line breaks`,
  ),
  v.check(
    (m) => typeof m.email === 'string' && EMAIL.test(m.email) && m.email.length <= 255,
    (issue) => `${mappingFor(issue.input)}: email ${JSON.stringify(issue.input.email ?? '')} is not an email address`,
  ),
);

/** Problems with an author mapping (empty when valid). */
export function authorMappingProblems(mapping: unknown): string[] {
  return problemsOf(AuthorMappingSchema, mapping);
}

/** Whether a mapping applies to an author. */
export function mappingMatches(mapping: AuthorMapping, author: ImportAuthor): boolean {
  return (
    mapping.remote === author.remoteId ||
    mapping.remote === author.remoteName ||
    mapping.remote.toLowerCase() === author.email.toLowerCase()
  );
}

/** The identity an author should have: the last mapping that matches it wins. */
export function desiredIdentity(mappings: readonly AuthorMapping[], author: ImportAuthor): AuthorMapping | undefined {
  for (let i = mappings.length - 1; i >= 0; i--) if (mappingMatches(mappings[i], author)) return mappings[i];
  return undefined;
}

function choiceMatches(rule: ProjectChoiceRule, choice: ProjectChoice): boolean {
  return (
    (rule.vcs === undefined || rule.vcs === choice.vcs) &&
    (rule.tfvcProject === undefined || rule.tfvcProject === choice.tfvcProject) &&
    (rule.humanName === undefined || rule.humanName === choice.humanName)
  );
}

/** Indices of the choices a rule matches. */
export function matchingChoices(rule: ProjectChoiceRule, choices: readonly ProjectChoice[]): number[] {
  return choices.flatMap((c, i) => (choiceMatches(rule, c) ? [i] : []));
}

/** The one choice an `import-choose` answer selects, or why it selects none. */
export function selectChoice(answer: ChoiceAnswer, choices: readonly ProjectChoice[]): { choice: ProjectChoice } | { problem: string } {
  if (typeof answer !== 'object' || answer === null) return { problem: 'the answer must be an object with index, vcs, tfvcProject or humanName' };
  const offered = choices.map((c, i) => `${i}: ${c.humanName ?? c.vcs ?? '?'}`).join(', ');
  if (answer.index !== undefined) {
    if (!Number.isInteger(answer.index) || answer.index < 0 || answer.index >= choices.length) {
      return { problem: `index ${JSON.stringify(answer.index)} is not one of the offered choices (${offered})` };
    }
    return { choice: choices[answer.index] };
  }
  const rule: ProjectChoiceRule = { vcs: answer.vcs, tfvcProject: answer.tfvcProject, humanName: answer.humanName };
  if (rule.vcs === undefined && rule.tfvcProject === undefined && rule.humanName === undefined) {
    return { problem: `give an index or fields of one of the offered choices (${offered})` };
  }
  const matches = matchingChoices(rule, choices);
  if (matches.length === 0) return { problem: `no offered choice matches ${JSON.stringify(rule)} (offered: ${offered})` };
  if (matches.length > 1) return { problem: `${matches.length} offered choices match ${JSON.stringify(rule)}; be more specific (offered: ${offered})` };
  return { choice: choices[matches[0]] };
}

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** Parses `opt_in`, `opt_out` or `auto:SIZE` (SIZE like `500MB`, `5GiB`, `123456`). */
export function parseLfsPolicy(text: string): LfsPolicy {
  const trimmed = text.trim();
  if (trimmed === 'opt_in' || trimmed === 'opt_out') return trimmed;
  const auto = /^auto:(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(trimmed);
  if (auto) {
    const unit = SIZE_UNITS[(auto[2] || 'b').toLowerCase()];
    if (unit !== undefined) return { auto: { maxTotalBytes: Math.round(Number(auto[1]) * unit) } };
  }
  throw new Error(`--lfs must be opt_in, opt_out or auto:SIZE (e.g. auto:5GB), got ${JSON.stringify(text)}`);
}

/** Applies the large-file policy to what the import found. */
export function decideLfs(policy: LfsPolicy, largeFiles: readonly LargeFile[]): LfsDecision {
  const totalBytes = largeFiles.reduce((sum, f) => sum + f.size, 0);
  const base = { largeFiles: [...largeFiles], totalBytes };
  if (policy === 'opt_in') return { ...base, useLfs: 'opt_in', reason: 'policy opt_in: large files are stored with LFS' };
  if (policy === 'opt_out') return { ...base, useLfs: 'opt_out', reason: 'policy opt_out: large files are left out of the repository' };
  const max = policy.auto.maxTotalBytes;
  return totalBytes <= max
    ? { ...base, useLfs: 'opt_in', reason: `policy auto: ${largeFiles.length} large files total ${totalBytes} bytes, within ${max}: stored with LFS` }
    : { ...base, useLfs: 'opt_out', reason: `policy auto: ${largeFiles.length} large files total ${totalBytes} bytes, over ${max}: left out` };
}

/**
 * How an import is polled unless the input says otherwise: the kit's honest shape (every 30 s, then 10 % of
 * the wait, ≤ 10 min: a change is noticed at most max(10 % of the wait, 30 s) late; polls are conditional, so
 * unchanged answers are 304s that do not count against the rate limit), for at most 24 h of polling (time
 * spent waiting for an answer not counted). Each change this workflow makes starts the schedule over.
 */
export const DEFAULT_IMPORT_POLL: ResolvedPollBounds = { ...HONEST_POLL_SHAPE, timeoutMs: 24 * 60 * 60 * 1000 };

const LFS_MESSAGE = 'must be "opt_in", "opt_out" or { auto: { maxTotalBytes } } with a non-negative size';

/** A source import's input, checked before any API call (the workflow runs it, and the CLI before it starts one). */
export const SourceImportInputSchema = v.pipe(
  object(
    {
      owner: v.custom<string>(isGithubLogin, (issue) => `${JSON.stringify(issue.input)} is not a valid account name`),
      repo: v.custom<string>(isRepositoryName, (issue) => `${JSON.stringify(issue.input)} is not a valid repository name`),
      vcsUrl: v.pipe(
        v.custom<string>(
          (url) => typeof url === 'string' && /^(https?|svn|svn\+ssh|git|ssh):\/\/[^\s/]+/.test(url),
          (issue) => `${JSON.stringify(issue.input)} must be an absolute URL of the source repository`,
        ),
        // user:password@, token parameters, known token prefixes: the URL goes into history, a secret must not.
        v.rawCheck(({ dataset, addIssue }) => {
          if (!dataset.typed) return;
          const reference = `import --credentials NAME, or credentials: "NAME" in workflow input, a credential configured on the workers (${IMPORT_CREDENTIALS_SETTING})`;
          for (const message of credentialInUrlProblems(dataset.value, '{path}', reference)) addIssue({ message });
        }),
      ),
      /** Without it the server runs the detection step first. */
      vcs: v.optional(v.picklist(IMPORT_VCS_TYPES, (issue) => `must be one of ${IMPORT_VCS_TYPES.join(', ')}, got ${JSON.stringify(issue.input)}`)),
      tfvcProject: v.optional(v.pipe(v.string('must be a non-empty string'), v.check((p) => p.trim() !== '', 'must be a non-empty string'))),
      /**
       * The name of a source credential configured on the workers (`LONGHAUL_IMPORT_CREDENTIALS`), resolved by
       * an activity at call time. Never the secret itself, never an `env:`/`file:` reference.
       */
      credentials: v.optional(ImportCredentialNameSchema),
      authors: v.optional(v.array(AuthorMappingSchema, 'must be an array of { remote, name, email }')),
      /** Default `opt_in` (nothing is lost). */
      lfs: v.optional(
        v.custom<LfsPolicy>((policy) => {
          if (policy === 'opt_in' || policy === 'opt_out') return true;
          const max = (policy as { auto?: { maxTotalBytes?: unknown } } | null)?.auto?.maxTotalBytes;
          return typeof max === 'number' && Number.isFinite(max) && max >= 0;
        }, LFS_MESSAGE),
      ),
      /** Picks a project when detection finds several; otherwise the workflow waits for `import-choose`. */
      projectChoice: v.optional(
        v.custom<ProjectChoiceRule>((rule) => {
          const r = rule as ProjectChoiceRule | null;
          return typeof r === 'object' && r !== null && (r.vcs !== undefined || r.tfvcProject !== undefined || r.humanName !== undefined);
        }, 'needs at least one of vcs, tfvcProject, humanName'),
      ),
      /** Restarts (PATCH with no parameters) after an `error` before giving up. Default 2. */
      maxRestarts: v.optional(wholeBetween(0, 100, 'must be an integer from 0 to 100')),
      /** @format milliseconds — how long to wait for credentials or a project choice. Default 24 h. */
      answerTimeoutMs: v.optional(positiveNumber()),
      poll: pollBoundsSchema(DEFAULT_IMPORT_POLL),
      /**
       * How long failing calls and polls are waited out (5xx, HTML error pages, resets, timeouts, DNS errors):
       * default 6 h of consecutive failure, backoff 5 s doubling to 3 min. Only a permanent answer or the poll
       * time bound ends the wait.
       */
      outage: OutageBoundsSchema,
      /** History events per run before the workflow continues as new (default 8,000; tests use tiny budgets). */
      eventsPerRun: EventBudgetSchema,
      /** Set by the workflow itself when it continues as new: what the previous run had done. */
      resume: v.optional(v.custom<SourceImportResume>(() => true)),
    },
    'input must be an object',
  ),
  rule(['tfvcProject'], (input) => input.tfvcProject === undefined || input.vcs === undefined || input.vcs === 'tfvc', 'applies only to vcs "tfvc"', 'tfvcProject'),
);

/** Every problem with the input (empty when valid). Runs before any API call. */
export function importInputProblems(input: unknown): string[] {
  return problemsOf(SourceImportInputSchema, input);
}

/** What one run hands to the next when it continues as new. */
export interface SourceImportResume {
  status: SourceImportStatus;
  /** Every mapping so far: the input's and those added by `import-map-author`. */
  mappings: AuthorMapping[];
  warnings: string[];
  /** The import as last seen. */
  record: ImportRecord;
  /** The poller: schedule position, counts, outage budget spent, and the start of the total time bound. */
  poll: PollState;
}

export type ImportPhase = 'starting' | 'polling' | 'waiting-for-credentials' | 'waiting-for-choice' | 'waiting-out-outage' | 'done' | 'failed' | 'cancelled';

/** What the `status` query answers. */
export interface SourceImportStatus {
  phase: ImportPhase;
  owner: string;
  repo: string;
  vcsUrl: string;
  /** The import's status as last seen. */
  status?: string;
  statusText?: string;
  /** Every status seen, in order, without repeats. */
  statesSeen: string[];
  percent?: number;
  commitCount?: number;
  pushPercent?: number;
  polls: number;
  /** Polls that failed (each followed by another poll on the outage budget, never by a call that changes the import). */
  failedPolls: number;
  /** @format milliseconds */
  nextPollInMs?: number;
  restarts: number;
  maxRestarts: number;
  /** Runs of this workflow so far (continue-as-new starts the next one). */
  runs: number;
  failedStep?: string;
  errorMessage?: string;
  /** While waiting for `import-choose`. */
  projectChoices?: ProjectChoice[];
  chosenProject?: ProjectChoice;
  /** ISO time until which an answer (credentials, choice) is awaited. */
  answerDeadline?: string;
  authorsFound: number;
  authorsMapped: MappedAuthor[];
  /** True once every author is known (the import is past `importing`). */
  authorsComplete: boolean;
  lfs?: LfsDecision;
  error?: string;
}

/** Argument of the `import-credentials` update. */
export interface CredentialsAnswer {
  /** The name of a source credential configured on the workers (`LONGHAUL_IMPORT_CREDENTIALS`), never the secret. */
  credentials: string;
}

/** Argument of the `import-choose` update: an index into `project_choices`, or fields that match exactly one. */
export interface ChoiceAnswer {
  index?: number;
  vcs?: string;
  tfvcProject?: string;
  humanName?: string;
}

export interface CredentialsAccepted {
  credentials: string;
  /** The import's status right after the server took the credentials. */
  status: string;
}

export interface ChoiceAccepted {
  choice: ProjectChoice;
  status: string;
}

export interface MappingAccepted {
  mapping: AuthorMapping;
  /** Authors this mapping was applied to now. */
  mappedAuthors: MappedAuthor[];
  /** True when no known author matches yet: it applies as authors are found. */
  waitingForAuthors: boolean;
}

/** Failure types the workflow ends with (stable strings for callers). */
export const ImportFailure = failureTypes(IMPORT_FAILURES);

/** Statuses the server works through on its own: the workflow polls while the import is in one of these. */
export const RUNNING_IMPORT_STATES: readonly string[] = ['detecting', 'importing', 'mapping', 'pushing'];

/**
 * The one description of an import's status: the UI's current details, the CLI's progress line (with the
 * command that answers a question, when one is waiting), the percent shown, and the search attributes.
 */
export function describeSourceImportStatus(s: SourceImportStatus, workflowId = 'ID'): StatusView & { percent?: number } {
  const parts = [`${s.vcsUrl} → ${s.owner}/${s.repo}`, s.status ?? s.phase];
  let percent: number | undefined;
  if (s.status === 'importing' && s.percent !== undefined) {
    percent = s.percent;
    parts.push(`importing ${s.percent}% of ${s.commitCount ?? '?'} commits`);
  }
  if (s.status === 'pushing' && s.pushPercent !== undefined) {
    percent = s.pushPercent;
    parts.push(`pushed ${s.pushPercent}%`);
  }
  if (s.authorsFound > 0) parts.push(`authors mapped ${s.authorsMapped.length}/${s.authorsFound}`);
  if (s.lfs) parts.push(`LFS ${s.lfs.useLfs}`);
  if (s.restarts > 0) parts.push(`restarts ${s.restarts}/${s.maxRestarts}`);
  if (s.phase === 'waiting-for-credentials') parts.push(`waiting for credentials until ${s.answerDeadline}: npx longhaul import-credentials --workflow-id ${workflowId} --credentials NAME`);
  if (s.phase === 'waiting-for-choice') {
    const offered = (s.projectChoices ?? []).map((c, i) => `${i}: ${c.humanName ?? c.vcs}`).join(', ');
    parts.push(`waiting for a project choice (${offered}) until ${s.answerDeadline}: npm run starter -- import-choose --workflow-id ${workflowId} --index N`);
  }
  if (s.phase === 'waiting-out-outage') parts.push(`calls failing (${s.failedPolls} failed polls so far): waiting the outage out`);
  if (s.failedStep) parts.push(`failed step: ${s.failedStep}`);
  if (s.phase === 'failed' || s.phase === 'cancelled') parts.push(s.phase + (s.error ? `: ${s.error}` : ''));
  const progress = s.status === 'pushing' ? s.pushPercent : s.percent;
  return {
    line: parts.join(' · '),
    percent,
    attributes: {
      process: Process.SourceImport,
      org: s.owner,
      target: `${s.owner}/${s.repo}`,
      state: s.status,
      progress: progress === undefined ? undefined : Math.floor(progress),
    },
  };
}
