/** Validation of the Google workflows' inputs (run before any call) and the starter's record-set syntax. */
import { describe, expect, it } from 'vitest';
import { apiKeyDeleteProblems, bucketCreateProblems, bucketUpdateProblems, dnsChangeProblems, parseRrset } from '../../src/processes/google-operation/input';

describe('apiKeyDeleteProblems', () => {
  it('accepts a global key name with or without an etag', () => {
    expect(apiKeyDeleteProblems({ name: 'projects/demo-project/locations/global/keys/demo-key-1' })).toEqual([]);
    expect(apiKeyDeleteProblems({ name: 'projects/123456789/locations/global/keys/demo-key-1', etag: 'W/"abc=="' })).toEqual([]);
  });

  it('names the location problem: API keys are global', () => {
    expect(apiKeyDeleteProblems({ name: 'projects/demo-project/locations/europe-west1/keys/k' })).toEqual([
      'location "europe-west1" in "projects/demo-project/locations/europe-west1/keys/k" is not supported: API keys are global resources, the location must be "global"',
    ]);
  });

  it('rejects an etag with spaces and bad poll bounds', () => {
    const problems = apiKeyDeleteProblems({ name: 'projects/demo-project/locations/global/keys/k', etag: 'a b', poll: { backoffFactor: 0.5 } });
    expect(problems).toHaveLength(2);
  });
});

describe('bucket inputs', () => {
  it('accepts every parent form', () => {
    for (const p of ['projects/demo-project', 'organizations/123', 'folders/demo-folder', 'billingAccounts/0A0A0A-0A0A0A-0A0A0A']) {
      expect(bucketCreateProblems({ parent: `${p}/locations/us-central1`, bucketId: 'audit.logs_1' })).toEqual([]);
    }
  });

  it('rejects fields set outside the update mask, since they would be ignored', () => {
    expect(bucketUpdateProblems({ name: 'projects/p-1234/locations/global/buckets/b', updateMask: ['description'], description: 'x', retentionDays: 10 })).toEqual([
      'retentionDays is set but not in updateMask, so it would be ignored',
    ]);
  });
});

describe('parseRrset', () => {
  it('reads NAME TYPE TTL RRDATA… and keeps quoted TXT values whole', () => {
    expect(parseRrset('www.demo.example.com. a 300 192.0.2.1 192.0.2.2')).toEqual({ name: 'www.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.1', '192.0.2.2'] });
    expect(parseRrset('t.demo.example.com. TXT 60 "v=spf1 -all" "x"').rrdatas).toEqual(['"v=spf1 -all"', '"x"']);
  });

  it('refuses a record set without a value or with a non-numeric TTL', () => {
    expect(() => parseRrset('www.demo.example.com. A 300')).toThrow('NAME TYPE TTL RRDATA');
    expect(() => parseRrset('www.demo.example.com. A 5m 192.0.2.1')).toThrow('TTL');
  });

  it('produces record sets the DNS change validation accepts', () => {
    expect(dnsChangeProblems({ project: 'demo-project', zone: 'demo-zone', additions: [parseRrset('api.demo.example.com. AAAA 300 2001:db8::1')] })).toEqual([]);
  });
});
