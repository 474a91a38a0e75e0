/**
 * The emulated Google APIs as Google's clients reach them: each at the root of an origin of its own (nothing
 * of them on the GitHub port), Logging's operation listing requiring its `filter` as the real API does, and
 * the standard parameters, headers and body shapes Google's generated clients send accepted as sent.
 */
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { call, clockedEmulators, type RawResponse } from '../../helpers/emulator-http';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const clocked = clockedEmulators(START);
const KEY = 'projects/demo-project/locations/global/keys/demo-key-1';
const PARENT = 'projects/demo-project/locations/global';

interface GoogleErrorJson {
  error: { code: number; status: string; message: string; details?: { '@type': string; fieldViolations?: { field: string }[] }[] };
}
const errorOf = (res: RawResponse) => (res.json as GoogleErrorJson).error;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe('Google APIs at the root of their own origins', () => {
  it('serves each Google API at the root of its own port, and none of them on the GitHub port', async () => {
    const emulator = await clocked.start();
    const roots = ['google-apikeys', 'google-logging', 'google-dns'].map((name) => emulator.serviceUrl(name));
    for (const root of roots) {
      expect(root).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(root).not.toBe(emulator.apiUrl);
    }
    expect(new Set(roots).size).toBe(3);
    const [apikeys, logging, dns] = roots;
    expect((await call(apikeys, 'GET', `/v2/${KEY}`)).status).toBe(200);
    expect((await call(logging, 'GET', `/v2/${PARENT}/buckets`)).status).toBe(200);
    expect((await call(dns, 'GET', '/dns/v1/projects/demo-project/managedZones/demo-zone')).status).toBe(200);
    // Each origin serves its own API only; the old prefixes are gone from the GitHub port.
    expect((await call(logging, 'GET', `/v2/${KEY}`)).status).toBe(404);
    expect((await call(emulator.apiUrl, 'GET', `/v2/${KEY}`)).status).toBe(404);
    expect((await call(emulator.apiUrl, 'GET', `/google/apikeys/v2/${KEY}`)).status).toBe(404);
    const config = (await call(emulator.apiUrl, 'GET', '/_emulator/config')).json as { services: Record<string, string> };
    expect(config.services).toMatchObject({ 'google-apikeys': apikeys, 'google-logging': logging, 'google-dns': dns, github: emulator.apiUrl });
  });

  it('listens on the ports googlePorts names', async () => {
    const port = await freePort();
    const emulator = await clocked.start({ googlePorts: { logging: port } });
    expect(emulator.serviceUrl('google-logging')).toBe(`http://127.0.0.1:${port}`);
    expect((await call(emulator.serviceUrl('google-logging'), 'GET', `/v2/${PARENT}/buckets`)).status).toBe(200);
  });

  it('keeps auth, faults and request accounting per service on its own origin', async () => {
    const emulator = await clocked.start({ faults: [{ kind: 'status', status: 503, path: '/dns/v1/', times: 1 }] });
    const dns = emulator.serviceUrl('google-dns');
    expect(errorOf(await call(dns, 'GET', '/dns/v1/projects/demo-project/managedZones/demo-zone', { token: null })).status).toBe('UNAUTHENTICATED');
    expect(errorOf(await call(dns, 'GET', '/dns/v1/projects/demo-project/managedZones/demo-zone')).status).toBe('UNAVAILABLE');
    expect((await call(dns, 'GET', '/dns/v1/projects/demo-project/managedZones/demo-zone')).status).toBe(200);
    expect(emulator.stats.byRoute['GET /dns/v1/projects/:project/managedZones/:zone']).toBe(3);
    expect(emulator.requestLog.filter((r) => r.path.startsWith('/dns/v1/'))).toHaveLength(3);
  });
});

describe("Logging's operation listing requires its filter", () => {
  const list = (base: string, filter?: string) => call(base, 'GET', `/v2/${PARENT}/operations${filter === undefined ? '' : `?filter=${encodeURIComponent(filter)}`}`);
  const names = (res: RawResponse) => ((res.json as { operations?: { name: string }[] }).operations ?? []).map((o) => o.name);

  async function withOperations() {
    const emulator = await clocked.start({ google: { buckets: { scheduledMs: 0, waitingForPermissionsMs: 0, runningMs: 1_000 } } });
    const logging = emulator.serviceUrl('google-logging');
    const create = async (id: string) => ((await call(logging, 'POST', `/v2/${PARENT}/buckets:createAsync?bucketId=${id}`, { body: {} })).json as { name: string }).name;
    const first = await create('first');
    clocked.now += 1_000;
    const second = await create('second');
    const update = ((await call(logging, 'POST', `/v2/${PARENT}/buckets/first:updateAsync?updateMask=description`, { body: { description: 'd' } })).json as { name: string }).name;
    return { logging, first, second, update };
  }

  it('answers 400 INVALID_ARGUMENT naming the filter when it is missing, empty or has no request_type', async () => {
    const { logging } = await withOperations();
    for (const filter of [undefined, '', 'operation_state=RUNNING']) {
      const res = await list(logging, filter);
      expect(res.status).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'filter' }] }] });
      expect(errorOf(res).message).toContain('request_type');
    }
  });

  it('refuses what the API does not document: lower-case and, unknown fields, unquoted times with a time of day, unknown types', async () => {
    const { logging } = await withOperations();
    for (const filter of [
      'request_type=CreateBucket and operation_state=RUNNING',
      'request_type=CreateBucket AND bucket_id=first',
      'request_type=CreateBucket AND operation_start_time>=2026-03-01T12:00:00Z',
      'request_type=DeleteEverything',
      'request_type!=CreateBucket',
    ]) {
      const res = await list(logging, filter);
      expect(res.status, filter).toBe(400);
      expect(errorOf(res).status).toBe('INVALID_ARGUMENT');
    }
  });

  it('lists by request type in the documented forms, narrowed by start time, finish time and state', async () => {
    const { logging, first, second, update } = await withOperations();
    expect(names(await list(logging, 'request_type=CreateBucket'))).toEqual([second, first]);
    expect(names(await list(logging, 'request_type = "CreateBucketAsync"'))).toEqual([second, first]);
    expect(names(await list(logging, 'request_type=UpdateBucket'))).toEqual([update]);
    expect(names(await list(logging, 'request_type=CopyLogEntries'))).toEqual([]);
    const secondStart = new Date(START + 1_000).toISOString();
    expect(names(await list(logging, `request_type=CreateBucket AND operation_start_time>="${secondStart}"`))).toEqual([second]);
    expect(names(await list(logging, `request_type=CreateBucket AND operation_start_time<"${secondStart}"`))).toEqual([first]);
    expect(names(await list(logging, 'request_type=CreateBucket AND operation_start_time>=2026-03-02'))).toEqual([]);
    expect(names(await list(logging, 'request_type=CreateBucket AND operation_state=OPERATION_STATE_SUCCEEDED'))).toEqual([first]);
    expect(names(await list(logging, 'request_type=CreateBucket AND operation_state!=SUCCEEDED'))).toEqual([second]);
    expect(names(await list(logging, `request_type=CreateBucket AND operation_finish_time<="${secondStart}"`))).toEqual([first]);
  });
});

describe("what Google's generated clients send is accepted as sent", () => {
  const clientHeaders = {
    'x-goog-api-client': 'gdcl/8.0.0 gl-node/20.19.0',
    'user-agent': 'google-api-nodejs-client/8.0.0 (gzip)',
    'accept-encoding': 'gzip',
    'x-goog-user-project': 'demo-project',
  };

  it('takes the standard query parameters and client headers on every API', async () => {
    const emulator = await clocked.start();
    const standard = '$alt=json%3Benum-encoding%3Dint&alt=json&prettyPrint=false&fields=name&quotaUser=u1&%24.xgafv=2';
    const calls: [string, string][] = [
      ['google-apikeys', `/v2/${KEY}`],
      ['google-logging', `/v2/${PARENT}/buckets`],
      ['google-logging', `/v2/${PARENT}/operations?filter=request_type%3DCreateBucket`],
      ['google-dns', '/dns/v1/projects/demo-project/managedZones/demo-zone/changes'],
    ];
    for (const [service, path] of calls) {
      const res = await call(emulator.serviceUrl(service), 'GET', `${path}${path.includes('?') ? '&' : '?'}${standard}`, { headers: clientHeaders });
      expect(res.status, path).toBe(200);
    }
  });

  it('takes a bucket read and sent back whole (output-only fields), snake_case names and a snake_case update mask', async () => {
    const emulator = await clocked.start({ google: { buckets: { scheduledMs: 0, waitingForPermissionsMs: 0, runningMs: 0 } } });
    const logging = emulator.serviceUrl('google-logging');
    expect((await call(logging, 'POST', `/v2/${PARENT}/buckets:createAsync?bucketId=whole`, { body: { retention_days: 40 }, headers: clientHeaders })).status).toBe(200);
    const read = (await call(logging, 'GET', `/v2/${PARENT}/buckets/whole`)).json as Record<string, unknown>;
    expect(read).toMatchObject({ retentionDays: 40, lifecycleState: 'ACTIVE' });
    const res = await call(logging, 'POST', `/v2/${PARENT}/buckets/whole:updateAsync?updateMask=retention_days`, { body: { ...read, retentionDays: 50 } });
    expect(res.status).toBe(200);
    expect(emulator.google.buckets.bucket(`${PARENT}/buckets/whole`)?.retentionDays).toBe(50);
    // Unknown fields stay refused, as the API refuses them.
    const unknown = await call(logging, 'POST', `/v2/${PARENT}/buckets:createAsync?bucketId=x`, { body: { colour: 'red' } });
    expect(errorOf(unknown).status).toBe('INVALID_ARGUMENT');
  });

  it('takes a DNS change with the fields of a Change read back (kind, status, id) and snake_case names', async () => {
    const emulator = await clocked.start();
    const dns = emulator.serviceUrl('google-dns');
    const change = { kind: 'dns#change', status: 'pending', id: 'ignored', is_serving: false, additions: [{ kind: 'dns#resourceRecordSet', name: 'api.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.20'], signature_rrdatas: [] }] };
    const res = await call(dns, 'POST', '/dns/v1/projects/demo-project/managedZones/demo-zone/changes', { body: change, headers: clientHeaders });
    expect(res.status).toBe(200);
    expect((res.json as { id: string }).id).not.toBe('ignored');
  });
});
