/**
 * Issue 30: one proto3 JSON reader and writer for every emulated Google route. Each route that takes a body
 * accepts a field by its lowerCamelCase JSON name or its original proto name, at every depth, and integers given
 * as decimal strings, as Google's front end does; an unknown field or a wrong type is a 400 naming its path;
 * answers use JSON names and write 64-bit integers as strings.
 */
import { describe, expect, it } from 'vitest';
import { call, clockedEmulators, type RawResponse } from '../../helpers/emulator-http';
import { DNS, LOGGING, ProtoJsonError, readProto, writeProto } from '../../../packages/emulator/src/google/proto-json';

const clocked = clockedEmulators(Date.UTC(2026, 2, 1, 12, 0, 0));
const messageOf = (res: RawResponse) => (res.json as { error: { message: string } }).error.message;

describe('the proto3 JSON reader and writer', () => {
  it('reads JSON and proto names at every depth and integers as numbers or strings; writes int64 as strings', () => {
    const change = readProto(DNS.Change, { additions: [{ name: 'a.example.', type: 'A', ttl: '300', rrdatas: ['192.0.2.1'], signature_rrdatas: [] }], status: 'done', is_serving: true });
    expect(change).toEqual({ additions: [{ name: 'a.example.', type: 'A', ttl: 300, rrdatas: ['192.0.2.1'], signatureRrdatas: [] }], isServing: true });
    expect(readProto(LOGGING.LogBucket, { retention_days: 30, analytics_enabled: false, index_configs: [{ field_path: 'jsonPayload.a', type: 'INDEX_TYPE_STRING' }] })).toEqual({
      retentionDays: 30,
      analyticsEnabled: false,
      indexConfigs: [{ fieldPath: 'jsonPayload.a', type: 'INDEX_TYPE_STRING' }],
    });
    expect(writeProto(DNS.ManagedZone, { id: 4_000_000_000, name: 'z' })).toEqual({ id: '4000000000', name: 'z' });
    expect(writeProto(LOGGING.LogBucket, { retentionDays: 30, description: undefined })).toEqual({ retentionDays: 30 });
  });

  it('names the path of an unknown field or a value of the wrong type', () => {
    expect(() => readProto(DNS.Change, { additions: [{ name: 'a.', colour: 'red' }] })).toThrow(new ProtoJsonError(`Invalid JSON payload received. Unknown name "colour" at 'additions[0]': Cannot find field.`));
    expect(() => readProto(DNS.Change, { additions: [{ ttl: 'soon' }] })).toThrow(`Invalid value at 'additions[0].ttl' (INT32), "soon"`);
    expect(() => readProto(LOGGING.LogBucket, { retentionDays: '3000000000' })).toThrow(/retentionDays' \(INT32\)/);
    expect(() => readProto(LOGGING.LogBucket, { locked: 'yes' })).toThrow(/locked' \(BOOL\)/);
  });
});

describe('every Google route that reads a body reads it as proto3 JSON', () => {
  it('Logging: a bucket with proto names and a string integer; entries:write with proto names at every depth', async () => {
    const e = await clocked.start();
    const logging = e.serviceUrl('google-logging');
    const created = await call(logging, 'POST', '/v2/projects/demo-project/locations/global/buckets:createAsync?bucketId=proto', { body: { retention_days: '45', analytics_enabled: true } });
    expect(created.status, created.text).toBe(200);
    expect((created.json as { metadata: { createBucketRequest: { bucket: unknown } } }).metadata.createBucketRequest.bucket).toEqual({ retentionDays: 45, analyticsEnabled: true });
    const write = await call(logging, 'POST', '/v2/entries:write', {
      body: { log_name: 'projects/demo-project/logs/proto', resource: { type: 'global', labels: { project_id: 'demo-project' } }, entries: [{ json_payload: { a: 1 }, insert_id: 'one', trace_sampled: false }] },
    });
    expect(write.status, write.text).toBe(200);
    expect(e.loggingEntries.entries('projects/demo-project/logs/proto')).toMatchObject([{ insertId: 'one', jsonPayload: { a: 1 }, resource: { type: 'global' } }]);
    const unknown = await call(logging, 'POST', '/v2/entries:write', { body: { entries: [{ log_name: 'projects/demo-project/logs/proto', resource: { type: 'global', colour: 'red' } }] } });
    expect(unknown.status).toBe(400);
    expect(messageOf(unknown)).toBe(`Invalid JSON payload received. Unknown name "colour" at 'entries[0].resource': Cannot find field.`);
  });

  it('DNS: a change with a string TTL and proto names; the zone id, a uint64, answered as a string', async () => {
    const e = await clocked.start();
    const dns = e.serviceUrl('google-dns');
    const zone = '/dns/v1/projects/demo-project/managedZones/demo-zone';
    const change = await call(dns, 'POST', `${zone}/changes`, { body: { additions: [{ name: 'p.demo.example.com.', type: 'A', ttl: '300', rrdatas: ['192.0.2.7'], signature_rrdatas: [] }] } });
    expect(change.status, change.text).toBe(200);
    expect((change.json as { additions: unknown[] }).additions).toEqual([{ kind: 'dns#resourceRecordSet', name: 'p.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.7'] }]);
    const wrong = await call(dns, 'POST', `${zone}/changes`, { body: { additions: [{ name: 'q.demo.example.com.', type: 'A', ttl: 'soon', rrdatas: ['192.0.2.8'] }] } });
    expect(wrong.status).toBe(400);
    expect(messageOf(wrong)).toBe(`Invalid value at 'entity.change.additions[0].ttl' (INT32), "soon"`);
    const got = await call(dns, 'GET', zone);
    expect(typeof (got.json as { id: unknown }).id).toBe('string');
  });

  it('API Keys and Logging: undelete and cancel read their (field-less) request message; a key DELETE tolerates `{}`', async () => {
    const e = await clocked.start({ google: { apikeys: { deleteOperationMs: 0 } } });
    const keys = e.serviceUrl('google-apikeys');
    const logging = e.serviceUrl('google-logging');
    const key = '/v2/projects/demo-project/locations/global/keys/demo-key-1';
    // DELETE carries its etag as a query parameter: an empty object is tolerated, a field is not.
    const withField = await call(keys, 'DELETE', key, { body: { etag: 'W/"x"' } });
    expect(withField.status).toBe(400);
    expect(messageOf(withField)).toBe('The request body must be empty.');
    expect((await call(keys, 'DELETE', key, { body: {} })).status).toBe(200);
    const unknown = await call(keys, 'POST', `${key}:undelete`, { body: { reason: 'oops' } });
    expect(unknown.status).toBe(400);
    expect(messageOf(unknown)).toBe(`Invalid JSON payload received. Unknown name "reason": Cannot find field.`);
    expect(e.google.apikeys.isDeleted(key.slice('/v2/'.length))).toBe(true);
    expect((await call(keys, 'POST', `${key}:undelete`, { body: {} })).status).toBe(200);

    const op = (await call(logging, 'POST', '/v2/projects/demo-project/locations/global/buckets:createAsync?bucketId=cancelled', { body: {} })).json as { name: string };
    const refused = await call(logging, 'POST', `/v2/${op.name}:cancel`, { body: { force: true } });
    expect(refused.status).toBe(400);
    expect(messageOf(refused)).toBe(`Invalid JSON payload received. Unknown name "force": Cannot find field.`);
    expect(e.google.buckets.operations.get(op.name)?.cancelRequestedAt).toBeUndefined();
    const cancelled = await call(logging, 'POST', `/v2/${op.name}:cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.text).toBe('{}');
  });
});
