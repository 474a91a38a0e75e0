/**
 * The emulated Google services over real HTTP, on an injected clock: API keys with etags and the 30-day
 * deleted state, log bucket operations under every parent form (timing, failure, cancel), DNS changes,
 * Google-style errors with ErrorInfo/RetryInfo, and the shared request accounting.
 */
import { describe, expect, it } from 'vitest';
import { call, clockedEmulators, type RawResponse } from '../../helpers/emulator-http';
import type { Emulator } from '@longhaul/emulator';
import { DELETED_KEY_RETENTION_MS } from '../../../packages/emulator/src/google/apikeys';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const clocked = clockedEmulators(START);
const KEY = 'projects/demo-project/locations/global/keys/demo-key-1';

interface GoogleErrorJson {
  error: { code: number; status: string; message: string; details?: { '@type': string; reason?: string; retryDelay?: string }[]; errors?: { reason: string }[] };
}
const errorOf = (res: RawResponse) => (res.json as GoogleErrorJson).error;
const body = <T = Record<string, unknown>>(res: RawResponse) => res.json as T;

interface OperationJson {
  name: string;
  done: boolean;
  metadata?: { state: string; endTime?: string };
  error?: { code: number; message: string };
  response?: Record<string, unknown>;
}

async function start(options: Parameters<typeof clocked.start>[0] = {}) {
  const emulator = await clocked.start(options);
  const url = (name: string) => emulator.serviceUrl(name);
  return {
    emulator,
    keys: (method: string, path: string, opts = {}) => call(url('google-apikeys'), method, path, opts),
    logging: (method: string, path: string, opts = {}) => call(url('google-logging'), method, path, opts),
    dns: (method: string, path: string, opts = {}) => call(url('google-dns'), method, path, opts),
  };
}

describe('emulated API keys', () => {
  it('serves the documented fixture keys with an etag', async () => {
    const { keys } = await start();
    for (const n of [1, 2, 3]) {
      const res = await keys('GET', `/v2/projects/demo-project/locations/global/keys/demo-key-${n}`);
      expect(res.status).toBe(200);
      expect(body(res)).toMatchObject({ name: `projects/demo-project/locations/global/keys/demo-key-${n}`, etag: expect.stringMatching(/^W\/".+"$/) });
    }
  });

  it('deletes a key through an operation that is done after the configured time, and keeps the key retrievable for 30 days', async () => {
    const { keys, emulator } = await start({ google: { apikeys: { deleteOperationMs: 2000 } } });
    const del = await keys('DELETE', `/v2/${KEY}`);
    expect(del.status).toBe(200);
    const op = body<OperationJson>(del);
    expect(op.done).toBe(false);

    clocked.now += 1999;
    expect(body<OperationJson>(await keys('GET', `/v2/${op.name}`)).done).toBe(false);
    clocked.now += 1;
    const done = body<OperationJson>(await keys('GET', `/v2/${op.name}`));
    expect(done.done).toBe(true);
    expect(done.response).toMatchObject({ '@type': 'type.googleapis.com/google.api.apikeys.v2.Key', name: KEY, deleteTime: new Date(START).toISOString() });

    clocked.now = START + DELETED_KEY_RETENTION_MS - 1;
    expect((await keys('GET', `/v2/${KEY}`)).status).toBe(200);
    expect(emulator.google.apikeys.isDeleted(KEY)).toBe(true);
    clocked.now = START + DELETED_KEY_RETENTION_MS;
    const purged = await keys('GET', `/v2/${KEY}`);
    expect(purged.status).toBe(404);
    expect(errorOf(purged).status).toBe('NOT_FOUND');
  });

  it('refuses a stale etag with 409 ABORTED and accepts the current one', async () => {
    const { keys, emulator } = await start();
    const readEtag = emulator.google.apikeys.etag(KEY);
    emulator.google.apikeys.modify(KEY, 'renamed by someone else');
    const stale = await keys('DELETE', `/v2/${KEY}?etag=${encodeURIComponent(readEtag)}`);
    expect(stale.status).toBe(409);
    expect(errorOf(stale)).toMatchObject({ status: 'ABORTED', details: [expect.objectContaining({ reason: 'ETAG_MISMATCH' })] });
    const current = emulator.google.apikeys.etag(KEY);
    expect((await keys('DELETE', `/v2/${KEY}?etag=${encodeURIComponent(current)}`)).status).toBe(200);
  });

  it('rejects a location other than global, a second deletion, and a non-empty body', async () => {
    const { keys } = await start();
    const regional = await keys('DELETE', '/v2/projects/demo-project/locations/us-central1/keys/demo-key-1');
    expect(regional.status).toBe(400);
    expect(errorOf(regional).status).toBe('INVALID_ARGUMENT');
    expect((await keys('DELETE', `/v2/${KEY}`, { body: { force: true } })).status).toBe(400);
    expect((await keys('DELETE', `/v2/${KEY}`)).status).toBe(200);
    const again = await keys('DELETE', `/v2/${KEY}`);
    expect(again.status).toBe(400);
    expect(errorOf(again).status).toBe('FAILED_PRECONDITION');
  });

  it('undeletes a deleted key within the 30 days', async () => {
    const { keys, emulator } = await start();
    await keys('DELETE', `/v2/${KEY}`);
    clocked.now += 10 * 24 * 60 * 60 * 1000;
    expect((await keys('POST', `/v2/${KEY}:undelete`)).status).toBe(200);
    expect(emulator.google.apikeys.isDeleted(KEY)).toBe(false);
  });
});

describe('emulated log buckets', () => {
  const parents = ['projects/demo-project', 'organizations/demo-org', 'folders/demo-folder', 'billingAccounts/demo-billing'];

  it.each(parents)('creates a bucket under %s through SCHEDULED → WAITING_FOR_PERMISSIONS → RUNNING → SUCCEEDED', async (p) => {
    const { logging, emulator } = await start({ google: { buckets: { scheduledMs: 100, waitingForPermissionsMs: 200, runningMs: 300 } } });
    const parent = `${p}/locations/global`;
    const res = await logging('POST', `/v2/${parent}/buckets:createAsync?bucketId=audit`, { body: { retentionDays: 90, description: 'audit' } });
    expect(res.status).toBe(200);
    const op = body<OperationJson>(res);
    expect(op.name.startsWith(`${parent}/operations/`)).toBe(true);
    const states: string[] = [];
    for (const t of [0, 100, 300, 599, 600]) {
      clocked.now = START + t;
      const got = body<OperationJson>(await logging('GET', `/v2/${op.name}`));
      states.push(got.metadata!.state);
      if (t === 600) expect(got.response).toMatchObject({ name: `${parent}/buckets/audit`, retentionDays: 90, lifecycleState: 'ACTIVE' });
      else expect(got.done).toBe(false);
    }
    expect(states).toEqual(['OPERATION_STATE_SCHEDULED', 'OPERATION_STATE_WAITING_FOR_PERMISSIONS', 'OPERATION_STATE_RUNNING', 'OPERATION_STATE_RUNNING', 'OPERATION_STATE_SUCCEEDED']);
    expect(emulator.google.buckets.bucket(`${parent}/buckets/audit`)?.lifecycleState).toBe('ACTIVE');
  });

  it('answers a second create of the same bucket with 409 ALREADY_EXISTS', async () => {
    const { logging } = await start();
    const path = '/v2/projects/demo-project/locations/global/buckets:createAsync?bucketId=dup';
    expect((await logging('POST', path, { body: {} })).status).toBe(200);
    const again = await logging('POST', path, { body: {} });
    expect(again.status).toBe(409);
    expect(errorOf(again).status).toBe('ALREADY_EXISTS');
  });

  it('denies unknown parents with PERMISSION_DENIED and an ErrorInfo reason', async () => {
    const { logging } = await start();
    const res = await logging('POST', '/v2/projects/someone-else/locations/global/buckets:createAsync?bucketId=x', { body: {} });
    expect(res.status).toBe(403);
    expect(errorOf(res)).toMatchObject({ status: 'PERMISSION_DENIED', details: [expect.objectContaining({ reason: 'IAM_PERMISSION_DENIED' })] });
  });

  it('ends operations on configured bucket ids FAILED with an error, and removes a bucket whose creation failed', async () => {
    const { logging, emulator } = await start({ google: { buckets: { failBucketIds: ['doomed'], scheduledMs: 0, waitingForPermissionsMs: 0, runningMs: 100 } } });
    const op = body<OperationJson>(await logging('POST', '/v2/projects/demo-project/locations/global/buckets:createAsync?bucketId=doomed', { body: {} }));
    clocked.now += 100;
    const done = body<OperationJson>(await logging('GET', `/v2/${op.name}`));
    expect(done).toMatchObject({ done: true, metadata: { state: 'OPERATION_STATE_FAILED' }, error: { code: 9 } });
    expect(emulator.google.buckets.bucket('projects/demo-project/locations/global/buckets/doomed')).toBeUndefined();
  });

  it('cancels a running operation after the configured delay (CANCELLED, error code 1)', async () => {
    const { logging } = await start({ google: { buckets: { scheduledMs: 0, waitingForPermissionsMs: 0, runningMs: 10_000, cancelEffectMs: 500 } } });
    const op = body<OperationJson>(await logging('POST', '/v2/folders/demo-folder/locations/global/buckets:createAsync?bucketId=c', { body: {} }));
    clocked.now += 1000;
    expect((await logging('POST', `/v2/${op.name}:cancel`, { body: {} })).status).toBe(200);
    clocked.now += 499;
    expect(body<OperationJson>(await logging('GET', `/v2/${op.name}`)).done).toBe(false);
    clocked.now += 1;
    expect(body<OperationJson>(await logging('GET', `/v2/${op.name}`))).toMatchObject({ done: true, metadata: { state: 'OPERATION_STATE_CANCELLED' }, error: { code: 1 } });
    expect((await logging('GET', '/v2/folders/demo-folder/locations/global/buckets/c')).status).toBe(404);
  });

  it('accepts a cancel that arrives too late and lets the operation succeed, and refuses a cancel of a done operation', async () => {
    const { logging } = await start({ google: { buckets: { scheduledMs: 0, waitingForPermissionsMs: 0, runningMs: 1000, cancel: 'too-late' } } });
    const op = body<OperationJson>(await logging('POST', '/v2/projects/demo-project/locations/global/buckets:createAsync?bucketId=late', { body: {} }));
    expect((await logging('POST', `/v2/${op.name}:cancel`, { body: {} })).status).toBe(200);
    clocked.now += 1000;
    expect(body<OperationJson>(await logging('GET', `/v2/${op.name}`)).metadata!.state).toBe('OPERATION_STATE_SUCCEEDED');
    const refused = await logging('POST', `/v2/${op.name}:cancel`, { body: {} });
    expect(refused.status).toBe(400);
    expect(errorOf(refused).status).toBe('FAILED_PRECONDITION');
  });

  it('applies an update when its operation succeeds, and lists operations with their requests', async () => {
    const { logging, emulator } = await start({ google: { buckets: { scheduledMs: 0, waitingForPermissionsMs: 0, runningMs: 100 } } });
    const name = 'billingAccounts/demo-billing/locations/eu/buckets/b';
    await logging('POST', '/v2/billingAccounts/demo-billing/locations/eu/buckets:createAsync?bucketId=b', { body: { retentionDays: 30 } });
    clocked.now += 100;
    const update = await logging('POST', `/v2/${name}:updateAsync?updateMask=retentionDays`, { body: { retentionDays: 400, description: 'ignored: not in mask' } });
    expect(update.status).toBe(200);
    expect(emulator.google.buckets.bucket(name)?.retentionDays).toBe(30);
    clocked.now += 100;
    expect(emulator.google.buckets.bucket(name)).toMatchObject({ retentionDays: 400, description: undefined, lifecycleState: 'ACTIVE' });
    const list = async (filter: string) =>
      body<{ operations: { metadata: Record<string, unknown> }[] }>(await logging('GET', `/v2/billingAccounts/demo-billing/locations/eu/operations?filter=${encodeURIComponent(filter)}`));
    const requests = (l: { operations: { metadata: Record<string, unknown> }[] }) => l.operations.map((o) => Object.keys(o.metadata).find((k) => k.endsWith('BucketRequest')));
    expect(requests(await list('request_type=UpdateBucket'))).toEqual(['updateBucketRequest']);
    expect(requests(await list('request_type = "CreateBucketAsync"'))).toEqual(['createBucketRequest']);
  });

  it('refuses to change the retention of a locked bucket', async () => {
    const { logging } = await start({ google: { buckets: { scheduledMs: 0, waitingForPermissionsMs: 0, runningMs: 0 } } });
    await logging('POST', '/v2/projects/demo-project/locations/global/buckets:createAsync?bucketId=l', { body: { locked: true } });
    const res = await logging('POST', '/v2/projects/demo-project/locations/global/buckets/l:updateAsync?updateMask=retentionDays', { body: { retentionDays: 1 } });
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({ status: 'FAILED_PRECONDITION', details: [expect.objectContaining({ reason: 'BUCKET_LOCKED' })] });
  });
});

describe('emulated Cloud DNS changes', () => {
  const zone = '/dns/v1/projects/demo-project/managedZones/demo-zone';
  const api = { name: 'api.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.20'] };

  it('applies a change at once and reports it pending, then done after the configured time', async () => {
    const { dns, emulator } = await start({ google: { dns: { changeMs: 1000 } } });
    const res = await dns('POST', `${zone}/changes`, { body: { additions: [api] } });
    expect(res.status).toBe(200);
    const change = body<{ id: string; status: string }>(res);
    expect(change.status).toBe('pending');
    expect(emulator.google.dns.rrsets('demo-project', 'demo-zone').map((r) => r.name)).toContain(api.name);
    clocked.now += 1000;
    expect(body<{ status: string }>(await dns('GET', `${zone}/changes/${change.id}`)).status).toBe('done');
  });

  it('refuses an addition that exists (409 alreadyExists) and a deletion that does not match (412 conditionNotMet), atomically', async () => {
    const { dns, emulator } = await start();
    const before = emulator.google.dns.rrsets('demo-project', 'demo-zone').length;
    const exists = await dns('POST', `${zone}/changes`, { body: { additions: [{ name: 'www.demo.example.com.', type: 'A', ttl: 60, rrdatas: ['192.0.2.99'] }, api] } });
    expect(exists.status).toBe(409);
    expect(errorOf(exists)).toMatchObject({ status: 'ALREADY_EXISTS', errors: [expect.objectContaining({ reason: 'alreadyExists' })] });
    const mismatch = await dns('POST', `${zone}/changes`, { body: { deletions: [{ name: 'www.demo.example.com.', type: 'A', ttl: 60, rrdatas: ['192.0.2.10'] }] } });
    expect(mismatch.status).toBe(412);
    expect(errorOf(mismatch).errors?.[0]?.reason).toBe('conditionNotMet');
    expect(emulator.google.dns.rrsets('demo-project', 'demo-zone')).toHaveLength(before);
  });

  it('rejects names outside the zone', async () => {
    const { dns } = await start();
    const res = await dns('POST', `${zone}/changes`, { body: { additions: [{ ...api, name: 'api.other.example.' }] } });
    expect(res.status).toBe(400);
    expect(errorOf(res).status).toBe('INVALID_ARGUMENT');
  });
});

describe('Google faults and accounting', () => {
  it('answers a 429 fault with RESOURCE_EXHAUSTED and a RetryInfo delay, and counts Google requests in the shared stats', async () => {
    const { keys, emulator } = await start({ faults: [{ kind: 'status', status: 429, retryInfoSeconds: 3, path: '/keys/', times: 1 }] });
    const limited = await keys('GET', `/v2/${KEY}`);
    expect(limited.status).toBe(429);
    expect(errorOf(limited)).toMatchObject({ status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3s' }] });
    expect((await keys('GET', `/v2/${KEY}`)).status).toBe(200);
    const stats = (emulator as Emulator).stats;
    expect(stats.requests).toBe(2);
    expect(stats.byRoute['GET /v2/projects/:project/locations/:location/keys/:key']).toBe(2);
  });

  it('requires a bearer token on Google services, with a Google-style UNAUTHENTICATED error', async () => {
    const { keys } = await start();
    const res = await keys('GET', `/v2/${KEY}`, { token: null });
    expect(res.status).toBe(401);
    expect(errorOf(res).status).toBe('UNAUTHENTICATED');
  });
});
