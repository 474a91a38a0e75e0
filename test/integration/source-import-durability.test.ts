/**
 * The source-import workflow when things go wrong around it: cancellation, a worker restart in the
 * middle of an import, maintenance (503) windows short and long, a repository with workflows
 * enabled (422), a server without the import API (404), and input refused before any call.
 */
import { describe, expect, it } from 'vitest';
import { importStatusQuery } from '../../src/processes/source-import/workflow';
import { githubRetryPolicy } from '../../src/http/retry-policy';
import { startStack, useStack } from '../helpers/stack';
import { fixtureWithImportRepos, startImport, SVN, waitForImportStatus } from '../helpers/source-import';
import { expectCancelled, expectFailure } from '../helpers/failures';

describe('source import: durability and server trouble', () => {
  // 5 s detecting, 60 s importing, 20 s mapping, 20 s pushing at 1/10 speed: about 10 s per import.
  const stack = useStack({
    emulator: {
      fixture: fixtureWithImportRepos('durable', 10),
      imports: { timeScale: 0.1, importingMs: 60_000, mappingMs: 20_000, pushingMs: 20_000 },
    },
  });
  let nextRepo = 0;
  const repo = () => `durable-${++nextRepo}`;
  /** Starts on `worker`'s task queue (the stack's worker by default) through the stack's client. */
  const start = (input: Parameters<typeof startImport>[1], worker: { taskQueue: string } = stack) => startImport(stack, input, worker.taskQueue);
  /**
   * An import, seen importing, on a worker of its own whose HTTP policy gives up after two attempts, so the
   * workflow's own durable wait takes over when a burst of failures exhausts an activity.
   */
  const importOnImpatientWorker = async (target: string) => {
    const impatient = await stack.addWorker({ deps: { policy: { ...githubRetryPolicy, maxTransientAttempts: 2 } } });
    const outage = { initialBackoffMs: 1_000, maxBackoffMs: 1_000, budgetMs: 60_000 };
    const handle = await start({ repo: target, vcsUrl: `${SVN}/happy`, outage }, impatient);
    await waitForImportStatus(handle, (s) => s.status === 'importing', 'importing');
    return { impatient, handle };
  };

  it('cancels the import on the server when the workflow is cancelled', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: `${SVN}/happy` });
    await waitForImportStatus(handle, (s) => s.status === 'importing', 'importing');
    await handle.cancel();
    await expectCancelled(handle.result());
    expect(stack.emulator.imports.get('octo-org', target)).toBeUndefined();
    const imp = stack.emulator.imports.all().filter((i) => i.repo === target).at(-1)!;
    expect(imp.events.at(-1)?.kind).toBe('delete');
    expect(imp.pushes).toEqual([]);
    expect((await handle.query(importStatusQuery)).phase).toBe('cancelled');
  });

  it('finishes an import whose worker stopped mid-import once another worker takes over, starting it only once', async () => {
    const target = repo();
    const first = await stack.addWorker();
    const handle = await start({ repo: target, vcsUrl: `${SVN}/happy` }, first);
    const before = await waitForImportStatus(handle, (s) => s.status === 'importing' && s.polls >= 2, 'a few polls while importing');
    await first.stop();
    // The server keeps importing while no worker runs.
    await new Promise((r) => setTimeout(r, 1_000));
    const second = await stack.addWorker({ taskQueue: first.taskQueue });
    try {
      const result = await handle.result();
      expect(result.status).toBe('complete');
      expect(result.polls).toBeGreaterThan(before.polls);
      const status = await handle.query(importStatusQuery);
      expect(status.statesSeen).toEqual(['detecting', 'importing', 'mapping', 'pushing', 'complete'].filter((s) => status.statesSeen.includes(s)));
      expect(status.statesSeen.at(-1)).toBe('complete');
      const imp = stack.emulator.imports.get('octo-org', target)!;
      expect(imp.events.filter((e) => e.kind === 'put')).toHaveLength(1);
      expect(imp.pushes).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });

  it('rides out a short maintenance window (503 on every import endpoint) with backoff', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: `${SVN}/happy` });
    await waitForImportStatus(handle, (s) => s.status === 'importing', 'importing');
    const before = stack.emulator.stats.byStatus['503'] ?? 0;
    stack.emulator.imports.startMaintenance(2_500);
    const result = await handle.result();
    expect(result.status).toBe('complete');
    expect((stack.emulator.stats.byStatus['503'] ?? 0) - before).toBeGreaterThanOrEqual(1);
  });

  it('waits durably through maintenance that outlasts the activity retries', async () => {
    // The worker's HTTP policy gives up after two 503s, so the workflow's own wait takes over.
    const { impatient, handle } = await importOnImpatientWorker(repo());
    try {
      stack.emulator.imports.startMaintenance(4_000);
      await waitForImportStatus(handle, (s) => s.phase === 'waiting-out-outage', 'the maintenance wait');
      const result = await handle.result();
      expect(result.status).toBe('complete');
    } finally {
      await impatient.stop();
    }
  });

  it('waits out 502, 504 and connection resets on the import polls instead of failing (issue 8)', async () => {
    // Every failed status poll reaches the workflow's own durable wait (the outage budget): a quiet poll hands
    // it over at once (`QuietPollEnded`), a plain one once the impatient HTTP core gave up after two attempts.
    // Before issue 8's fix, the first exhausted 502 ended the workflow.
    const target = repo();
    const { impatient, handle } = await importOnImpatientWorker(target);
    try {
      const poll = /\/repos\/[^/]+\/[^/]+\/import$/;
      const before = stack.emulator.stats.faultsInjected;
      stack.emulator.setFaults([
        { method: 'GET', path: poll, kind: 'status', status: 502, times: 3 },
        { method: 'GET', path: poll, kind: 'status', status: 504, times: 3 },
        { method: 'GET', path: poll, kind: 'reset', times: 3 },
      ]);
      try {
        const result = await handle.result();
        expect(result.status).toBe('complete');
      } finally {
        stack.emulator.setFaults([]);
      }
      expect(stack.emulator.stats.faultsInjected - before).toBe(9);
      const { events } = await handle.fetchHistory();
      const handedOver = (events ?? []).filter((e) =>
        ['QuietPollEnded', 'TransientRetriesExhaustedError'].includes(e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type ?? ''),
      );
      expect(handedOver.length).toBeGreaterThanOrEqual(3);
      expect(stack.emulator.imports.get('octo-org', target)!.events.filter((e) => e.kind === 'put')).toHaveLength(1);
    } finally {
      await impatient.stop();
    }
  });

  it('fails non-retryably with the server message when the repository has workflows enabled (422)', async () => {
    const cause = await expectFailure((await start({ repo: 'with-actions', vcsUrl: `${SVN}/happy` })).result(), 'ImportStartRejected');
    expect(cause.nonRetryable).toBe(true);
    expect(cause.message).toContain('workflows enabled');
    expect(stack.emulator.imports.get('octo-org', 'with-actions')).toBeUndefined();
  });

  it('refuses invalid input before any call to the server', async () => {
    const before = stack.emulator.stats.requests;
    const cause = await expectFailure(
      (
        await start({
          repo: 'no such repo',
          vcsUrl: 'https://user:hunter2@svn.example.test/repos/happy',
          credentials: `gh${'p_'}${'h'.repeat(36)}`,
          authors: [{ remote: 'alice', name: 'Alice', email: 'nope' }],
        })
      ).result(),
      'InvalidImportInput',
    );
    expect(cause.message).toContain('repo "no such repo" is not a valid repository name');
    expect(cause.message).toContain('vcsUrl carries credentials');
    expect(cause.message).toContain('credentials looks like a secret');
    expect(cause.message).not.toContain('hhhhhhhh');
    expect(cause.message).toContain('"nope" is not an email address');
    expect(cause.message).not.toContain('hunter2');
    expect(stack.emulator.stats.requests).toBe(before);
  });

  it('says plainly that the import API is not available when the server answers 404 (retired endpoints)', async () => {
    const retired = await startStack({ emulator: { imports: { retired: true } } });
    try {
      const cause = await expectFailure((await start({ repo: 'alpha', vcsUrl: `${SVN}/happy` }, retired)).result(), 'ImportApiUnavailable');
      expect(cause.nonRetryable).toBe(true);
      expect(cause.message).toContain(`the source-import API is not available on ${retired.emulator.apiUrl}`);
      expect(cause.message).toContain('retired these endpoints on 2024-04-12');
      // One PUT: a 404 is not retried.
      expect(retired.emulator.stats.byRoute['PUT /repos/:owner/:repo/import']).toBe(1);
    } finally {
      await retired.stop();
    }
  });
});
