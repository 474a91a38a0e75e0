/**
 * Issue 13 beyond the org migration: the equivalent malformed answers for source import (the PUT that starts
 * it), a Google operation (a log bucket's createAsync), an activity feed (a page) and webhook repair (the
 * deliveries list and a redelivery). Each ends in the documented way, with the requests it made counted
 * from the emulator's request log and printed as a table.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { sourceImport } from '../../src/workflows/source-import';
import { logBucketCreate } from '../../src/workflows/log-bucket';
import { feedPollRun } from '../../src/workflows/feed-poll';
import { hookRepair } from '../../src/workflows/hook-repair';
import { feedCursorWorkflowId } from '../../src/common/feeds';
import type { FaultRule } from '../../src/emulator/faults';
import { useStack } from '../helpers/stack';
import { fixtureWithImportRepos } from '../helpers/source-import';
import { cleanUp } from '../helpers/schedules';
import { expectFailure } from '../helpers/failures';

const FAST_POLL = { initialIntervalMs: 1_000, maxIntervalMs: 1_000, backoffFactor: 1, timeoutMs: 5 * 60_000 };
const QUICK_OUTAGE = { initialBackoffMs: 1_000, maxBackoffMs: 1_000, budgetMs: 120_000 };
const HOUR = 3_600_000;
const outcomes: string[] = [];
const cursors: string[] = [];
let seq = 0;

describe('malformed answers in the other processes (issue 13)', () => {
  const s = useStack({
    emulator: {
      fixture: fixtureWithImportRepos('malformed', 5),
      imports: { timeScale: 0.02 },
      google: { buckets: { scheduledMs: 300, waitingForPermissionsMs: 300, runningMs: 600 } },
      feeds: { eventsPerMinute: 0, initialEvents: 3, pollIntervalSeconds: 1 },
    },
  });
  afterAll(async () => {
    console.log(`\nmalformed answers — other processes\n${outcomes.join('\n')}\n`);
    await cleanUp(s.client, [], cursors);
  });

  /** Runs one workflow against these faults and records case → outcome, time and requests. */
  async function run<T>(process: string, name: string, faults: FaultRule[], go: () => Promise<T>, describeResult: (r: T) => string) {
    s.emulator.setFaults(faults);
    const logStart = s.emulator.requestLog.length;
    const started = Date.now();
    let result: T | undefined;
    let error: unknown;
    try {
      result = await go();
    } catch (err) {
      error = err;
    }
    const ms = Date.now() - started;
    s.emulator.setFaults([]);
    const requests = s.emulator.requestLog.slice(logStart).map((r) => `${r.method} ${r.path}`);
    expect(requests.filter((r) => /\/(null|undefined|NaN)(\/|$)/.test(r))).toEqual([]);
    outcomes.push(`| ${process} | ${name} | ${result !== undefined ? `COMPLETED ${describeResult(result)}` : `FAILED ${typeOf(error)}`} | ${ms} ms | ${requests.length} requests |`);
    return { result, error, requests };
  }

  it('source import: PUT answered 201 with truncated JSON (import started): the PUT is repeated, the server answers the same import, it completes', async () => {
    const repo = `malformed-${++seq}`;
    const faults: FaultRule[] = [{ kind: 'truncated-json', method: 'PUT', path: '/repos/:owner/:repo/import', afterProcessing: true, times: 1 }];
    const { result, requests } = await run('source import', 'PUT 201 truncated JSON', faults, () =>
      s.client.workflow.execute(sourceImport, { taskQueue: s.taskQueue, workflowId: `malformed-import-${repo}-${Date.now()}`, args: [{ owner: 'octo-org', repo, vcsUrl: 'https://svn.example.test/repos/happy', poll: FAST_POLL }] }),
      (r) => r.status,
    );
    expect(result?.status).toBe('complete');
    expect(s.emulator.imports.status('octo-org', repo)).toBe('complete');
    expect(requests.filter((r) => r === `PUT /repos/octo-org/${repo}/import`).length).toBeGreaterThanOrEqual(2);
  });

  it('source import: PUT answered 200 with an HTML page (nothing started): sent again, it completes', async () => {
    const repo = `malformed-${++seq}`;
    const faults: FaultRule[] = [{ kind: 'html-page', method: 'PUT', path: '/repos/:owner/:repo/import', status: 200, times: 2 }];
    const { result } = await run('source import', 'PUT 200 HTML page (twice)', faults, () =>
      s.client.workflow.execute(sourceImport, { taskQueue: s.taskQueue, workflowId: `malformed-import-${repo}-${Date.now()}`, args: [{ owner: 'octo-org', repo, vcsUrl: 'https://svn.example.test/repos/happy', poll: FAST_POLL }] }),
      (r) => r.status,
    );
    expect(result?.status).toBe('complete');
  });

  it.each<[string, FaultRule]>([
    ['createAsync 200 truncated JSON (created)', { kind: 'truncated-json', method: 'POST', path: 'buckets:createAsync', afterProcessing: true, times: 1 }],
    ['createAsync 200 without name (created)', { kind: 'missing-field', field: 'name', method: 'POST', path: 'buckets:createAsync', afterProcessing: true, times: 1 }],
    ['createAsync 200 HTML page (nothing created)', { kind: 'html-page', method: 'POST', path: 'buckets:createAsync', status: 200, times: 1 }],
  ])('log bucket create: %s — the bucket is created exactly once and adopted', async (name, fault) => {
    const parent = 'projects/demo-project/locations/global';
    const bucketId = `malformed-${Date.now().toString(36)}-${++seq}`;
    const bucket = `${parent}/buckets/${bucketId}`;
    const { result, requests } = await run('Google log bucket create', name, [fault], () =>
      s.client.workflow.execute(logBucketCreate, { taskQueue: s.taskQueue, workflowId: `malformed-bucket-${bucketId}`, args: [{ parent, bucketId, poll: FAST_POLL, recoveryGraceMs: 1_000 }] }),
      (r) => r.state,
    );
    expect(result).toMatchObject({ bucket, state: 'SUCCEEDED' });
    const creates = [...s.emulator.googleState.buckets.operations.values()].filter((op) => op.kind === 'create' && op.bucketName === bucket);
    expect(creates).toHaveLength(1);
    const posts = requests.filter((r) => r.startsWith('POST') && r.includes('buckets:createAsync')).length;
    expect(posts).toBe(fault.kind === 'html-page' ? 2 : 1);
  });

  // A feed each: a feed already polled is asked conditionally, and its 304 has no body to mangle.
  const pollFeed = (repo: string, name: string, faults: FaultRule[]) => {
    const feed = `/repos/octo-org/${repo}/events`;
    s.emulator.feeds.ensure(feed);
    cursors.push(feedCursorWorkflowId(feed));
    return run('activity feed poll', name, faults, () =>
      s.client.workflow.execute(feedPollRun, {
        taskQueue: s.taskQueue,
        workflowId: `malformed-feed-${Date.now()}-${++seq}`,
        args: [{ feed, sink: { kind: 'file' }, origin: 'manual', graceMs: 5_000, outage: { initialBackoffMs: 1_000, maxBackoffMs: 1_000, budgetMs: 3_000 } }],
      }),
      (r) => r.kind,
    );
  };

  it('activity feed: page 1 answered 200 with an HTML page (once) is polled again and delivered', async () => {
    const { result } = await pollFeed('alpha', 'page 1 200 HTML page (once)', [{ kind: 'html-page', method: 'GET', path: '/events', status: 200, times: 1 }]);
    expect(result?.kind).toBe('delivered');
  });

  it('activity feed: page 1 answered with truncated JSON every time is an outage: OutageBudgetExhausted naming the malformed answer, nothing delivered', async () => {
    const { error } = await pollFeed('beta', 'page 1 truncated JSON (every time)', [{ kind: 'truncated-json', method: 'GET', path: '/events', afterProcessing: true }]);
    const failure = await expectFailure(Promise.reject(error), 'OutageBudgetExhausted');
    expect(failure.message).toContain('MalformedAnswer');
    expect(failure.message).toContain('the body is not valid JSON');
  });

  it('webhook repair: the deliveries list answered 200 with an HTML page (twice) is waited out; each failed guid is redelivered once', async () => {
    const { id: hookId } = s.emulator.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guids = [0, 1].map((i) => s.emulator.hooks.addDelivery(hookId, { at: Date.now() - HOUR + i, statusCode: 502 }).guid);
    const before = s.emulator.hooks.redeliveries().length;
    const { result } = await run('webhook repair', 'deliveries list 200 HTML page (twice)', [{ kind: 'html-page', method: 'GET', path: '/deliveries', status: 200, times: 2 }], () =>
      s.client.workflow.execute(hookRepair, { taskQueue: s.taskQueue, workflowId: `malformed-hook-${hookId}-${Date.now()}`, args: [{ target: { org: 'octo-org' }, hookId, outage: QUICK_OUTAGE }] }),
      (r) => `redelivered ${r.counts.redelivered}`,
    );
    expect(result?.counts).toMatchObject({ failed: 2, redelivered: 2, notAccepted: 0 });
    expect(s.emulator.hooks.redeliveries().slice(before).map((r) => r.guid).sort()).toEqual([...guids].sort());
  });

  it.each<[string, FaultRule, number]>([
    ['redelivery 200 HTML page after acting (once)', { kind: 'html-page', method: 'POST', path: '/attempts', status: 200, afterProcessing: true, times: 1 }, 1],
    ['redelivery 200 HTML page before acting (once)', { kind: 'html-page', method: 'POST', path: '/attempts', status: 200, times: 1 }, 2],
  ])('webhook repair: %s is an unknown outcome: the redelivery is looked up, adopted if made, sent again if not — never twice', async (name, fault, posts) => {
    const { id: hookId } = s.emulator.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guid = s.emulator.hooks.addDelivery(hookId, { at: Date.now() - HOUR, statusCode: 502 }).guid;
    const before = s.emulator.hooks.redeliveries().length;
    const { result, requests } = await run('webhook repair', name, [fault], () =>
      s.client.workflow.execute(hookRepair, { taskQueue: s.taskQueue, workflowId: `malformed-hook-${hookId}-${Date.now()}`, args: [{ target: { org: 'octo-org' }, hookId, outage: QUICK_OUTAGE }] }),
      (r) => `redelivered ${r.counts.redelivered}, server made ${s.emulator.hooks.redeliveries().length - before} redelivery`,
    );
    expect(result?.counts).toMatchObject({ failed: 1, redelivered: 1, notAccepted: 0 });
    expect(result?.allAccepted).toBe(true);
    expect(s.emulator.hooks.redeliveries().slice(before).map((r) => r.guid)).toEqual([guid]);
    expect(requests.filter((r) => r.startsWith('POST') && r.endsWith('/attempts'))).toHaveLength(posts);
  });
});

function typeOf(err: unknown): string {
  for (let e = err, i = 0; e && i < 10; e = (e as { cause?: unknown }).cause, i++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string') return `${type}: ${(e as Error).message.slice(0, 160)}`;
  }
  return String(err);
}
