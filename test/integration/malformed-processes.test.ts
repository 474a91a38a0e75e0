/**
 * Malformed inputs (issue 35): every workflow type the worker bundles, started through the client with null, a
 * string, a number, an array, `{}`, a 10,000-deep and a huge object, ends FAILED with its process's typed,
 * non-retryable `Invalid…Input` in its first workflow task, with no activity scheduled and no request sent
 * (the last describe block).
 *
 * Issue 13 beyond the org migration: the equivalent malformed answers for source import (the PUT that starts
 * it), Google operations (a log bucket's createAsync, an API key's DELETE and its operation, a DNS change's
 * POST and its GET), an activity feed (a page) and webhook repair (the deliveries list and a redelivery). Each ends in the documented way, with the requests it made counted
 * from the emulator's request log and printed as a table.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ApplicationFailure, RawValue } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { sourceImport } from '../../src/processes/source-import/workflow';
import { logBucketCreate } from '../../src/processes/google-operation/log-bucket';
import { feedPollRun } from '../../src/processes/feed-poll/workflow';
import { hookRepair } from '../../src/processes/hook-repair/workflow';
import { apiKeyDelete } from '../../src/processes/google-operation/apikey-delete';
import { dnsChange } from '../../src/processes/google-operation/dns-change';
import { defaultGoogleFixture } from '../../packages/emulator/src/google/fixture';
import { GoogleOperationFailure } from '../../src/processes/google-operation/model';
import { feedCursorWorkflowId } from '../../src/processes/feed-poll/model';
import type { FaultRule } from '../../packages/emulator/src/faults';
import type { EmulatorOptions } from '@longhaul/emulator';
import { useStack, useTimeSkippingStack, type TestStack } from '../helpers/stack';
import { fixtureWithImportRepos } from '../helpers/source-import';
import { cleanUp } from '../helpers/schedules';
import { expectFailure } from '../helpers/failures';
import { eventTypeCounts, fetchHistory } from '../helpers/history';
import { eventually } from '../helpers/wait';
import { FAST_POLL_5_MIN, QUICK_OUTAGE_BUDGET, SPENT_OUTAGE_BUDGET } from '../helpers/presets';

const HOUR = 3_600_000;
const outcomes: string[] = [];
const cursors: string[] = [];
let seq = 0;

/** The emulator of both stacks below. */
const EMULATOR: EmulatorOptions = {
  // malformed-6 and -7 for the feeds: a feed's cursor id is shared by every worker of a server, so polling octo-org's
  // alpha or beta would meet the feed test files' cursors of the same feeds if these cases ran on the dev server.
  fixture: fixtureWithImportRepos('malformed', 7),
  imports: { timeScale: 0.02 },
  google: {
    buckets: { scheduledMs: 300, waitingForPermissionsMs: 300, runningMs: 600 },
    apikeys: { deleteOperationMs: 700 },
    dns: { changeMs: 800 },
    // A key per API-key case: a deleted key cannot be deleted again.
    fixture: { ...defaultGoogleFixture(), apiKeys: [1, 2, 3].map((n) => ({ project: 'demo-project', keyId: `malformed-key-${n}`, displayName: `Malformed key ${n}` })) },
  },
  feeds: { eventsPerMinute: 0, initialEvents: 3, pollIntervalSeconds: 1 },
};

afterAll(() => {
  console.log(`\nmalformed answers — other processes\n${outcomes.join('\n')}\n`);
});

/** Runs one workflow on `s` against these faults and records case → outcome, time and requests. */
async function run<T>(s: TestStack, process: string, name: string, faults: FaultRule[], go: () => Promise<T>, describeResult: (r: T) => string) {
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

// On the environment's time: outage waits, polls and the emulated operations cost no wall time.
describe('malformed answers in the other processes (issue 13)', () => {
  const s = useTimeSkippingStack({ emulator: EMULATOR });
  afterAll(async () => {
    await cleanUp(s.client, [], cursors);
  });

  it('source import: PUT answered 201 with truncated JSON (import started): the PUT is repeated, the server answers the same import, it completes', async () => {
    const repo = `malformed-${++seq}`;
    const faults: FaultRule[] = [{ kind: 'truncated-json', method: 'PUT', path: '/repos/:owner/:repo/import', afterProcessing: true, times: 1 }];
    const { result, requests } = await run(s, 'source import', 'PUT 201 truncated JSON', faults, () =>
      s.client.workflow.execute(sourceImport, { taskQueue: s.taskQueue, workflowId: `malformed-import-${repo}-${Date.now()}`, args: [{ owner: 'octo-org', repo, vcsUrl: 'https://svn.example.test/repos/happy', poll: FAST_POLL_5_MIN }] }),
      (r) => r.status,
    );
    expect(result?.status).toBe('complete');
    expect(s.emulator.imports.status('octo-org', repo)).toBe('complete');
    expect(requests.filter((r) => r === `PUT /repos/octo-org/${repo}/import`).length).toBeGreaterThanOrEqual(2);
  });

  it('source import: PUT answered 200 with an HTML page (nothing started): sent again, it completes', async () => {
    const repo = `malformed-${++seq}`;
    const faults: FaultRule[] = [{ kind: 'html-page', method: 'PUT', path: '/repos/:owner/:repo/import', status: 200, times: 2 }];
    const { result } = await run(s, 'source import', 'PUT 200 HTML page (twice)', faults, () =>
      s.client.workflow.execute(sourceImport, { taskQueue: s.taskQueue, workflowId: `malformed-import-${repo}-${Date.now()}`, args: [{ owner: 'octo-org', repo, vcsUrl: 'https://svn.example.test/repos/happy', poll: FAST_POLL_5_MIN }] }),
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
    const { result, requests } = await run(s, 'Google log bucket create', name, [fault], () =>
      s.client.workflow.execute(logBucketCreate, { taskQueue: s.taskQueue, workflowId: `malformed-bucket-${bucketId}`, args: [{ parent, bucketId, poll: FAST_POLL_5_MIN, recoveryGraceMs: 1_000 }] }),
      (r) => r.state,
    );
    expect(result).toMatchObject({ bucket, state: 'SUCCEEDED' });
    const creates = [...s.emulator.google.buckets.operations.values()].filter((op) => op.kind === 'create' && op.bucketName === bucket);
    expect(creates).toHaveLength(1);
    const posts = requests.filter((r) => r.startsWith('POST') && r.includes('buckets:createAsync')).length;
    expect(posts).toBe(fault.kind === 'html-page' ? 2 : 1);
  });

  // API-key deletion: the DELETE is not idempotent (a second one fails), so a lost answer is looked up by the key's deleteTime.
  const keyName = (n: number) => `projects/demo-project/locations/global/keys/malformed-key-${n}`;
  const deleteKey = (n: number, name: string, faults: FaultRule[], outage = QUICK_OUTAGE_BUDGET) =>
    run(s, 'Google API key delete', name, faults, () =>
      s.client.workflow.execute(apiKeyDelete, { taskQueue: s.taskQueue, workflowId: `malformed-apikey-${n}-${Date.now()}`, args: [{ name: keyName(n), poll: FAST_POLL_5_MIN, outage, recoveryGraceMs: 1_000 }] }),
      (r) => (r.operation ? `deleted, operation polled` : 'deleted, adopted from the key'),
    );
  const KEYS_API = '/v2';
  const deletesIn = (requests: string[]) => requests.filter((r) => r.startsWith('DELETE ') && r.includes('/keys/'));
  const operationReadsIn = (requests: string[]) => requests.filter((r) => r.startsWith(`GET ${KEYS_API}/operations/`));

  it('API key delete: DELETE answered 200 with truncated JSON after deleting: the key is read back, its deleteTime adopted, no second DELETE, no operation id guessed', async () => {
    const { result, requests } = await deleteKey(1, 'DELETE 200 truncated JSON (deleted)', [{ kind: 'truncated-json', method: 'DELETE', path: '/keys/', afterProcessing: true, times: 1 }]);
    expect(result?.deleteTime).toBeDefined();
    expect(result?.note).toContain('had already deleted it');
    expect(s.emulator.google.apikeys.isDeleted(keyName(1))).toBe(true);
    expect(deletesIn(requests)).toHaveLength(1);
    expect(requests).toContain(`GET ${KEYS_API}/${keyName(1)}`);
    // The operation's name was in the lost answer: nothing may be polled with a name longhaul never read.
    expect(operationReadsIn(requests)).toEqual([]);
  });

  it('API key delete: the operation answered 200 with an HTML page (once) is read again and the deletion completes', async () => {
    const { result, requests } = await deleteKey(2, 'GET operation 200 HTML page (once)', [{ kind: 'html-page', method: 'GET', path: '/operations/', status: 200, times: 1 }]);
    expect(result?.operation).toMatch(/^operations\//);
    expect(result?.key).toMatchObject({ name: keyName(2) });
    expect(deletesIn(requests)).toHaveLength(1);
    const reads = operationReadsIn(requests);
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect(new Set(reads)).toEqual(new Set([`GET ${KEYS_API}/${result?.operation}`]));
  });

  it('API key delete: the operation answered with an HTML page every time ends within the outage budget naming the malformed answer; the key was deleted once', async () => {
    const { error, requests } = await deleteKey(3, 'GET operation 200 HTML page (every time)', [{ kind: 'html-page', method: 'GET', path: '/operations/', status: 200 }], SPENT_OUTAGE_BUDGET);
    const failure = await expectFailure(Promise.reject(error), GoogleOperationFailure.PollFailed);
    expect(failure.message).toContain('malformed answer');
    expect(chainText(error)).toContain('MalformedAnswer');
    expect(chainText(error)).toContain('an HTML page');
    expect(requests.length).toBeLessThan(30);
    expect(s.emulator.google.apikeys.isDeleted(keyName(3))).toBe(true);
    expect(deletesIn(requests)).toHaveLength(1);
    expect(new Set(operationReadsIn(requests)).size).toBe(1);
  });

  // DNS change: the POST is not idempotent (a re-sent addition conflicts with itself), so a lost answer is looked up in the change list.
  let dnsSeq = 0;
  const changeTo = (name: string, faults: FaultRule[], outage = QUICK_OUTAGE_BUDGET) => {
    const added = { name: `malformed-${Date.now().toString(36)}-${++dnsSeq}.demo.example.com.`, type: 'A', ttl: 300, rrdatas: ['192.0.2.40'] };
    const zone = s.emulator.google.dns.zones.get('demo-project/demo-zone')!;
    const changesBefore = zone.changes.length;
    return run(s, 'Google DNS change', name, faults, () =>
      s.client.workflow.execute(dnsChange, { taskQueue: s.taskQueue, workflowId: `malformed-dns-${dnsSeq}-${Date.now()}`, args: [{ project: 'demo-project', zone: 'demo-zone', additions: [added], poll: FAST_POLL_5_MIN, outage, recoveryGraceMs: 1_000 }] }),
      (r) => `change ${r.changeId} ${r.status}`,
    ).then((outcome) => ({ ...outcome, added, made: zone.changes.slice(changesBefore), zoneHas: () => zone.rrsets.some((r) => r.name === added.name) }));
  };
  const postsIn = (requests: string[]) => requests.filter((r) => r.startsWith('POST ') && r.endsWith('/changes'));
  const changeReadsIn = (requests: string[]) => requests.filter((r) => r.startsWith('GET ') && r.includes('/changes/'));

  it('DNS change: POST answered 200 with truncated JSON after applying: the change is found in the list and adopted, never posted twice', async () => {
    const { result, requests, made, zoneHas } = await changeTo('POST change 200 truncated JSON (applied)', [{ kind: 'truncated-json', method: 'POST', path: '/changes', afterProcessing: true, times: 1 }]);
    expect(result?.status).toBe('done');
    expect(made).toHaveLength(1);
    expect(result?.changeId).toBe(made[0].id);
    expect(zoneHas()).toBe(true);
    expect(postsIn(requests)).toHaveLength(1);
    expect(requests.some((r) => r.startsWith('GET ') && r.endsWith('/changes'))).toBe(true);
    // Only the change found in the list is ever read by id.
    expect(changeReadsIn(requests).every((r) => r.endsWith(`/changes/${made[0].id}`))).toBe(true);
  });

  it('DNS change: a change read without status (once) is read again and the change completes', async () => {
    const { result, requests, made } = await changeTo('GET change 200 without status (once)', [{ kind: 'missing-field', field: 'status', method: 'GET', path: '/changes/:changeId', afterProcessing: true, times: 1 }]);
    expect(result?.status).toBe('done');
    expect(made).toHaveLength(1);
    expect(postsIn(requests)).toHaveLength(1);
    const reads = changeReadsIn(requests);
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect(reads.every((r) => r.endsWith(`/changes/${made[0].id}`))).toBe(true);
  });

  it('DNS change: a change read without status every time ends within the outage budget naming the missing field; the change was posted once', async () => {
    const { error, requests, made, zoneHas } = await changeTo('GET change 200 without status (every time)', [{ kind: 'missing-field', field: 'status', method: 'GET', path: '/changes/:changeId', afterProcessing: true }], SPENT_OUTAGE_BUDGET);
    const failure = await expectFailure(Promise.reject(error), GoogleOperationFailure.PollFailed);
    expect(failure.message).toContain('malformed answer');
    expect(chainText(error)).toContain('MalformedAnswer');
    expect(chainText(error)).toContain('has no status');
    expect(requests.length).toBeLessThan(30);
    expect(made).toHaveLength(1);
    expect(zoneHas()).toBe(true);
    expect(postsIn(requests)).toHaveLength(1);
    expect(changeReadsIn(requests).every((r) => r.endsWith(`/changes/${made[0].id}`))).toBe(true);
  });

  // A feed each: a feed already polled is asked conditionally, and its 304 has no body to mangle.
  const pollFeed = (repo: string, name: string, faults: FaultRule[]) => {
    const feed = `/repos/octo-org/${repo}/events`;
    s.emulator.feeds.ensure(feed);
    cursors.push(feedCursorWorkflowId(feed));
    return run(s, 'activity feed poll', name, faults, () =>
      s.client.workflow.execute(feedPollRun, {
        taskQueue: s.taskQueue,
        workflowId: `malformed-feed-${Date.now()}-${++seq}`,
        args: [{ feed, sink: { kind: 'file' }, origin: 'manual', graceMs: 5_000, outage: SPENT_OUTAGE_BUDGET }],
      }),
      (r) => r.kind,
    );
  };

  it('activity feed: page 1 answered 200 with an HTML page (once) is polled again and delivered', async () => {
    const { result } = await pollFeed('malformed-6', 'page 1 200 HTML page (once)', [{ kind: 'html-page', method: 'GET', path: '/events', status: 200, times: 1 }]);
    expect(result?.kind).toBe('delivered');
  });

  it('activity feed: page 1 answered with truncated JSON every time is an outage: OutageBudgetExhausted naming the malformed answer, nothing delivered', async () => {
    const { error } = await pollFeed('malformed-7', 'page 1 truncated JSON (every time)', [{ kind: 'truncated-json', method: 'GET', path: '/events', afterProcessing: true }]);
    const failure = await expectFailure(Promise.reject(error), 'OutageBudgetExhausted');
    expect(failure.message).toContain('MalformedAnswer');
    expect(failure.message).toContain('the body is not valid JSON');
  });
});

// On the dev server: webhook repair reads its own Schedule, which the time-skipping test server does not have.
describe('malformed answers in webhook repair (issue 13)', () => {
  const s = useStack({ emulator: EMULATOR });

  it('webhook repair: the deliveries list answered 200 with an HTML page (twice) is waited out; each failed guid is redelivered once', async () => {
    const { id: hookId } = s.emulator.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guids = [0, 1].map((i) => s.emulator.hooks.addDelivery(hookId, { at: Date.now() - HOUR + i, statusCode: 502 }).guid);
    const before = s.emulator.hooks.redeliveries().length;
    const { result } = await run(s, 'webhook repair', 'deliveries list 200 HTML page (twice)', [{ kind: 'html-page', method: 'GET', path: '/deliveries', status: 200, times: 2 }], () =>
      s.client.workflow.execute(hookRepair, { taskQueue: s.taskQueue, workflowId: `malformed-hook-${hookId}-${Date.now()}`, args: [{ target: { org: 'octo-org' }, hookId, outage: QUICK_OUTAGE_BUDGET }] }),
      (r) => `redelivered ${r.counts.redelivered}`,
    );
    expect(result?.counts).toMatchObject({ failed: 2, redelivered: 2, notAccepted: 0 });
    expect(s.emulator.hooks.redeliveries().slice(before).map((r) => r.guid).sort()).toEqual([...guids].sort());
  });

  it.each<[string, FaultRule, number]>([
    ['redelivery 200 HTML page after acting (once)', { kind: 'html-page', method: 'POST', path: '/attempts', status: 200, afterProcessing: true, times: 1 }, 1],
    ['redelivery 200 HTML page before acting (once)', { kind: 'html-page', method: 'POST', path: '/attempts', status: 200, times: 1 }, 2],
  ])('webhook repair: %s is an unknown outcome: the redelivery is looked up until it settles (it is asynchronous), adopted if made, sent again if not — never twice', async (name, fault, posts) => {
    const { id: hookId } = s.emulator.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guid = s.emulator.hooks.addDelivery(hookId, { at: Date.now() - HOUR, statusCode: 502 }).guid;
    const before = s.emulator.hooks.redeliveries().length;
    const { result, requests } = await run(s, 'webhook repair', name, [fault], () =>
      s.client.workflow.execute(hookRepair, { taskQueue: s.taskQueue, workflowId: `malformed-hook-${hookId}-${Date.now()}`, args: [{ target: { org: 'octo-org' }, hookId, outage: QUICK_OUTAGE_BUDGET, redeliverySettleMs: 8_000 }] }),
      (r) => `redelivered ${r.counts.redelivered}, server made ${s.emulator.hooks.redeliveries().length - before} redelivery`,
    );
    expect(result?.counts).toMatchObject({ failed: 1, redelivered: 1, notAccepted: 0 });
    expect(result?.allAccepted).toBe(true);
    expect(s.emulator.hooks.redeliveries().slice(before).map((r) => r.guid)).toEqual([guid]);
    expect(requests.filter((r) => r.startsWith('POST') && r.endsWith('/attempts'))).toHaveLength(posts);
  });

  it('webhook repair: after an unknown outcome the redelivery is found on a later page, when a busy hook listed more than a page since it was sent — never sent twice', async () => {
    const { id: hookId } = s.emulator.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook' });
    const guid = s.emulator.hooks.addDelivery(hookId, { at: Date.now() - HOUR, statusCode: 502 }).guid;
    const before = s.emulator.hooks.redeliveries().length;
    s.emulator.setFaults([{ kind: 'html-page', method: 'POST', path: '/attempts', status: 200, afterProcessing: true, times: 1 }]);
    const handle = await s.client.workflow.start(hookRepair, {
      taskQueue: s.taskQueue,
      workflowId: `malformed-hook-pages-${hookId}-${Date.now()}`,
      args: [{ target: { org: 'octo-org' }, hookId, outage: QUICK_OUTAGE_BUDGET, redeliverySettleMs: 30_000 }],
    });
    // Once the redelivery is listed (the emulator makes it a few seconds after the POST), 150 newer deliveries
    // push it off page 1 (100 per page) before the run's next look: only the pages after page 1 hold it.
    const redelivered = await eventually(() => s.emulator.hooks.deliveries(hookId).find((d) => d.guid === guid && d.redelivery), 'the redelivery to be listed', 60_000, 50);
    for (let i = 0; i < 150; i++) s.emulator.hooks.addDelivery(hookId, { at: Date.now(), statusCode: 200 });
    expect(s.emulator.hooks.deliveries(hookId).filter((d) => d.id > redelivered.id)).toHaveLength(150);
    const result = await handle.result();
    s.emulator.setFaults([]);
    expect(result.counts).toMatchObject({ failed: 1, redelivered: 1, notAccepted: 0 });
    expect(s.emulator.hooks.redeliveries().slice(before).map((r) => r.guid)).toEqual([guid]);
  });
});

function typeOf(err: unknown): string {
  for (let e = err, i = 0; e && i < 10; e = (e as { cause?: unknown }).cause, i++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string') return `${type}: ${(e as Error).message.slice(0, 160)}`;
  }
  return String(err);
}

/** Every message and type down the failure's cause chain, for asserting what a failure names. */
function chainText(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, i = 0; e && i < 10; e = (e as { cause?: unknown }).cause, i++) {
    parts.push(`${(e as { type?: unknown }).type ?? ''} ${(e as Error).message ?? ''}`);
  }
  return parts.join(' | ');
}

/** Every workflow type the worker bundles, and the failure type its process refuses a malformed input with. */
const INPUT_REFUSALS: [workflowType: string, failureType: string][] = [
  ['orgMigration', 'InvalidMigrationInput'],
  ['sourceImport', 'InvalidImportInput'],
  ['apiKeyDelete', 'InvalidGoogleOperationInput'],
  ['logBucketCreate', 'InvalidGoogleOperationInput'],
  ['logBucketUpdate', 'InvalidGoogleOperationInput'],
  ['dnsChange', 'InvalidGoogleOperationInput'],
  ['feedPollRun', 'InvalidFeedInput'],
  ['feedCursor', 'InvalidFeedInput'],
  ['hookRepair', 'InvalidHookInput'],
  ['hookPing', 'InvalidHookInput'],
  ['rateGovernor', 'InvalidGovernorInput'],
];

/**
 * A JSON payload of `{"a":{"a":…}}` nested `depth` levels, built as text: the client's own `JSON.stringify` overflows
 * its stack on it (Node 20 at ~10,000 levels), but another SDK or `temporal workflow start --input` sends it as it is.
 */
function deepJsonPayload(depth: number): RawValue {
  return jsonPayload(`${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`);
}

/** A `json/plain` payload of this text, sent as it is. */
function jsonPayload(text: string): RawValue {
  return RawValue.fromPayload({ metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(text) });
}

/** 100,000 fields (about 1.3 MB of JSON, under the server's 2 MB limit on a payload). */
const HUGE = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`field${i}`, i]));

const MALFORMED_INPUTS: [label: string, input: () => unknown][] = [
  ['null', () => null],
  ['a string', () => 'octo-org'],
  ['a number', () => 42],
  ['an array', () => [{ org: 'octo-org' }]],
  ['{}', () => ({})],
  ['an object 10,000 levels deep', () => deepJsonPayload(10_000)],
  ['an object of 100,000 fields', () => HUGE],
];

// On the dev server, as callers start work: through the client, by the workflow type's name.
describe('malformed inputs: every workflow type fails typed in its first workflow task (issue 35)', () => {
  const s = useStack({ emulator: EMULATOR });
  const rows: string[] = [];
  afterAll(() => console.log(`\nmalformed inputs\n| workflow | input | ending | workflow tasks | activities |\n${rows.join('\n')}\n`));

  it.each(INPUT_REFUSALS)('%s: null, a string, a number, an array, {}, a deep and a huge object each end FAILED with %s, no activity, no request', async (workflowType, failureType) => {
    const logStart = s.emulator.requestLog.length;
    await Promise.all(
      MALFORMED_INPUTS.map(async ([label, input], i) => {
        const workflowId = `malformed-input-${workflowType}-${i}-${Date.now()}`;
        const handle = await s.client.workflow.start(workflowType, { taskQueue: s.taskQueue, workflowId, args: [input()] });
        const error = await handle.result().then(
          () => expect.fail(`${workflowType} with ${label} completed`),
          (err: unknown) => err,
        );
        expect(error, `${workflowType} with ${label}`).toBeInstanceOf(WorkflowFailedError);
        const failure = (error as WorkflowFailedError).cause;
        expect(failure, `${workflowType} with ${label}: ${String(failure)}`).toBeInstanceOf(ApplicationFailure);
        expect((failure as ApplicationFailure).type, `${workflowType} with ${label}: ${failure?.message}`).toBe(failureType);
        expect((failure as ApplicationFailure).nonRetryable).toBe(true);
        const events = eventTypeCounts(await fetchHistory(s.client, workflowId));
        const tasks = `${events.workflowTaskCompleted ?? 0} completed, ${events.workflowTaskFailed ?? 0} failed`;
        rows.push(`| ${workflowType} | ${label} | FAILED ${failureType}: ${failure?.message.slice(0, 80)} | ${tasks} | ${events.activityTaskScheduled ?? 0} |`);
        expect({ workflowTaskCompleted: events.workflowTaskCompleted, workflowTaskFailed: events.workflowTaskFailed ?? 0, activityTaskScheduled: events.activityTaskScheduled ?? 0 }, `${workflowType} with ${label}`).toEqual({
          workflowTaskCompleted: 1,
          workflowTaskFailed: 0,
          activityTaskScheduled: 0,
        });
      }),
    );
    expect(s.emulator.requestLog.slice(logStart).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });

  it('an org migration of 5,001 repositories is refused before any request: GitHub takes at most 5,000 per export', async () => {
    const logStart = s.emulator.requestLog.length;
    const repositories = Array.from({ length: 5_001 }, (_, i) => `repo-${i}`);
    const workflowId = `malformed-input-5001-${Date.now()}`;
    const handle = await s.client.workflow.start('orgMigration', { taskQueue: s.taskQueue, workflowId, args: [{ org: 'octo-org', repositories }] });
    const failure = await expectFailure(handle.result(), 'InvalidMigrationInput');
    expect(failure.message).toContain("repositories may name at most 5000 repositories, GitHub's maximum per export (got 5001)");
    expect(s.emulator.requestLog.length - logStart).toBe(0);
    expect(eventTypeCounts(await fetchHistory(s.client, workflowId)).activityTaskScheduled ?? 0).toBe(0);
  });
});
