/**
 * Conformance: Google's own generated clients against the emulator, configured with nothing but a root URL
 * and an auth client (google-auth-library's OAuth2Client holding a fixed access token), for every Google
 * flow longhaul uses: API-key get/delete and the operation polled to done; log-bucket createAsync under all
 * four parent kinds with the operation read to done, updateAsync, and the filtered operations.list (and the
 * 400 the API answers without the filter); a DNS change created and read to done. `@googleapis/logging` is
 * Logging's per-API package; Google publishes none for DNS v1 or API Keys v2, so those come from `googleapis`
 * (per-API entry points, not its index). The emulator runs on an injected clock: operations finish when the
 * test moves time, not after sleeps. Prints each client call with the request it sent and the status answered.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auth as googleAuth, logging } from '@googleapis/logging';
import { apikeys } from 'googleapis/build/src/apis/apikeys';
import { dns } from 'googleapis/build/src/apis/dns';
import { clockedEmulators } from '../helpers/emulator-http';
import { TEST_TOKEN } from '../helpers/emulator';
import type { Emulator } from '@longhaul/emulator';

const clocked = clockedEmulators(Date.UTC(2026, 4, 4, 9, 0, 0));
const covered: string[] = [];

/**
 * google-auth-library's OAuth2Client with a fixed access token; taken from the clients' own copy of the library
 * (`auth.OAuth2`), whose class the clients' types name.
 */
function authClient() {
  const auth = new googleAuth.OAuth2();
  auth.setCredentials({ access_token: TEST_TOKEN });
  return auth;
}

/**
 * Runs one client call and records it with the request the client built (method, path and query as sent) and
 * the answer; the emulator must have received exactly that one request (no retry behind the client's back).
 */
async function covers<T extends { status: number; config: { url?: string | URL; method?: string } }>(emulator: Emulator, label: string, run: () => Promise<T>): Promise<T> {
  const before = emulator.requestLog.length;
  const res = await run();
  const sent = new URL(String(res.config.url));
  expect(emulator.requestLog.slice(before)).toEqual([{ method: res.config.method, path: sent.pathname }]);
  covered.push(`${label.padEnd(58)} ${res.config.method} ${decodeURIComponent(sent.pathname + sent.search)} → ${res.status}`);
  return res;
}

afterAll(() => {
  console.log(`\nGoogle's generated clients against the emulator (root URLs only) — calls covered\n${covered.map((c) => `  ${c}`).join('\n')}\n`);
});

async function start() {
  const emulator = await clocked.start({
    google: { apikeys: { deleteOperationMs: 1_000 }, buckets: { scheduledMs: 500, waitingForPermissionsMs: 500, runningMs: 1_000 }, dns: { changeMs: 1_000 } },
  });
  const auth = authClient();
  return {
    emulator,
    keys: apikeys({ version: 'v2', rootUrl: emulator.serviceUrl('google-apikeys'), auth }),
    log: logging({ version: 'v2', rootUrl: emulator.serviceUrl('google-logging'), auth }),
    cloudDns: dns({ version: 'v1', rootUrl: emulator.serviceUrl('google-dns'), auth }),
  };
}

describe("Google's generated clients, with nothing but a root URL", () => {
  it('API Keys v2 (googleapis): get, delete with the etag, the operation polled to done', async () => {
    const { emulator, keys } = await start();
    const name = 'projects/demo-project/locations/global/keys/demo-key-1';
    const key = await covers(emulator, 'apikeys.projects.locations.keys.get', () => keys.projects.locations.keys.get({ name }));
    expect(key.data).toMatchObject({ name, displayName: 'Demo key 1' });
    const op = await covers(emulator, 'apikeys.projects.locations.keys.delete (etag)', () => keys.projects.locations.keys.delete({ name, etag: key.data.etag! }));
    expect(op.data.done).toBe(false);
    expect(op.data.name).toMatch(/^operations\//);
    expect((await covers(emulator, 'apikeys.operations.get (running)', () => keys.operations.get({ name: op.data.name! }))).data.done).toBe(false);
    clocked.now += 1_000;
    const done = await covers(emulator, 'apikeys.operations.get (done)', () => keys.operations.get({ name: op.data.name! }));
    expect(done.data).toMatchObject({ done: true, response: { '@type': 'type.googleapis.com/google.api.apikeys.v2.Key', name } });
    expect((done.data.response as { deleteTime?: string }).deleteTime).toBeDefined();
    expect(emulator.google.apikeys.isDeleted(name)).toBe(true);
  });

  it('Cloud Logging v2 (@googleapis/logging): createAsync under all four parent kinds to done, updateAsync, operations.list with its filter', async () => {
    const { emulator, log } = await start();
    const parents = {
      projects: 'projects/demo-project/locations/global',
      organizations: 'organizations/demo-org/locations/global',
      folders: 'folders/demo-folder/locations/us-central1',
      billingAccounts: 'billingAccounts/demo-billing/locations/eu',
    };
    const requestBody = { retentionDays: 30, description: 'conformance' };
    const ops = {
      projects: await covers(emulator, 'logging.projects.locations.buckets.createAsync', () => log.projects.locations.buckets.createAsync({ parent: parents.projects, bucketId: 'conf', requestBody })),
      organizations: await covers(emulator, 'logging.organizations.locations.buckets.createAsync', () => log.organizations.locations.buckets.createAsync({ parent: parents.organizations, bucketId: 'conf', requestBody })),
      folders: await covers(emulator, 'logging.folders.locations.buckets.createAsync', () => log.folders.locations.buckets.createAsync({ parent: parents.folders, bucketId: 'conf', requestBody })),
      billingAccounts: await covers(emulator, 'logging.billingAccounts.locations.buckets.createAsync', () => log.billingAccounts.locations.buckets.createAsync({ parent: parents.billingAccounts, bucketId: 'conf', requestBody })),
    };
    for (const op of Object.values(ops)) expect(op.data).toMatchObject({ done: false, metadata: { state: 'OPERATION_STATE_SCHEDULED', createBucketRequest: { bucketId: 'conf' } } });
    clocked.now += 2_000;
    const finished = [
      await covers(emulator, 'logging.projects.locations.operations.get', () => log.projects.locations.operations.get({ name: ops.projects.data.name! })),
      await covers(emulator, 'logging.organizations.locations.operations.get', () => log.organizations.locations.operations.get({ name: ops.organizations.data.name! })),
      await covers(emulator, 'logging.folders.locations.operations.get', () => log.folders.locations.operations.get({ name: ops.folders.data.name! })),
      await covers(emulator, 'logging.billingAccounts.locations.operations.get', () => log.billingAccounts.locations.operations.get({ name: ops.billingAccounts.data.name! })),
    ];
    Object.values(parents).forEach((parent, i) => {
      expect(finished[i].data).toMatchObject({ done: true, metadata: { state: 'OPERATION_STATE_SUCCEEDED' }, response: { name: `${parent}/buckets/conf`, retentionDays: 30 } });
    });

    const bucket = `${parents.projects}/buckets/conf`;
    const update = await covers(emulator, 'logging.projects.locations.buckets.updateAsync', () =>
      log.projects.locations.buckets.updateAsync({ name: bucket, updateMask: 'retentionDays,description', requestBody: { retentionDays: 90, description: 'longer' } }),
    );
    expect(update.data).toMatchObject({ done: false, metadata: { updateBucketRequest: { name: bucket, updateMask: 'retentionDays,description' } } });
    clocked.now += 2_000;
    const updated = await covers(emulator, 'logging.projects.locations.buckets.get', () => log.projects.locations.buckets.get({ name: bucket }));
    expect(updated.data).toMatchObject({ retentionDays: 90, description: 'longer', lifecycleState: 'ACTIVE' });

    const listed = await covers(emulator, 'logging.projects.locations.operations.list (filter)', () =>
      log.projects.locations.operations.list({ name: parents.projects, filter: 'request_type=CreateBucket' }),
    );
    expect(listed.data.operations?.map((o) => o.name)).toEqual([ops.projects.data.name]);
    const sinceUpdate = await covers(emulator, 'logging.folders.locations.operations.list (filter, time)', () =>
      log.folders.locations.operations.list({ name: parents.folders, filter: `request_type = "CreateBucketAsync" AND operation_start_time>="${ops.folders.data.metadata!.startTime as string}"` }),
    );
    expect(sinceUpdate.data.operations).toHaveLength(1);
    // Without the filter the API answers 400; Google's client surfaces it as a GaxiosError with the status and message.
    const unfiltered = await log.projects.locations.operations.list({ name: parents.projects }).then(
      () => undefined,
      (err: { status?: number; message?: string }) => err,
    );
    covered.push(`${'logging.projects.locations.operations.list (no filter)'.padEnd(58)} → ${unfiltered?.status} ${unfiltered?.message}`);
    expect(unfiltered?.status).toBe(400);
    expect(unfiltered?.message).toContain('request_type');
  });

  it('Cloud DNS v1 (googleapis): a change created, then read to done', async () => {
    const { emulator, cloudDns } = await start();
    const zone = { project: 'demo-project', managedZone: 'demo-zone' };
    const addition = { name: 'conf.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.44'] };
    const change = await covers(emulator, 'dns.changes.create', () => cloudDns.changes.create({ ...zone, requestBody: { additions: [addition] } }));
    expect(change.data).toMatchObject({ kind: 'dns#change', status: 'pending', additions: [addition] });
    clocked.now += 1_000;
    const done = await covers(emulator, 'dns.changes.get', () => cloudDns.changes.get({ ...zone, changeId: change.data.id! }));
    expect(done.data).toMatchObject({ id: change.data.id, status: 'done' });
    const sets = await covers(emulator, 'dns.resourceRecordSets.list', () => cloudDns.resourceRecordSets.list(zone));
    expect(sets.data.rrsets).toContainEqual(expect.objectContaining(addition));
    const latest = await covers(emulator, 'dns.changes.list (sortOrder=descending)', () => cloudDns.changes.list({ ...zone, sortOrder: 'descending', maxResults: 1 }));
    expect(latest.data.changes?.[0].id).toBe(change.data.id);
  });
});
