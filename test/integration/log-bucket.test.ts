/**
 * The log-bucket create/update workflows on a real Temporal server with a real worker and the emulator:
 * every parent form, state reporting, operation failure, cancellation that takes effect and one that arrives
 * too late, the create never running twice, poll failures that never re-send, RetryInfo-demanded waits, and
 * names rejected before any call.
 */
import { describe, expect, it } from 'vitest';
import { type WorkflowHandle } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { logBucketCreate, logBucketUpdate } from '../../src/processes/google-operation/log-bucket';
import { operationStatusQuery } from '../../src/processes/google-operation/operation';
import { GoogleOperationFailure } from '../../src/processes/google-operation/model';
import type { LogBucketCreateInput, LogBucketUpdateInput } from '../../src/processes/google-operation/input';
import type { OperationStatus } from '../../src/processes/google-operation/model';
import { FailureType } from '../../src/http/retry-policy';
import { LonghaulState, LonghaulTarget } from '../../src/common/search-attributes';
import { type defaultLogBucketOptions } from '../../packages/emulator/src/google/logging-buckets';
import { requestsTo } from '../helpers/emulator';
import { demandedWaits } from '../helpers/history';
import { eventually } from '../helpers/wait';
import { useTimeSkippingStack } from '../helpers/stack';
import { expectCancelled, expectFailure } from '../helpers/failures';
import { call } from '../helpers/emulator-http';
import { FAST_POLL_5_MIN } from '../helpers/presets';

const TIMING = { scheduledMs: 400, waitingForPermissionsMs: 400, runningMs: 800 };
const LIFECYCLE = ['SCHEDULED', 'WAITING_FOR_PERMISSIONS', 'RUNNING', 'SUCCEEDED'];
let seq = 0;
const uniqueId = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${seq++}`;

describe('log bucket workflows', () => {
  const stack = useTimeSkippingStack({ emulator: { google: { buckets: { ...TIMING } } } });
  const buckets = () => stack.emulator.google.buckets;
  /** Per-test emulator behaviour, restored afterwards. */
  async function withBucketOptions<T>(options: Partial<typeof defaultLogBucketOptions>, run: () => Promise<T>): Promise<T> {
    const saved = { ...buckets().options };
    Object.assign(buckets().options, options);
    try {
      return await run();
    } finally {
      Object.assign(buckets().options, saved);
      stack.emulator.setFaults([]);
    }
  }
  const create = (input: LogBucketCreateInput, name: string) =>
    stack.client.workflow.start(logBucketCreate, { taskQueue: stack.taskQueue, workflowId: `bucket-${name}-${Date.now()}-${seq++}`, args: [input] });
  const update = (input: LogBucketUpdateInput, name: string) =>
    stack.client.workflow.start(logBucketUpdate, { taskQueue: stack.taskQueue, workflowId: `bucket-update-${name}-${Date.now()}-${seq++}`, args: [input] });
  const createOps = (bucketName: string) => [...buckets().operations.values()].filter((op) => op.kind === 'create' && op.bucketName === bucketName);
  const waitForState = (handle: WorkflowHandle, state: string) =>
    eventually(async () => ((await handle.query(operationStatusQuery)).state === state ? true : undefined), `state ${state}`);

  it('creates a bucket under each of the four parent forms and reports the states in lifecycle order', async () => {
    const parents = ['projects/demo-project', 'organizations/demo-org', 'folders/demo-folder', 'billingAccounts/demo-billing'].map((p) => `${p}/locations/global`);
    const bucketId = uniqueId('audit');
    const handles = await Promise.all(parents.map((parent, i) => create({ parent, bucketId, retentionDays: 60 + i, description: 'audit logs', poll: FAST_POLL_5_MIN }, `parent-${i}`)));
    const results = await Promise.all(handles.map((h) => h.result()));
    for (const [i, result] of results.entries()) {
      const name = `${parents[i]}/buckets/${bucketId}`;
      expect(result).toMatchObject({ bucket: name, state: 'SUCCEEDED', response: { name, retentionDays: 60 + i, lifecycleState: 'ACTIVE' } });
      expect(buckets().bucket(name)).toMatchObject({ retentionDays: 60 + i, description: 'audit logs', lifecycleState: 'ACTIVE' });
      const status: OperationStatus = await handles[i].query(operationStatusQuery);
      expect(status.states[0]).toBe('SCHEDULED');
      expect(status.states.at(-1)).toBe('SUCCEEDED');
      // Seen states never go backwards in the lifecycle.
      const order = status.states.map((s) => LIFECYCLE.indexOf(s));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      const attributes = (await handles[i].describe()).typedSearchAttributes;
      expect(attributes.get(LonghaulState)).toBe('SUCCEEDED');
      expect(attributes.get(LonghaulTarget)).toBe(name);
    }
  });

  it('updates a bucket with an update mask and reports the operation to the end', async () => {
    const parent = 'projects/demo-project/locations/global';
    const bucketId = uniqueId('upd');
    await (await create({ parent, bucketId, retentionDays: 30, poll: FAST_POLL_5_MIN }, 'for-update')).result();
    const name = `${parent}/buckets/${bucketId}`;
    const result = await (await update({ name, updateMask: ['retentionDays', 'description'], retentionDays: 400, description: 'kept longer', poll: FAST_POLL_5_MIN }, 'ok')).result();
    expect(result).toMatchObject({ bucket: name, state: 'SUCCEEDED', response: { retentionDays: 400, description: 'kept longer' } });
    expect(buckets().bucket(name)?.retentionDays).toBe(400);
  });

  it('fails with the operation error when the bucket operation ends FAILED', async () => {
    const bucketId = uniqueId('doomed');
    await withBucketOptions({ failBucketIds: [bucketId] }, async () => {
      const cause = await expectFailure(create({ parent: 'folders/demo-folder/locations/global', bucketId, poll: FAST_POLL_5_MIN }, 'fails').then((h) => h.result()), GoogleOperationFailure.OperationFailed);
      expect(cause.message).toContain('state FAILED');
      expect(cause.message).toContain('rejected the configuration');
    });
  });

  it('on cancellation sends :cancel, sees the operation end CANCELLED and reports that the cancel took effect', async () => {
    const bucketId = uniqueId('cancel');
    const name = `organizations/demo-org/locations/global/buckets/${bucketId}`;
    await withBucketOptions({ runningMs: 30_000, cancel: 'takes-effect', cancelEffectMs: 300 }, async () => {
      const handle = await create({ parent: 'organizations/demo-org/locations/global', bucketId, poll: FAST_POLL_5_MIN }, 'cancel');
      await waitForState(handle, 'RUNNING');
      const cancelsBefore = requestsTo(stack.emulator, 'POST', ':cancel');
      await handle.cancel();
      await expectCancelled(handle.result());
      const status = await handle.query(operationStatusQuery);
      expect(status.phase).toBe('cancelled');
      expect(status.cancel).toMatchObject({ requested: true, tookEffect: true, finalState: 'CANCELLED' });
      expect(status.cancel?.message).toContain('cancel took effect');
      expect(requestsTo(stack.emulator, 'POST', ':cancel') - cancelsBefore).toBe(1);
      expect(buckets().state(status.operation!)).toBe('CANCELLED');
      expect(buckets().bucket(name)).toBeUndefined();
      expect((await handle.describe()).typedSearchAttributes.get(LonghaulState)).toBe('CANCELLED');
    });
  });

  it('on cancellation that arrives too late reports it and returns the finished result, since the bucket exists', async () => {
    const bucketId = uniqueId('late');
    const name = `projects/demo-project/locations/global/buckets/${bucketId}`;
    await withBucketOptions({ runningMs: 1_500, cancel: 'too-late' }, async () => {
      const handle = await create({ parent: 'projects/demo-project/locations/global', bucketId, poll: FAST_POLL_5_MIN }, 'late');
      await waitForState(handle, 'RUNNING');
      await handle.cancel();
      const result = await handle.result();
      expect(result.state).toBe('SUCCEEDED');
      expect(result.cancel).toMatchObject({ requested: true, tookEffect: false, finalState: 'SUCCEEDED' });
      expect(result.cancel?.message).toContain('too late');
      expect(buckets().bucket(name)?.lifecycleState).toBe('ACTIVE');
      expect((await handle.describe()).status.name).toBe('COMPLETED');
    });
  });

  it('never creates twice: after a lost answer, a missed first lookup is followed by the lookup at the end of the grace period, not by a re-send', async () => {
    const parent = 'billingAccounts/demo-billing/locations/global';
    const bucketId = uniqueId('once');
    const name = `${parent}/buckets/${bucketId}`;
    await withBucketOptions({}, async () => {
      stack.emulator.setFaults([
        // The create happens, but its answer is lost…
        { method: 'POST', path: 'buckets:createAsync', kind: 'reset', afterProcessing: true, times: 1 },
        // …and the first look for it misses (as an eventually consistent read can): the create is not sent
        // again before the second lookup, when the grace period is spent.
        { method: 'GET', path: `/buckets/${bucketId}`, kind: 'status', status: 404, times: 1 },
      ]);
      const createsBefore = requestsTo(stack.emulator, 'POST', 'buckets:createAsync');
      const handle = await create({ parent, bucketId, poll: FAST_POLL_5_MIN }, 'once');
      const result = await handle.result();
      expect(requestsTo(stack.emulator, 'POST', 'buckets:createAsync') - createsBefore).toBe(1);
      expect(createOps(name)).toHaveLength(1);
      expect(result).toMatchObject({ bucket: name, state: 'SUCCEEDED', operation: createOps(name)[0]!.name });
    });
  });

  it('a cancel while the create is in flight waits for its answer, then cancels that operation: no unknown bucket is left', async () => {
    const parent = 'projects/demo-project/locations/global';
    const bucketId = uniqueId('inflight');
    const name = `${parent}/buckets/${bucketId}`;
    await withBucketOptions({ runningMs: 30_000, cancel: 'takes-effect', cancelEffectMs: 300 }, async () => {
      // The create is held before the server acts on it, so the cancel arrives while the POST is in flight.
      stack.emulator.setFaults([{ method: 'POST', path: 'buckets:createAsync', kind: 'slow', delayMs: 3_000, times: 1 }]);
      const faultsBefore = stack.emulator.stats.faultsInjected;
      const handle = await create({ parent, bucketId, poll: FAST_POLL_5_MIN }, 'inflight');
      await eventually(() => (stack.emulator.stats.faultsInjected > faultsBefore ? true : undefined), 'the create to be in flight');
      await handle.cancel();
      await expectCancelled(handle.result());
      // The held create did happen (waited for, since without the fix it lands after the workflow ended)…
      const ops = await eventually(() => (createOps(name).length > 0 ? createOps(name) : undefined), 'the held create to land');
      expect(ops).toHaveLength(1);
      // …and the workflow knew its operation and cancelled it.
      const status = await handle.query(operationStatusQuery);
      expect(status.operation).toBe(ops[0]!.name);
      expect(status.cancel).toMatchObject({ requested: true, tookEffect: true, finalState: 'CANCELLED' });
      expect(buckets().state(ops[0]!.name)).toBe('CANCELLED');
      expect(buckets().bucket(name)).toBeUndefined();
    });
  });

  it('update recovery refuses another client\'s recent update of the bucket and sends its own', async () => {
    const parent = 'projects/demo-project/locations/global';
    const bucketId = uniqueId('foreign');
    const name = `${parent}/buckets/${bucketId}`;
    await (await create({ parent, bucketId, retentionDays: 30, poll: FAST_POLL_5_MIN }, 'for-foreign')).result();
    // Another client updates the same bucket, a moment before this workflow's update.
    const logging = stack.emulator.serviceUrl('google-logging');
    const foreign = await call(logging, 'POST', `${logging}/v2/${name}:updateAsync?updateMask=description`, { body: { description: 'someone else' } });
    expect(foreign.status).toBe(200);
    const foreignOp = (foreign.json as { name: string }).name;
    await eventually(() => (buckets().bucket(name)?.lifecycleState === 'ACTIVE' ? true : undefined), 'the foreign update to finish');
    await withBucketOptions({}, async () => {
      // Our update's first try fails with an unknown outcome (502 before processing), so the workflow looks for it.
      stack.emulator.setFaults([{ method: 'POST', path: ':updateAsync', kind: 'status', status: 502, times: 1 }]);
      const updatesBefore = requestsTo(stack.emulator, 'POST', ':updateAsync');
      // A short grace period: the lookups find nothing of ours, so the update is sent again soon.
      const result = await (await update({ name, updateMask: ['description'], description: 'ours', poll: FAST_POLL_5_MIN, sendOnceGraceMs: 2_000 }, 'foreign')).result();
      expect(result.operation).not.toBe(foreignOp);
      expect(result.response).toMatchObject({ description: 'ours' });
      expect(requestsTo(stack.emulator, 'POST', ':updateAsync') - updatesBefore).toBe(2);
      expect(buckets().bucket(name)?.description).toBe('ours');
    });
  });

  it('update recovery adopts its own update whose answer was lost (same mask and values), without sending it again', async () => {
    const parent = 'projects/demo-project/locations/global';
    const bucketId = uniqueId('lost-update');
    const name = `${parent}/buckets/${bucketId}`;
    await (await create({ parent, bucketId, retentionDays: 30, poll: FAST_POLL_5_MIN }, 'for-lost-update')).result();
    await withBucketOptions({}, async () => {
      stack.emulator.setFaults([{ method: 'POST', path: ':updateAsync', kind: 'reset', afterProcessing: true, times: 1 }]);
      const updatesBefore = requestsTo(stack.emulator, 'POST', ':updateAsync');
      const result = await (await update({ name, updateMask: ['retentionDays'], retentionDays: 90, poll: FAST_POLL_5_MIN }, 'lost')).result();
      expect(requestsTo(stack.emulator, 'POST', ':updateAsync') - updatesBefore).toBe(1);
      const updates = [...buckets().operations.values()].filter((op) => op.kind === 'update' && op.bucketName === name);
      expect(updates).toHaveLength(1);
      expect(result.operation).toBe(updates[0]!.name);
      expect(buckets().bucket(name)?.retentionDays).toBe(90);
    });
  });

  it('fails with AlreadyExistsError when the bucket existed before the workflow', async () => {
    const parent = 'projects/demo-project/locations/global';
    const bucketId = uniqueId('exists');
    await (await create({ parent, bucketId, poll: FAST_POLL_5_MIN }, 'first')).result();
    await expectFailure(create({ parent, bucketId, poll: FAST_POLL_5_MIN }, 'second').then((h) => h.result()), FailureType.AlreadyExists);
    expect(createOps(`${parent}/buckets/${bucketId}`)).toHaveLength(1);
  });

  it('keeps polling through failed polls without sending the create again', async () => {
    const bucketId = uniqueId('flaky');
    await withBucketOptions({}, async () => {
      stack.emulator.setFaults([{ method: 'GET', path: '/operations/', kind: 'status', status: 503, times: 3 }]);
      const createsBefore = requestsTo(stack.emulator, 'POST', 'buckets:createAsync');
      const faultsBefore = stack.emulator.stats.faultsInjected;
      const result = await (await create({ parent: 'folders/demo-folder/locations/global', bucketId, poll: FAST_POLL_5_MIN }, 'flaky')).result();
      expect(result.state).toBe('SUCCEEDED');
      expect(stack.emulator.stats.faultsInjected - faultsBefore).toBe(3);
      expect(requestsTo(stack.emulator, 'POST', 'buckets:createAsync') - createsBefore).toBe(1);
    });
  });

  it('gives up polling after the total time bound, naming the operation that continues on the server', async () => {
    const bucketId = uniqueId('slow');
    await withBucketOptions({ runningMs: 60_000 }, async () => {
      const input = { parent: 'projects/demo-project/locations/global', bucketId, poll: { ...FAST_POLL_5_MIN, timeoutMs: 1_000 } };
      const cause = await expectFailure(create(input, 'slow').then((h) => h.result()), GoogleOperationFailure.TimedOut);
      expect(cause.message).toContain('continues on the server');
      const [op] = createOps(`projects/demo-project/locations/global/buckets/${bucketId}`);
      expect(cause.message).toContain(op!.name);
      expect(buckets().state(op!.name)).toBe('RUNNING');
    });
  });

  it('waits as long as RetryInfo asks when a poll is answered 429', async () => {
    const bucketId = uniqueId('quota');
    await withBucketOptions({}, async () => {
      stack.emulator.setFaults([{ method: 'GET', path: '/operations/', kind: 'status', status: 429, retryInfoSeconds: 2, times: 1 }]);
      const handle = await create({ parent: 'projects/demo-project/locations/global', bucketId, poll: FAST_POLL_5_MIN }, 'quota');
      await handle.result();
      // The poll is quiet: its failed poll goes to the workflow, which waits the demanded 2 s before the next.
      expect(await demandedWaits([handle], { failedAttempts: true })).toContainEqual({ type: FailureType.ResourceExhausted, requestedMs: 2000 });
      const events = (await handle.fetchHistory()).events ?? [];
      const failedAt = events.findIndex((e) => e.activityTaskFailedEventAttributes);
      const backoff = events.slice(failedAt).find((e) => e.timerStartedEventAttributes)?.timerStartedEventAttributes;
      expect(optionalTsToMs(backoff?.startToFireTimeout)).toBeGreaterThanOrEqual(2000);
    });
  });

  it.each([
    ['a parent without a location', { parent: 'projects/demo-project', bucketId: 'b' }, 'is not a bucket parent'],
    ['an unknown parent form', { parent: 'teams/demo/locations/global', bucketId: 'b' }, 'must be one of projects, organizations, folders, billingAccounts'],
    ['a reserved bucket id', { parent: 'projects/demo-project/locations/global', bucketId: '_Default' }, 'is not valid'],
    ['a retention out of range', { parent: 'projects/demo-project/locations/global', bucketId: 'b', retentionDays: 0 }, 'retentionDays'],
  ])('rejects %s before any call', async (_what, input, problem) => {
    stack.emulator.resetStats();
    const cause = await expectFailure(create({ ...input, poll: FAST_POLL_5_MIN }, 'bad').then((h) => h.result()), GoogleOperationFailure.InvalidInput);
    expect(cause.message).toContain(problem);
    expect(stack.emulator.stats.requests).toBe(0);
  });

  it('rejects an update whose mask names a field it cannot update before any call', async () => {
    stack.emulator.resetStats();
    const input = { name: 'projects/demo-project/locations/global/buckets/b', updateMask: ['name'], poll: FAST_POLL_5_MIN };
    const cause = await expectFailure(update(input, 'bad-mask').then((h) => h.result()), GoogleOperationFailure.InvalidInput);
    expect(cause.message).toContain('updateMask field "name"');
    expect(stack.emulator.stats.requests).toBe(0);
  });
});
