/**
 * The source import across runs: with a tiny per-run event budget it continues as new between polls, carrying
 * its author mappings (from the input and from an update), and completes with one start, one push and every
 * run's history within the budget's margin. And the cleanup when cancelled: the DELETE is retried past the
 * activity's own retries until it gets through.
 */
import { describe, expect, it } from 'vitest';
import { importMapAuthorUpdate, importStatusQuery } from '../../src/processes/source-import/workflow';
import { githubRetryPolicy } from '../../src/http/retry-policy';
import { useStack } from '../helpers/stack';
import { fixtureWithImportRepos, startImport, SVN, waitForImportStatus } from '../helpers/source-import';
import { expectCancelled } from '../helpers/failures';

describe('source import: continue-as-new and cleanup', () => {
  // About 13 s per import: 1 s detecting, 6 s importing, 3 s mapping, 3 s pushing.
  const stack = useStack({
    emulator: {
      fixture: fixtureWithImportRepos('runs', 5),
      imports: { timeScale: 0.1, detectingMs: 10_000, importingMs: 60_000, mappingMs: 30_000, pushingMs: 30_000 },
    },
    deps: { policy: { ...githubRetryPolicy, maxTransientAttempts: 2 } },
  });
  let nextRepo = 0;
  const repo = () => `runs-${++nextRepo}`;
  const start = (input: Parameters<typeof startImport>[1]) => startImport(stack, input);

  it('continues as new at a tiny event budget, keeps its author mappings and completes with one start and one push', async () => {
    const target = repo();
    const eventsPerRun = 60;
    const handle = await start({
      repo: target,
      vcsUrl: `${SVN}/happy`,
      eventsPerRun,
      authors: [{ remote: 'alice', name: 'Alice Liddell', email: 'alice@example.com' }],
    });
    // Sent during detection, before any author exists: the mapping must survive the runs until carol turns up.
    await waitForImportStatus(handle, (s) => s.status === 'detecting', 'detecting');
    await handle.executeUpdate(importMapAuthorUpdate, { args: [{ remote: 'carol', name: 'Carol Danvers', email: 'carol@example.com' }] });

    const result = await handle.result();
    expect(result.status).toBe('complete');
    expect(result.authorsMapped.map((a) => [a.remoteId, a.name, a.email])).toEqual([
      ['alice', 'Alice Liddell', 'alice@example.com'],
      ['carol', 'Carol Danvers', 'carol@example.com'],
    ]);
    const imp = stack.emulator.imports.get('octo-org', target)!;
    expect(imp.events.filter((e) => e.kind === 'put')).toHaveLength(1);
    const pushes = stack.emulator.imports.pushes('octo-org', target);
    expect(pushes).toHaveLength(1);
    const pushed = Object.fromEntries(pushes[0].authors.map((a) => [a.remoteId, `${a.name} <${a.email}>`]));
    expect(pushed).toMatchObject({ alice: 'Alice Liddell <alice@example.com>', carol: 'Carol Danvers <carol@example.com>' });

    // Several runs, none far past the budget (the check runs between polls: one poll's events of margin).
    const runs: { runId: string; historyLength: number }[] = [];
    for await (const execution of stack.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` })) {
      runs.push({ runId: execution.runId, historyLength: execution.historyLength });
    }
    console.info(`[continue-as-new] ${runs.length} runs, events per run: ${runs.map((r) => r.historyLength).join(', ')} (budget ${eventsPerRun})`);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    for (const run of runs) expect(run.historyLength).toBeLessThan(eventsPerRun + 40);
    const status = await handle.query(importStatusQuery);
    expect(status.runs).toBe(runs.length);
    expect(status.statesSeen.at(-1)).toBe('complete');
    expect(result.polls).toBe(status.polls);
  });

  it('on cancel retries the DELETE past the activity retries until the server takes it', async () => {
    const target = repo();
    const handle = await start({ repo: target, vcsUrl: `${SVN}/happy`, outage: { initialBackoffMs: 1_000, maxBackoffMs: 1_000 } });
    await waitForImportStatus(handle, (s) => s.status === 'importing', 'importing');
    const before = stack.emulator.stats.faultsInjected;
    // Five 502s: each activity (HTTP core giving up after 2) fails twice, so the workflow itself calls again.
    stack.emulator.setFaults([{ method: 'DELETE', path: '/import', kind: 'status', status: 502, html: true, times: 5 }]);
    try {
      await handle.cancel();
      await expectCancelled(handle.result());
    } finally {
      stack.emulator.setFaults([]);
    }
    expect(stack.emulator.stats.faultsInjected - before).toBe(5);
    expect(stack.emulator.imports.get('octo-org', target)).toBeUndefined();
    const status = await handle.query(importStatusQuery);
    expect(status.phase).toBe('cancelled');
  });
});
