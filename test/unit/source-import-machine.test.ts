/**
 * The source-import state machine (spec 002, "Import status"), in milliseconds: every status of the spec's
 * table, the restarts after `error`, the project choice by rule, and what stops a poll early (authors to
 * map, large files to settle). The workflow carries these steps out; the integration tests run them end to end.
 */
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import {
  authorsToList,
  CREDENTIAL_STATES,
  largeFilesToSettle,
  nextImportStep,
  pollAnswerNeedsWorkflow,
  sourceNotFound,
  type ImportKnowledge,
} from '../../src/processes/source-import/machine';
import {
  decideLfs,
  ImportFailure,
  RUNNING_IMPORT_STATES,
  type ImportRecord,
  type ImportStatusName,
  type ProjectChoice,
} from '../../src/processes/source-import/model';

const input = { owner: 'octo-org', repo: 'alpha', vcsUrl: 'https://svn.example.test/repos/happy' };
const record = (status: string, more: Partial<ImportRecord> = {}): ImportRecord => ({
  status,
  vcsUrl: input.vcsUrl,
  hasLargeFiles: false,
  largeFilesCount: 0,
  largeFilesSizeGb: 0,
  authorsCount: 0,
  ...more,
});
const fresh = { done: 0, max: 2 };
const knowsAll: ImportKnowledge = { authorsKnown: 0, lfsDecided: false };
const choices: ProjectChoice[] = [
  { vcs: 'tfvc', tfvcProject: 'Contoso', humanName: 'Contoso (tfs)' },
  { vcs: 'git', humanName: 'Contoso (git)' },
];

/** Every status of the spec's table, with the step the workflow takes for it (restarts left, no choice rule). */
const TABLE: Record<ImportStatusName, string> = {
  detecting: 'poll',
  importing: 'poll',
  mapping: 'poll',
  pushing: 'poll',
  complete: 'complete',
  auth_failed: 'await-credentials',
  error: 'restart',
  detection_needs_auth: 'await-credentials',
  detection_found_nothing: 'cancel-and-fail',
  detection_found_multiple: 'await-choice',
};

describe('source-import state machine', () => {
  it.each(Object.entries(TABLE))('answers %s with %s', (status, step) => {
    expect(nextImportStep(record(status, { projectChoices: choices }), input, fresh).do).toBe(step);
  });

  it('polls exactly the statuses the server works through on its own, and asks for credentials in exactly two', () => {
    const polled = Object.keys(TABLE).filter((s) => nextImportStep(record(s), input, fresh).do === 'poll');
    expect(polled).toEqual([...RUNNING_IMPORT_STATES]);
    expect([...CREDENTIAL_STATES].sort()).toEqual(['auth_failed', 'detection_needs_auth']);
  });

  it('restarts after error while restarts are left, then fails as ImportFailed naming the step and message', () => {
    const failed = record('error', { failedStep: 'import', errorMessage: 'svn: E170013 unable to connect' });
    expect(nextImportStep(failed, input, { done: 0, max: 2 })).toEqual({ do: 'restart' });
    expect(nextImportStep(failed, input, { done: 1, max: 2 })).toEqual({ do: 'restart' });
    const step = nextImportStep(failed, input, { done: 2, max: 2 });
    expect(step.do).toBe('fail');
    const failure = (step as { failure: ApplicationFailure }).failure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: ImportFailure.ImportFailed, nonRetryable: true });
    expect(failure.message).toContain('failed at step import: svn: E170013 unable to connect (after 2 restarts)');
    expect(failure.details).toEqual([{ failedStep: 'import', errorMessage: 'svn: E170013 unable to connect', restarts: 2 }]);
  });

  it('fails at once on error when no restart is allowed, saying what the server did not give', () => {
    const step = nextImportStep(record('error'), input, { done: 0, max: 0 });
    expect(step.do).toBe('fail');
    expect((step as { failure: ApplicationFailure }).failure.message).toContain('failed at step (not given): (no message) (after 0 restarts)');
  });

  it('picks the one project the input rule matches, and waits for a person when it matches none or several', () => {
    const multiple = record('detection_found_multiple', { projectChoices: choices });
    expect(nextImportStep(multiple, { ...input, projectChoice: { vcs: 'git' } }, fresh)).toEqual({ do: 'choose', choice: choices[1] });
    expect(nextImportStep(multiple, { ...input, projectChoice: { humanName: 'Contoso (tfs)' } }, fresh)).toEqual({ do: 'choose', choice: choices[0] });
    expect(nextImportStep(multiple, { ...input, projectChoice: { vcs: 'mercurial' } }, fresh)).toEqual({ do: 'await-choice' });
    expect(nextImportStep(multiple, { ...input, projectChoice: { humanName: undefined } }, fresh)).toEqual({ do: 'await-choice' });
    expect(nextImportStep(record('detection_found_multiple'), { ...input, projectChoice: { vcs: 'git' } }, fresh)).toEqual({ do: 'await-choice' });
  });

  it('fails detection_found_nothing as SourceNotFound, saying whether the cancel on the server worked', () => {
    const cancelled = sourceNotFound(input, undefined);
    expect(cancelled).toMatchObject({ type: ImportFailure.SourceNotFound, nonRetryable: true, details: [{ vcsUrl: input.vcsUrl }] });
    expect(cancelled.message).toContain(`no source control was detected at ${input.vcsUrl}`);
    expect(cancelled.message).toContain('was cancelled. Check the URL and start again');
    const leftOver = sourceNotFound(input, 'cancel it by hand with DELETE /repos/octo-org/alpha/import');
    expect(leftOver.message).toContain('was not cancelled');
    expect(leftOver.message).toContain('DELETE /repos/octo-org/alpha/import');
  });

  it('fails on a status the spec does not name instead of polling it forever', () => {
    const step = nextImportStep(record('paused'), input, fresh);
    expect(step.do).toBe('fail');
    expect((step as { failure: ApplicationFailure }).failure).toMatchObject({ type: ImportFailure.ImportFailed, nonRetryable: true });
    expect((step as { failure: ApplicationFailure }).failure.message).toContain('unknown status "paused"');
  });

  it('walks the normal progression detecting → importing → mapping → pushing → complete', () => {
    const steps = ['detecting', 'importing', 'mapping', 'pushing', 'complete'].map((s) => nextImportStep(record(s), input, fresh).do);
    expect(steps).toEqual(['poll', 'poll', 'poll', 'poll', 'complete']);
  });
});

describe('what stops a poll early', () => {
  it('lists authors as soon as the server has more than the workflow knows, so mappings land before the push', () => {
    const importing = record('importing', { authorsCount: 3 });
    expect(authorsToList(importing, { authorsKnown: 0, lfsDecided: false })).toBe(true);
    expect(authorsToList(importing, { authorsKnown: 2, lfsDecided: false })).toBe(true);
    expect(authorsToList(importing, { authorsKnown: 3, lfsDecided: false })).toBe(false);
    expect(pollAnswerNeedsWorkflow(importing, { authorsKnown: 2, lfsDecided: false })).toBe(true);
    expect(pollAnswerNeedsWorkflow(importing, { authorsKnown: 3, lfsDecided: false })).toBe(false);
  });

  it('settles large files once: listed and decided by the policy, then no longer news', () => {
    const large = record('importing', { hasLargeFiles: true, largeFilesCount: 1, largeFilesSizeGb: 0.2 });
    expect(largeFilesToSettle(large, { authorsKnown: 0, lfsDecided: false })).toBe(true);
    expect(pollAnswerNeedsWorkflow(large, { authorsKnown: 0, lfsDecided: false })).toBe(true);
    expect(largeFilesToSettle(large, { authorsKnown: 0, lfsDecided: true })).toBe(false);
    expect(pollAnswerNeedsWorkflow(large, { authorsKnown: 0, lfsDecided: true })).toBe(false);
    // The preference the settled decision carries: the policy's, by the files' total size.
    const files = [{ refName: 'refs/heads/main', path: 'big.iso', oid: 'a'.repeat(40), size: 200e6 }];
    expect(decideLfs({ auto: { maxTotalBytes: 1e9 } }, files).useLfs).toBe('opt_in');
    expect(decideLfs({ auto: { maxTotalBytes: 1e8 } }, files).useLfs).toBe('opt_out');
  });

  it('ends the polling at every status that is not running, and keeps polling a running one with nothing new', () => {
    for (const status of Object.keys(TABLE)) {
      const running = RUNNING_IMPORT_STATES.includes(status);
      expect(pollAnswerNeedsWorkflow(record(status), knowsAll)).toBe(!running);
    }
  });
});
