/**
 * Source import (spec 002, "Source import" and "Import status"), durably: start the import, then
 * follow its status with durable, growing poll timers until `complete`, answering every state of the
 * table on the way:
 *
 * - `detecting`, `importing`, `mapping`, `pushing`: poll; as soon as authors exist, list them (`since`
 *   paging) and PATCH each one the mapping names, before anything is pushed; when large files turn
 *   up, list them and set `use_lfs` by the policy;
 * - `auth_failed`, `detection_needs_auth`: wait (bounded) for `import-credentials`, which carries a
 *   credential *reference* only, then PATCH;
 * - `detection_found_multiple`: pick by the input's rule, or wait (bounded) for `import-choose`;
 * - `detection_found_nothing`: cancel the import and fail, naming the URL;
 * - `error`: restart (PATCH with no parameters) up to `maxRestarts` times, then fail.
 *
 * Cancelling the workflow cancels the import on the server (DELETE) in a non-cancellable scope.
 * Transient trouble (503 maintenance, 502/504, HTML error pages, resets, timeouts, DNS errors) is retried by the
 * activity with backoff and, past that, waited out durably; only permanent answers end the workflow.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  defineQuery,
  defineUpdate,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  TimeoutFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { API_CALL } from './activity-options';
import { activityCause, HttpFailure } from './activity-failures';
import { DEFAULT_POLL, nextPollInterval } from '../common/migration-input';
import {
  authorMappingProblems,
  credentialReferenceProblems,
  decideLfs,
  DEFAULT_ANSWER_TIMEOUT_MS,
  DEFAULT_MAINTENANCE,
  DEFAULT_MAX_RESTARTS,
  desiredIdentity,
  ImportFailure,
  importInputProblems,
  mappingMatches,
  matchingChoices,
  selectChoice,
  type AuthorMapping,
  type ChoiceAccepted,
  type ChoiceAnswer,
  type CredentialsAccepted,
  type CredentialsAnswer,
  type ImportAuthor,
  type ImportRecord,
  type MappedAuthor,
  type MappingAccepted,
  type ProjectChoice,
  type SourceImportInput,
  type SourceImportResult,
  type SourceImportStatus,
} from '../common/import-input';
import { LonghaulOrg, LonghaulProcess, LonghaulProgress, LonghaulState, LonghaulTarget } from '../common/search-attributes';

export const importStatusQuery = defineQuery<SourceImportStatus>('status');
export const importCredentialsUpdate = defineUpdate<CredentialsAccepted, [CredentialsAnswer]>('import-credentials');
export const importChooseUpdate = defineUpdate<ChoiceAccepted, [ChoiceAnswer]>('import-choose');
export const importMapAuthorUpdate = defineUpdate<MappingAccepted, [AuthorMapping]>('import-map-author');

const api = proxyActivities<Activities>(API_CALL);

const CREDENTIAL_STATES = ['auth_failed', 'detection_needs_auth'];
/** Statuses in which every author is known. */
const AUTHORS_KNOWN_STATES = ['mapping', 'pushing', 'complete'];
/** Statuses in which a mapping can no longer reach the repository before the push. */
const PUSHED_STATES = ['pushing', 'complete'];

function httpDetails(failure: ApplicationFailure | undefined): { status?: number; url?: string } {
  const details = failure?.details?.[0] as { status?: number; url?: string } | undefined;
  return { status: details?.status, url: details?.url };
}

function messageOf(err: unknown): string {
  const failure = activityCause(err);
  if (failure) return failure.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The activity stopped retrying on trouble that passes: 5xx answers (503 maintenance, 502/504 from a proxy, an
 * HTML error page), network errors (resets, timeouts, DNS) that the HTTP core gave up on, a call that ran past
 * its start-to-close timeout, or a retryable failure whose attempts ran out. Such a call is tried again after a
 * durable wait; only permanent answers (4xx) end the workflow.
 */
function isTransient(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  const cause = err.cause;
  if (cause instanceof TimeoutFailure) return true;
  if (!(cause instanceof ApplicationFailure)) return false;
  return cause.type === TRANSIENT_EXHAUSTED || !cause.nonRetryable;
}
/** `FailureType.TransientExhausted` of the HTTP core (workflows may not import `src/http`). */
const TRANSIENT_EXHAUSTED = 'TransientRetriesExhaustedError';

/** 404/410 where an import endpoint should be: the API is retired or absent on that server. */
function isUnavailable(err: unknown): boolean {
  const failure = activityCause(err);
  return failure?.type === HttpFailure.NotFound || failure?.type === HttpFailure.Gone;
}

function serverOf(err: unknown): string {
  const url = httpDetails(activityCause(err)).url;
  const match = url ? /^[a-z]+:\/\/[^/]+/i.exec(url) : null;
  return match ? match[0] : 'this server';
}

export async function sourceImport(input: SourceImportInput): Promise<SourceImportResult> {
  const problems = importInputProblems(input);
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(`invalid source-import input: ${problems.join('; ')}`, ImportFailure.InvalidInput, { problems });
  }
  const poll = { ...DEFAULT_POLL, ...input.poll };
  const maintenance = { ...DEFAULT_MAINTENANCE, ...input.maintenance };
  const maxRestarts = input.maxRestarts ?? DEFAULT_MAX_RESTARTS;
  const answerTimeoutMs = input.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
  const lfsPolicy = input.lfs ?? 'opt_in';
  const target = { owner: input.owner, repo: input.repo };

  const st: SourceImportStatus = {
    phase: 'starting',
    owner: input.owner,
    repo: input.repo,
    vcsUrl: input.vcsUrl,
    statesSeen: [],
    polls: 0,
    restarts: 0,
    authorsFound: 0,
    authorsMapped: [],
    authorsComplete: false,
  };
  const mappings: AuthorMapping[] = [...(input.authors ?? [])];
  /** Authors as the server has them, by id. */
  const authors = new Map<number, ImportAuthor>();
  const mapped = new Map<number, MappedAuthor>();
  const warnings: string[] = [];
  let record: ImportRecord | undefined;
  let finished = false;
  /** Bumped by an update that changed the import, so a wait for an answer ends. */
  let answers = 0;
  let progressShown: number | undefined;

  const show = () => {
    const parts = [`${input.vcsUrl} → ${input.owner}/${input.repo}`, `phase: ${st.phase}`];
    if (st.status) parts.push(`status: ${st.status}`);
    if (st.status === 'importing' && st.percent !== undefined) parts.push(`${st.percent}%${st.commitCount !== undefined ? ` of ${st.commitCount} commits` : ''}`);
    if (st.status === 'pushing' && st.pushPercent !== undefined) parts.push(`pushed ${st.pushPercent}%`);
    if (st.authorsFound > 0) parts.push(`authors mapped ${st.authorsMapped.length}/${st.authorsFound}`);
    if (st.lfs) parts.push(`LFS ${st.lfs.useLfs}`);
    if (st.restarts > 0) parts.push(`restarts ${st.restarts}/${maxRestarts}`);
    if (st.answerDeadline) parts.push(`waiting for an answer until ${st.answerDeadline}`);
    if (st.failedStep) parts.push(`failed step: ${st.failedStep}`);
    setCurrentDetails(parts.join(' · '));
  };

  const observe = (r: ImportRecord) => {
    record = r;
    if (st.statesSeen.at(-1) !== r.status) {
      st.statesSeen.push(r.status);
      upsertSearchAttributes([{ key: LonghaulState, value: r.status }]);
    }
    st.status = r.status;
    st.statusText = r.statusText;
    st.percent = r.percent;
    st.commitCount = r.commitCount ?? st.commitCount;
    st.pushPercent = r.pushPercent;
    st.failedStep = r.failedStep;
    st.errorMessage = r.errorMessage;
    st.projectChoices = r.status === 'detection_found_multiple' ? r.projectChoices : undefined;
    const progress = r.status === 'pushing' ? r.pushPercent : r.percent;
    if (progress !== undefined && Math.floor(progress) !== progressShown) {
      progressShown = Math.floor(progress);
      upsertSearchAttributes([{ key: LonghaulProgress, value: progressShown }]);
    }
    show();
  };

  /**
   * Runs an API call; when it gave up on transient trouble (an outage or maintenance longer than the activity's
   * retries), waits durably with a doubling delay and tries again, within the outage budget (`maintenance`).
   */
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    let delay = maintenance.initialDelayMs;
    let waited = 0;
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        if (!isTransient(err) || waited >= maintenance.timeoutMs) throw err;
        const phase = st.phase;
        st.phase = 'waiting-out-outage';
        show();
        await sleep(delay);
        waited += delay;
        delay = Math.min(maintenance.maxDelayMs, delay * 2);
        st.phase = phase;
      }
    }
  };

  /** One mutating call at a time: updates and the main loop never PATCH the same import concurrently. */
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const authorsComplete = () => record !== undefined && AUTHORS_KNOWN_STATES.includes(record.status) && authors.size >= record.authorsCount;

  /** PATCHes every known author whose identity differs from what the mappings say. */
  const applyMappings = () =>
    serialized(async () => {
      const changed: MappedAuthor[] = [];
      for (const author of [...authors.values()].sort((a, b) => a.id - b.id)) {
        const wanted = desiredIdentity(mappings, author);
        if (!wanted || (author.name === wanted.name && author.email === wanted.email)) continue;
        const late = record !== undefined && PUSHED_STATES.includes(record.status);
        const updated = await call(() => api.mapImportAuthor({ ...target, authorId: author.id, name: wanted.name, email: wanted.email }));
        authors.set(updated.id, updated);
        const entry = { id: updated.id, remoteId: updated.remoteId, remoteName: updated.remoteName, name: updated.name, email: updated.email };
        mapped.set(updated.id, entry);
        changed.push(entry);
        if (late) warnings.push(`author ${updated.remoteId} was mapped after the push began; the server rewrites and pushes again`);
      }
      st.authorsMapped = [...mapped.values()];
      show();
      return changed;
    });

  /** Lists authors found since the last look (`since` paging), then applies the mappings to them. */
  const syncAuthors = async () => {
    if (!record) return;
    let listed = false;
    while (authors.size < record.authorsCount) {
      const since = authors.size > 0 ? Math.max(...authors.keys()) : undefined;
      const page = await call(() => api.listImportAuthors({ ...target, since }));
      listed = true;
      if (page.length === 0) break;
      for (const author of page) authors.set(author.id, author);
    }
    st.authorsFound = authors.size;
    st.authorsComplete = authorsComplete();
    if (listed) await applyMappings();
  };

  /** When large files turned up: list them and set `use_lfs` by the policy (once). */
  const settleLargeFiles = async () => {
    if (!record?.hasLargeFiles || st.lfs) return;
    const files = await call(() => api.listImportLargeFiles(target));
    const decision = decideLfs(lfsPolicy, files);
    if (record.useLfs !== decision.useLfs) {
      const r = await serialized(() => call(() => api.setImportLfs({ ...target, useLfs: decision.useLfs })));
      st.lfs = decision;
      observe(r);
    } else {
      st.lfs = decision;
    }
    show();
  };

  /** Waits (bounded) until an update answered; false when the deadline passed. */
  const waitForAnswer = async (phase: 'waiting-for-credentials' | 'waiting-for-choice'): Promise<boolean> => {
    const before = answers;
    st.phase = phase;
    st.answerDeadline = new Date(Date.now() + answerTimeoutMs).toISOString();
    show();
    const answered = await condition(() => answers !== before, answerTimeoutMs);
    st.answerDeadline = undefined;
    st.phase = 'polling';
    return answered;
  };

  const answerTimedOut = (what: string) =>
    ApplicationFailure.nonRetryable(
      `no ${what} arrived within ${Math.round(answerTimeoutMs / 1000)} s for the import of ${input.vcsUrl} into ${input.owner}/${input.repo} ` +
        `(status ${record?.status}); the import is left waiting on the server: start this workflow again to resume, or cancel it`,
      ImportFailure.AnswerTimedOut,
      { status: record?.status },
    );

  // --- Updates: validators refuse bad or untimely answers before anything is recorded. ---

  setHandler(importStatusQuery, () => st);

  setHandler(
    importCredentialsUpdate,
    async (answer) => {
      try {
        const r = await serialized(() => call(() => api.sendImportCredentials({ ...target, credentials: answer.credentials })));
        observe(r);
        answers++;
        return { credentials: answer.credentials, status: r.status };
      } catch (err) {
        throw ApplicationFailure.create({
          message: `the credentials were not applied: ${messageOf(err)}`,
          type: activityCause(err)?.type ?? ImportFailure.CredentialReference,
          nonRetryable: true,
        });
      }
    },
    {
      validator: (answer) => {
        const problems = credentialReferenceProblems((answer as Partial<CredentialsAnswer> | undefined)?.credentials);
        if (problems.length > 0) throw new Error(problems.join('; '));
        if (finished || !record || !CREDENTIAL_STATES.includes(record.status)) {
          throw new Error(`the import is not waiting for credentials (status: ${record?.status ?? 'not started'})`);
        }
      },
      description: 'Credentials for the source repository, as a reference (env:NAME or file:/path) resolved on the worker.',
    },
  );

  setHandler(
    importChooseUpdate,
    async (answer) => {
      const picked = selectChoice(answer, record?.projectChoices ?? []);
      if (!('choice' in picked)) throw ApplicationFailure.nonRetryable(picked.problem, 'InvalidChoice');
      try {
        const r = await serialized(() => call(() => api.chooseImportProject({ ...target, choice: picked.choice })));
        st.chosenProject = picked.choice;
        observe(r);
        answers++;
        return { choice: picked.choice, status: r.status };
      } catch (err) {
        throw ApplicationFailure.nonRetryable(`the choice was not applied: ${messageOf(err)}`, activityCause(err)?.type ?? 'ChoiceFailed');
      }
    },
    {
      validator: (answer) => {
        if (finished || record?.status !== 'detection_found_multiple') {
          throw new Error(`the import is not waiting for a project choice (status: ${record?.status ?? 'not started'})`);
        }
        const picked = selectChoice(answer, record.projectChoices ?? []);
        if ('problem' in picked) throw new Error(picked.problem);
      },
      description: 'Chooses one of project_choices: { index } or fields matching exactly one choice.',
    },
  );

  setHandler(
    importMapAuthorUpdate,
    async (mapping) => {
      const accepted: AuthorMapping = { remote: mapping.remote, name: mapping.name, email: mapping.email };
      mappings.push(accepted);
      let changed: MappedAuthor[];
      try {
        changed = await applyMappings();
      } catch (err) {
        throw ApplicationFailure.nonRetryable(`the mapping was recorded but not applied yet: ${messageOf(err)}`, activityCause(err)?.type ?? 'MappingFailed');
      }
      const matching = [...authors.values()].filter((a) => mappingMatches(accepted, a));
      return {
        mapping: accepted,
        mappedAuthors: changed.filter((m) => matching.some((a) => a.id === m.id)),
        waitingForAuthors: matching.length === 0,
      };
    },
    {
      validator: (mapping) => {
        const problems = authorMappingProblems(mapping);
        if (problems.length > 0) throw new Error(problems.join('; '));
        if (finished || (record && PUSHED_STATES.includes(record.status))) {
          throw new Error(`too late: the import is ${finished ? 'finished' : record?.status}; authors can only be mapped before the push`);
        }
        if (authorsComplete() && ![...authors.values()].some((a) => mappingMatches(mapping, a))) {
          const known = [...authors.values()].map((a) => a.remoteId).join(', ');
          throw new Error(`no author of this import matches ${JSON.stringify(mapping.remote)} (authors: ${known})`);
        }
      },
      description: 'Maps a foreign author (remote id, name or email) to a Git name and email before the push.',
    },
  );

  upsertSearchAttributes([
    { key: LonghaulProcess, value: 'source-import' },
    { key: LonghaulOrg, value: input.owner },
    { key: LonghaulTarget, value: `${input.owner}/${input.repo}` },
  ]);
  show();

  let started = false;
  try {
    try {
      observe(
        await call(() =>
          api.startImport({ ...target, vcsUrl: input.vcsUrl, vcs: input.vcs, tfvcProject: input.tfvcProject, credentials: input.credentials }),
        ),
      );
    } catch (err) {
      if (isCancellation(err)) throw err;
      if (isUnavailable(err)) {
        throw ApplicationFailure.nonRetryable(
          `the source-import API is not available on ${serverOf(err)}: PUT /repos/${input.owner}/${input.repo}/import answered ` +
            `${httpDetails(activityCause(err)).status ?? 404}. GitHub.com retired these endpoints on 2024-04-12; use a server that still serves them ` +
            `(or check that ${input.owner}/${input.repo} exists)`,
          ImportFailure.ApiUnavailable,
          { server: serverOf(err) },
        );
      }
      const failure = activityCause(err);
      if (failure?.type === HttpFailure.ValidationFailed) {
        throw ApplicationFailure.nonRetryable(`the server refused to start the import into ${input.owner}/${input.repo}: ${failure.message}`, ImportFailure.StartRejected);
      }
      throw err;
    }
    started = true;
    st.phase = 'polling';

    // Poll times are anchored to a schedule (not to the end of the previous poll), so the latency of
    // each poll does not push the schedule back. The schedule starts over after each change this
    // workflow makes (credentials, choice, restart): the import moves quickly right after one.
    let interval = poll.initialIntervalMs;
    let nextPollAt = Date.now() + interval;
    let waited = 0;
    const restartSchedule = () => {
      interval = poll.initialIntervalMs;
      nextPollAt = Date.now() + interval;
    };
    for (;;) {
      const r = record!;
      await syncAuthors();
      await settleLargeFiles();

      if (r.status === 'complete') break;
      if (CREDENTIAL_STATES.includes(r.status)) {
        if (!(await waitForAnswer('waiting-for-credentials'))) throw answerTimedOut('credentials');
        restartSchedule();
        continue;
      }
      if (r.status === 'detection_found_multiple') {
        const choices = r.projectChoices ?? [];
        const byRule = input.projectChoice ? matchingChoices(input.projectChoice, choices) : [];
        if (byRule.length === 1) {
          const choice: ProjectChoice = choices[byRule[0]];
          st.chosenProject = choice;
          observe(await serialized(() => call(() => api.chooseImportProject({ ...target, choice }))));
        } else if (!(await waitForAnswer('waiting-for-choice'))) {
          throw answerTimedOut('project choice');
        }
        restartSchedule();
        continue;
      }
      if (r.status === 'detection_found_nothing') {
        await call(() => api.cancelImport(target));
        throw ApplicationFailure.nonRetryable(
          `no source control was detected at ${input.vcsUrl}; the import into ${input.owner}/${input.repo} was cancelled. Check the URL and start again`,
          ImportFailure.SourceNotFound,
          { vcsUrl: input.vcsUrl },
        );
      }
      if (r.status === 'error') {
        if (st.restarts >= maxRestarts) {
          throw ApplicationFailure.nonRetryable(
            `the import of ${input.vcsUrl} into ${input.owner}/${input.repo} failed at step ${r.failedStep ?? '(not given)'}: ` +
              `${r.errorMessage ?? '(no message)'} (after ${st.restarts} restart${st.restarts === 1 ? '' : 's'})`,
            ImportFailure.ImportFailed,
            { failedStep: r.failedStep, errorMessage: r.errorMessage, restarts: st.restarts },
          );
        }
        st.restarts++;
        observe(await serialized(() => call(() => api.restartImport(target))));
        restartSchedule();
        continue;
      }

      // Running on its own (detecting, importing, mapping, pushing): wait, then look again.
      if (waited >= poll.timeoutMs) {
        throw ApplicationFailure.nonRetryable(
          `the import into ${input.owner}/${input.repo} was still ${r.status} after ${Math.round(waited / 1000)} s of polling`,
          ImportFailure.TimedOut,
          { status: r.status },
        );
      }
      // After a long pause (a maintenance wait), poll once now rather than catching up on missed slots.
      nextPollAt = Math.max(nextPollAt, Date.now());
      st.nextPollInMs = nextPollAt - Date.now();
      show();
      if (st.nextPollInMs > 0) await sleep(st.nextPollInMs);
      waited += interval;
      interval = nextPollInterval(interval, poll);
      nextPollAt += interval;
      try {
        observe(await call(() => api.getImport(target)));
      } catch (err) {
        if (activityCause(err)?.type === HttpFailure.NotFound) {
          throw ApplicationFailure.nonRetryable(`the import into ${input.owner}/${input.repo} no longer exists on the server (cancelled elsewhere?)`, ImportFailure.ImportGone);
        }
        throw err;
      }
      st.polls++;
    }

    st.nextPollInMs = undefined;
    st.phase = 'done';
    finished = true;
    show();
    await condition(allHandlersFinished);
    const final = record!;
    return {
      status: 'complete',
      owner: input.owner,
      repo: input.repo,
      vcsUrl: input.vcsUrl,
      vcs: final.vcs,
      commitCount: final.commitCount ?? 0,
      authorsMapped: [...mapped.values()],
      unmatchedMappings: mappings.filter((m) => ![...authors.values()].some((a) => mappingMatches(m, a))),
      lfs: st.lfs,
      chosenProject: st.chosenProject,
      repositoryUrl: final.repositoryUrl,
      htmlUrl: final.htmlUrl,
      restarts: st.restarts,
      polls: st.polls,
      warnings,
    };
  } catch (err) {
    finished = true;
    const cancelled = isCancellation(err);
    st.error = messageOf(err);
    if (cancelled) {
      // Stop the import on the server even though this workflow is being cancelled. When the start
      // call's outcome is unknown, only an import from our URL is ours to delete.
      await CancellationScope.nonCancellable(async () => {
        if (!started) {
          const existing = await api.getImport(target).catch(() => undefined);
          if (existing?.vcsUrl !== input.vcsUrl) return;
        }
        await api.cancelImport(target);
      });
    }
    st.phase = cancelled ? 'cancelled' : 'failed';
    st.nextPollInMs = undefined;
    show();
    throw err;
  }
}
