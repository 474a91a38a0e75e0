/**
 * Issue 13 for the DNS change lookup that follows a lost answer: a change list that is not what Cloud DNS
 * documents is a `MalformedAnswer`, never "no such change" (which would send the change a second time).
 */
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { createDnsActivities } from '../../src/processes/google-operation/activities/dns';
import type { ActivityDeps } from '../../src/activities/context';
import type { ApiClient, ApiResponse } from '../../src/http/api-client';
import { MALFORMED_ANSWER } from '../../src/http/answer';

const ZONE = '/dns/v1/projects/p/managedZones/z';
const added = { name: 'api.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.1'] };
const change = { kind: 'dns#change', id: '7', status: 'pending', startTime: '2026-11-23T17:00:05.000Z', additions: [{ kind: 'dns#resourceRecordSet', ...added }], deletions: [] };
const lookup = { project: 'p', zone: 'z', additions: [added], deletions: [], notBefore: '2026-11-23T17:00:00.000Z' };

/** DNS activities whose client answers the change list with `body` (status 200). */
function dnsAnswering(body: unknown) {
  const dns = { request: async (req: { path: string }): Promise<ApiResponse<unknown>> => ({ status: 200, headers: {}, body, url: `https://dns.example.test${req.path}`, notModified: false }) } as unknown as ApiClient;
  return createDnsActivities({ google: { dns } } as unknown as ActivityDeps);
}

describe('findDnsChange checks the change list (issue 13)', () => {
  it('finds the change with these record sets, and reads an empty zone history (no `changes`) as not found', async () => {
    expect(await dnsAnswering({ changes: [change] }).findDnsChange(lookup)).toEqual({ name: '7', done: false, state: 'pending' });
    expect(await dnsAnswering({ kind: 'dns#changesListResponse' }).findDnsChange(lookup)).toBeUndefined();
  });

  it.each<[string, unknown, string]>([
    ['`changes` that is not a list', { changes: { id: '7' } }, "200: the body's changes is an object, not an array"],
    ['a change without status', { changes: [{ ...change, status: undefined }] }, '200: change 0 has no status'],
    ['a change without startTime (its age unknown)', { changes: [{ ...change, startTime: undefined }] }, '200: change 0 has no startTime'],
    ['additions that are not a list', { changes: [{ ...change, additions: 'A 192.0.2.1' }] }, `200: change 0's additions is a string "A 192.0.2.1", not an array`],
  ])('a list with %s is MalformedAnswer naming the call, not "not found"', async (_name, body, problem) => {
    const err = await dnsAnswering(body).findDnsChange(lookup).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe(MALFORMED_ANSWER);
    expect((err as ApplicationFailure).message).toBe(`GET https://dns.example.test${ZONE}/changes: malformed answer: ${problem}`);
  });
});
