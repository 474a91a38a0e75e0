/**
 * Source import (spec 002, "Source import" and "Import status"), durably: start the import, then follow its
 * status with the kit's `pollUntil` (durable timers on one growth schedule, the outage budget) until
 * `complete`, answering every state of the table on the way:
 *
 * - `detecting`, `importing`, `mapping`, `pushing`: poll; as soon as authors exist, list them (`since`
 *   paging) and PATCH each one the mapping names, before anything is pushed; when large files turn
 *   up, list them and set `use_lfs` by the policy;
 * - `auth_failed`, `detection_needs_auth`: wait (bounded) for `import-credentials`, which carries the
 *   *name* of a credential configured on the workers only, then PATCH;
 * - `detection_found_multiple`: pick by the input's rule, or wait (bounded) for `import-choose`;
 * - `detection_found_nothing`: cancel the import and fail, naming the URL;
 * - `error`: restart (PATCH with no parameters) up to `maxRestarts` times, then fail.
 *
 * Outages (503 maintenance, 502/504, HTML error pages, resets, timeouts, DNS errors) are waited out on the
 * outage budget: a failed poll is followed only by more polls, a failed call by the same call. Only a
 * permanent answer or the poll time bound ends the workflow. Between polls, at the run's event budget (or when
 * the server suggests it), the workflow continues as new, carrying its state in `input.resume`.
 *
 * Cancelling the workflow cancels the import on the server (DELETE, retried until it succeeds or fails
 * permanently) in a non-cancellable scope.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { ImportActivities } from './activities';
import {
  DEFAULT_ANSWER_TIMEOUT_MS,
  DEFAULT_IMPORT_POLL,
  DEFAULT_MAX_RESTARTS,
  describeSourceImportStatus,
  ImportFailure,
  SourceImportInputSchema,
  mappingMatches,
  type ImportRecord,
  type SourceImportInput,
  type SourceImportResult,
  type SourceImportStatus,
} from './model';
import { activityCause } from '../../common/activity-failures';
import { FailureType } from '../../common/failures';
import { POLL, QUIET_POLL } from '../../workflows/kit/activity-options';
import { afterPollAnswered, asConditional, pollUntil, quietPollEnded, quietWherePatched, refuseUntrusted, resolvePollBounds, runBudgetReached, startPolling, statusQuery, trackStatus, type PollState, validatedWorkflow } from '../../workflows/kit';
import { IMPORT_FAILURES } from './failures';
import { credentialReferenceRefused, IMPORT_CREDENTIALS_SETTING, isCredentialReference } from '../../common/credential';
import { importApi, ImportSession } from './session';
import { nextImportStep, sourceNotFound } from './machine';
import { messageOf, registerImportUpdates } from './updates';
import { summarized } from '../../workflows/kit/activity-summaries';
import { IMPORT_SUMMARIES } from './summaries';

export { importChooseUpdate, importCredentialsUpdate, importMapAuthorUpdate } from './updates';

export const importStatusQuery = statusQuery<SourceImportStatus>();

/** Polls: a few attempts each; `pollUntil` polls again later on the outage budget. */
const importPoll = summarized(proxyActivities<ImportActivities>(POLL), IMPORT_SUMMARIES);
/** Quiet polls: the polls of a stretch without change as one activity's attempts. */
const importQuietPoll = summarized(proxyActivities<ImportActivities>(QUIET_POLL), IMPORT_SUMMARIES);


function httpDetails(err: unknown): { status?: number; url?: string } {
  const details = activityCause(err)?.details?.[0] as { status?: number; url?: string } | undefined;
  return { status: details?.status, url: details?.url };
}

function serverOf(err: unknown): string {
  const url = httpDetails(err).url;
  const match = url ? /^[a-z]+:\/\/[^/]+/i.exec(url) : null;
  return match ? match[0] : 'this server';
}

/** Why the start was refused, as the workflow's failure (404/410: the API is absent; 422: refused). */
function startFailure(input: SourceImportInput, err: unknown): unknown {
  const failure = activityCause(err);
  if (failure?.type === FailureType.NotFound || failure?.type === FailureType.Gone) {
    return ApplicationFailure.nonRetryable(
      `the source-import API is not available on ${serverOf(err)}: PUT /repos/${input.owner}/${input.repo}/import answered ` +
        `${httpDetails(err).status ?? 404}. GitHub.com retired these endpoints on 2024-04-12; use a server that still serves them ` +
        `(or check that ${input.owner}/${input.repo} exists)`,
      ImportFailure.ApiUnavailable,
      { server: serverOf(err) },
    );
  }
  if (failure?.type === FailureType.ValidationFailed) {
    return ApplicationFailure.nonRetryable(`the server refused to start the import into ${input.owner}/${input.repo}: ${failure.message}`, ImportFailure.StartRejected);
  }
  return err;
}

function freshStatus(input: SourceImportInput): SourceImportStatus {
  return {
    phase: 'starting',
    owner: input.owner,
    repo: input.repo,
    vcsUrl: input.vcsUrl,
    statesSeen: [],
    polls: 0,
    failedPolls: 0,
    restarts: 0,
    maxRestarts: input.maxRestarts ?? DEFAULT_MAX_RESTARTS,
    runs: 1,
    authorsFound: 0,
    authorsMapped: [],
    authorsComplete: false,
  };
}

export const sourceImport = validatedWorkflow(
  'sourceImport',
  {
    what: 'source-import input',
    failures: IMPORT_FAILURES,
    schema: SourceImportInputSchema,
    // An env:/file: reference is refused at a fresh start. Runs that carry one already (started by 0.4.0, or
    // continued from one) never resolve it: it is dropped before the schema sees it, and an import that needs
    // credentials asks for them.
    first: (input) => {
      if (!isCredentialReference(input.credentials)) return;
      if (input.resume === undefined) refuseUntrusted(credentialReferenceRefused('credentials', IMPORT_CREDENTIALS_SETTING));
      return { ...input, credentials: undefined };
    },
  },
  runImport,
);

async function runImport(input: SourceImportInput): Promise<SourceImportResult> {
  const bounds = resolvePollBounds(DEFAULT_IMPORT_POLL, input.poll);
  const answerTimeoutMs = input.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
  const { resume } = input;
  const st: SourceImportStatus = resume ? { ...resume.status } : freshStatus(input);
  const session = new ImportSession(input, st, resume);
  const { target } = session;
  session.tracker = trackStatus(importStatusQuery, st, (s) => describeSourceImportStatus(s, workflowInfo().workflowId));
  registerImportUpdates(session);

  /** The poller's state: schedule position, counts, outage spent, start of the total time bound. */
  let pollState: PollState | undefined = resume?.poll;
  /**
   * Start the schedule over after a change this workflow made (credentials, choice, restart): the import moves
   * quickly right after one. Counts, the outage spent and the total bound carry over; time spent waiting for a
   * person's answer does not count against the bound.
   */
  const restartSchedule = (pausedMs = 0) => {
    const fresh = startPolling(Date.now(), bounds);
    pollState = pollState ? { ...fresh, startedAtMs: pollState.startedAtMs + pausedMs, polls: pollState.polls, failedPolls: pollState.failedPolls, outage: pollState.outage } : fresh;
  };
  const answerTimedOut = (what: string) =>
    ApplicationFailure.nonRetryable(
      `no ${what} arrived within ${Math.round(answerTimeoutMs / 1000)} s for the import of ${input.vcsUrl} into ${input.owner}/${input.repo} ` +
        `(status ${session.record?.status}); the import is left waiting on the server: start this workflow again to resume, or cancel it`,
      ImportFailure.AnswerTimedOut,
      { status: session.record?.status },
    );

  let started = resume !== undefined;
  try {
    if (!started) {
      try {
        const { vcsUrl, vcs, tfvcProject, credentials } = input;
        session.observe(await session.call(() => importApi.startImport({ ...target, vcsUrl, vcs, tfvcProject, credentials })));
      } catch (err) {
        if (isCancellation(err)) throw err;
        throw startFailure(input, err);
      }
      started = true;
    }
    st.phase = 'polling';

    for (;;) {
      const r = session.record!;
      await session.syncAuthors();
      await session.settleLargeFiles();

      const step = nextImportStep(r, input, { done: st.restarts, max: st.maxRestarts });
      if (step.do === 'complete') break;
      if (step.do === 'await-credentials') {
        const since = Date.now();
        if (!(await session.waitForAnswer('waiting-for-credentials', answerTimeoutMs))) throw answerTimedOut('credentials');
        restartSchedule(Date.now() - since);
        continue;
      }
      if (step.do === 'choose' || step.do === 'await-choice') {
        const since = Date.now();
        if (step.do === 'choose') {
          const { choice } = step;
          st.chosenProject = choice;
          session.observe(await session.serialized(() => session.call(() => importApi.chooseImportProject({ ...target, choice }))));
        } else if (!(await session.waitForAnswer('waiting-for-choice', answerTimeoutMs))) {
          throw answerTimedOut('project choice');
        }
        restartSchedule(Date.now() - since);
        continue;
      }
      if (step.do === 'cancel-and-fail') throw sourceNotFound(input, await session.cancelOnServer());
      if (step.do === 'restart') {
        st.restarts++;
        session.observe(await session.serialized(() => session.call(() => importApi.restartImport(target))));
        restartSchedule();
        continue;
      }
      if (step.do === 'fail') throw step.failure;

      const importGone = () =>
        ApplicationFailure.nonRetryable(`the import into ${input.owner}/${input.repo} no longer exists on the server (cancelled elsewhere?)`, ImportFailure.ImportGone);
      // Running on its own: poll until it needs the workflow (a new state, new authors, large files).
      const outcome = await pollUntil<ImportRecord>(
        {
          what: `the import into ${input.owner}/${input.repo}`,
          // Conditional: a 304 (unchanged since the last answer's ETag) does not count against the rate limit.
          poll: {
            conditional: async (etag) => {
              try {
                const answer = asConditional(await importPoll.getImport({ ...target, etag }));
                if (!answer.notModified) session.observe(answer.value);
                return answer;
              } catch (err) {
                if (activityCause(err)?.type !== FailureType.NotFound) throw err;
                throw importGone();
              }
            },
          },
          quiet: quietWherePatched(async (request) => {
            try {
              const answer = await importQuietPoll.quietGetImport({ ...target, ...request });
              const read = answer.kind === 'changed' ? asConditional(answer.polled) : undefined;
              if (read && !read.notModified) session.observe(read.value);
              return answer;
            } catch (err) {
              if (activityCause(quietPollEnded(err)?.cause ?? err)?.type !== FailureType.NotFound) throw err;
              throw importGone();
            }
          }),
          done: (next) => session.pollAnswerNeedsWorkflow(next),
          bounds,
          outage: input.outage,
          state: pollState,
          onProgress: (progress) => {
            st.polls = progress.polls;
            st.failedPolls = progress.failedPolls;
            st.nextPollInMs = progress.nextPollInMs;
            st.phase = progress.failuresInRow > 0 ? 'waiting-out-outage' : 'polling';
            session.show();
          },
          suspend: () => runBudgetReached(input.eventsPerRun),
          failureTypes: { timedOut: ImportFailure.TimedOut, pollFailed: ImportFailure.PollFailed },
          describeLast: (last) => `still ${(last ?? r).status}`,
          details: { status: r.status },
        },
        r,
      );
      st.phase = 'polling';
      if (outcome.kind === 'suspended') {
        // Between polls: hand the state to the next run once no update is mid-way.
        await condition(allHandlersFinished);
        return await continueAsNew<typeof sourceImport>({ ...input, resume: session.resume(outcome.state) });
      }
      // Keep the schedule's place: the next wait starts from the poll that just answered.
      pollState = { ...afterPollAnswered(outcome.state, bounds, Date.now()).state, polls: outcome.state.polls };
    }

    st.nextPollInMs = undefined;
    st.phase = 'done';
    session.finished = true;
    session.show();
    await condition(allHandlersFinished);
    const final = session.record!;
    return {
      status: 'complete',
      owner: input.owner,
      repo: input.repo,
      vcsUrl: input.vcsUrl,
      vcs: final.vcs,
      commitCount: final.commitCount ?? 0,
      authorsMapped: [...session.mapped.values()],
      unmatchedMappings: session.mappings.filter((m) => ![...session.authors.values()].some((a) => mappingMatches(m, a))),
      lfs: st.lfs,
      chosenProject: st.chosenProject,
      repositoryUrl: final.repositoryUrl,
      htmlUrl: final.htmlUrl,
      restarts: st.restarts,
      polls: st.polls,
      warnings: session.warnings,
    };
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    session.finished = true;
    const cancelled = isCancellation(err);
    st.error = messageOf(err);
    if (cancelled) {
      // Stop the import on the server even though this workflow is being cancelled. When the start
      // call's outcome is unknown, only an import from our URL is ours to delete.
      const leftOver = await CancellationScope.nonCancellable(async () => {
        if (!started) {
          const existing = await importApi.getImport(target).catch(() => undefined);
          if (existing === undefined || existing.notModified === true || existing.vcsUrl !== input.vcsUrl) return undefined;
        }
        return session.cancelOnServer();
      });
      if (leftOver) st.error = leftOver;
    }
    st.phase = cancelled ? 'cancelled' : 'failed';
    st.nextPollInMs = undefined;
    session.show();
    throw err;
  }
}

