/**
 * The source-import state machine as pure functions (spec 002, "Import status"): what the workflow does next
 * for the import's status as last seen, and what makes a poll stop early. No I/O, no clock, no Temporal
 * calls: `workflow.ts` carries each step out (the commands, in the same order as before), and
 * `test/unit/source-import-machine.test.ts` walks every status of the spec's table in milliseconds.
 */
import { ApplicationFailure } from '@temporalio/common';
import {
  ImportFailure,
  matchingChoices,
  RUNNING_IMPORT_STATES,
  type ImportRecord,
  type ProjectChoice,
  type SourceImportInput,
} from './model';

/** Statuses resolved by an update carrying credentials (a credential reference). */
export const CREDENTIAL_STATES: readonly string[] = ['auth_failed', 'detection_needs_auth'];

/** What the workflow does with the import's current status. */
export type ImportStep =
  /** `complete`: report the result. */
  | { do: 'complete' }
  /** Running on its own (`detecting`, `importing`, `mapping`, `pushing`): poll until it needs the workflow. */
  | { do: 'poll' }
  /** `auth_failed`, `detection_needs_auth`: wait (bounded) for `import-credentials`. */
  | { do: 'await-credentials' }
  /** `detection_found_multiple` and the input's rule picks exactly one choice: PATCH it. */
  | { do: 'choose'; choice: ProjectChoice }
  /** `detection_found_multiple` without a rule, or a rule matching none or several: wait for `import-choose`. */
  | { do: 'await-choice' }
  /** `detection_found_nothing`: cancel the import on the server, then fail with `sourceNotFound`. */
  | { do: 'cancel-and-fail' }
  /** `error` with restarts left: PATCH with no parameters. */
  | { do: 'restart' }
  /** `error` with no restart left, or a status the spec does not name: end the workflow with this failure. */
  | { do: 'fail'; failure: ApplicationFailure };

type StepInput = Pick<SourceImportInput, 'owner' | 'repo' | 'vcsUrl' | 'projectChoice'>;

/** The next step for the import as last seen, given the restarts spent and allowed. */
export function nextImportStep(r: ImportRecord, input: StepInput, restarts: { done: number; max: number }): ImportStep {
  if (r.status === 'complete') return { do: 'complete' };
  if (CREDENTIAL_STATES.includes(r.status)) return { do: 'await-credentials' };
  if (r.status === 'detection_found_multiple') {
    const choices = r.projectChoices ?? [];
    const byRule = input.projectChoice ? matchingChoices(input.projectChoice, choices) : [];
    return byRule.length === 1 ? { do: 'choose', choice: choices[byRule[0]] } : { do: 'await-choice' };
  }
  if (r.status === 'detection_found_nothing') return { do: 'cancel-and-fail' };
  if (r.status === 'error') {
    if (restarts.done < restarts.max) return { do: 'restart' };
    return {
      do: 'fail',
      failure: ApplicationFailure.nonRetryable(
        `the import of ${input.vcsUrl} into ${input.owner}/${input.repo} failed at step ${r.failedStep ?? '(not given)'}: ` +
          `${r.errorMessage ?? '(no message)'} (after ${restarts.done} restart${restarts.done === 1 ? '' : 's'})`,
        ImportFailure.ImportFailed,
        { failedStep: r.failedStep, errorMessage: r.errorMessage, restarts: restarts.done },
      ),
    };
  }
  if (RUNNING_IMPORT_STATES.includes(r.status)) return { do: 'poll' };
  return {
    do: 'fail',
    failure: ApplicationFailure.nonRetryable(`the import into ${input.owner}/${input.repo} reports an unknown status ${JSON.stringify(r.status)}`, ImportFailure.ImportFailed),
  };
}

/** The failure after `detection_found_nothing`, once the cancel was tried (`leftOver`: what is left to do by hand). */
export function sourceNotFound(input: StepInput, leftOver: string | undefined): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `no source control was detected at ${input.vcsUrl}; the import into ${input.owner}/${input.repo} was ${leftOver ? 'not cancelled' : 'cancelled'}. ` +
      `${leftOver ?? 'Check the URL and start again'}`,
    ImportFailure.SourceNotFound,
    { vcsUrl: input.vcsUrl },
  );
}

/** What the workflow knows besides the record: how many authors it has listed, and whether LFS is settled. */
export interface ImportKnowledge {
  authorsKnown: number;
  lfsDecided: boolean;
}

/** Authors exist that the workflow has not listed yet: list them (`since` paging) and map them before the push. */
export function authorsToList(r: ImportRecord, known: ImportKnowledge): boolean {
  return known.authorsKnown < r.authorsCount;
}

/** Large files turned up and no `use_lfs` decision was made yet: list them and decide by the policy. */
export function largeFilesToSettle(r: ImportRecord, known: ImportKnowledge): boolean {
  return r.hasLargeFiles && !known.lfsDecided;
}

/** Whether a poll's answer ends the polling: a status that is not running, or news the workflow must act on. */
export function pollAnswerNeedsWorkflow(r: ImportRecord, known: ImportKnowledge): boolean {
  return !RUNNING_IMPORT_STATES.includes(r.status) || authorsToList(r, known) || largeFilesToSettle(r, known);
}
