/**
 * Source import (spec 002): the model file of the process. The status the workflow answers to `status` and
 * its one description (UI details, CLI progress line, search attributes), the update answers, the failure
 * types, the default poll bounds and what a run carries across continue-as-new. Inputs, their validation
 * and the decision helpers (author mapping, project choice, LFS policy) are in `source-import-input.ts`.
 * Deterministic: shared by the workflow, activities, the CLI and tests.
 */
import type { StatusView } from '../workflows/kit/status-tracker';
import type { PollState } from '../workflows/kit/poll-decision';
import { HONEST_POLL_SHAPE, type ResolvedPollBounds } from '../workflows/kit/poll-schedule';
import type { AuthorMapping, ImportRecord, LfsDecision, MappedAuthor, ProjectChoice } from './source-import-input';

/**
 * How an import is polled unless the input says otherwise: the kit's honest shape (every 30 s, then 10 % of
 * the wait, ≤ 10 min: a change is noticed at most max(10 % of the wait, 30 s) late; polls are conditional, so
 * unchanged answers are 304s that do not count against the rate limit), for at most 24 h of polling (time
 * spent waiting for an answer not counted). Each change this workflow makes starts the schedule over.
 */
export const DEFAULT_IMPORT_POLL: ResolvedPollBounds = { ...HONEST_POLL_SHAPE, timeoutMs: 24 * 60 * 60 * 1000 };

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
  /** A credential reference (`env:NAME` or `file:/path`), never the secret. */
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
export const ImportFailure = {
  InvalidInput: 'InvalidImportInput',
  ApiUnavailable: 'ImportApiUnavailable',
  StartRejected: 'ImportStartRejected',
  SourceNotFound: 'ImportSourceNotFound',
  ImportFailed: 'ImportFailed',
  AnswerTimedOut: 'ImportAnswerTimedOut',
  TimedOut: 'ImportTimedOut',
  /** Polls failed permanently or for longer than the outage budget; the import may still run on the server. */
  PollFailed: 'ImportPollFailed',
  ImportGone: 'ImportGone',
  /** `import-choose` answered with something that is not exactly one offered choice. */
  InvalidChoice: 'InvalidChoice',
  /** An update's PATCH failed (the answer was recorded by the server or not, as the message says). */
  ChoiceFailed: 'ChoiceFailed',
  MappingFailed: 'MappingFailed',
  /** Raised by activities when a credential reference cannot be resolved on the worker. */
  CredentialReference: 'CredentialReferenceError',
} as const;

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
  if (s.phase === 'waiting-for-credentials') parts.push(`waiting for credentials until ${s.answerDeadline}: npm run starter -- import-credentials --workflow-id ${workflowId} --credentials env:NAME`);
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
      process: 'source-import',
      org: s.owner,
      target: `${s.owner}/${s.repo}`,
      state: s.status,
      progress: progress === undefined ? undefined : Math.floor(progress),
    },
  };
}
