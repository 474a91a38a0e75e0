/**
 * The DNS change workflow on a real Temporal server with a real worker and the emulator: success (pending →
 * done), a change the server refuses, a lost answer, a RetryInfo-demanded wait, and input rejected before any
 * call.
 */
import { describe, expect, it } from 'vitest';
import { dnsChange } from '../../src/processes/google-operation/dns-change';
import { operationStatusQuery } from '../../src/processes/google-operation/operation';
import { GoogleOperationFailure } from '../../src/processes/google-operation/model';
import type { DnsChangeInput, ResourceRecordSet } from '../../src/processes/google-operation/input';
import { FailureType } from '../../src/http/retry-policy';
import { requestsTo } from '../helpers/emulator';
import { timersStarted } from '../helpers/history';
import { useTimeSkippingStack } from '../helpers/stack';
import { expectFailure } from '../helpers/failures';
import { FAST_POLL_5_MIN } from '../helpers/presets';

let seq = 0;
const record = (label: string, ip = '192.0.2.30'): ResourceRecordSet => ({ name: `${label}-${Date.now().toString(36)}-${seq++}.demo.example.com.`, type: 'A', ttl: 300, rrdatas: [ip] });

describe('DNS change workflow', () => {
  const stack = useTimeSkippingStack({ emulator: { google: { dns: { changeMs: 800 } } } });
  const start = (input: Omit<DnsChangeInput, 'project' | 'zone' | 'poll'> & Partial<DnsChangeInput>, name: string) =>
    stack.client.workflow.start(dnsChange, {
      taskQueue: stack.taskQueue,
      workflowId: `dns-${name}-${Date.now()}-${seq++}`,
      args: [{ project: 'demo-project', zone: 'demo-zone', poll: FAST_POLL_5_MIN, ...input }],
    });
  const zoneHas = (name: string) => stack.emulator.google.dns.rrsets('demo-project', 'demo-zone').some((r) => r.name === name);
  const changesTo = () => stack.emulator.google.dns.zones.get('demo-project/demo-zone')!.changes.length;

  it('applies additions and deletions and polls the change from pending to done', async () => {
    const added = record('api');
    await (await start({ additions: [added] }, 'add')).result();
    const replacement = { ...added, rrdatas: ['192.0.2.31'] };
    const handle = await start({ additions: [replacement], deletions: [added] }, 'replace');
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'done', additions: [replacement], deletions: [added] });
    expect(stack.emulator.google.dns.rrsets('demo-project', 'demo-zone').find((r) => r.name === added.name)?.rrdatas).toEqual(['192.0.2.31']);
    const status = await handle.query(operationStatusQuery);
    expect(status).toMatchObject({ phase: 'done', operation: result.changeId, states: ['pending', 'done'] });
  });

  it('fails without retrying when the server refuses the change (the record already exists)', async () => {
    const before = requestsTo(stack.emulator, 'POST', '/changes');
    const failure = await expectFailure(
      start({ additions: [{ name: 'www.demo.example.com.', type: 'A', ttl: 60, rrdatas: ['192.0.2.99'] }] }, 'exists').then((h) => h.result()),
      FailureType.AlreadyExists,
    );
    expect(failure.message).toContain('already exists');
    expect(requestsTo(stack.emulator, 'POST', '/changes') - before).toBe(1);
  });

  it('does not apply the change twice when its answer was lost: it finds the change it made', async () => {
    const added = record('lost');
    stack.emulator.setFaults([{ method: 'POST', path: '/changes', kind: 'reset', afterProcessing: true, times: 1 }]);
    try {
      const changesBefore = changesTo();
      const postsBefore = requestsTo(stack.emulator, 'POST', '/changes');
      const result = await (await start({ additions: [added] }, 'lost')).result();
      expect(result.status).toBe('done');
      expect(requestsTo(stack.emulator, 'POST', '/changes') - postsBefore).toBe(1);
      expect(changesTo() - changesBefore).toBe(1);
      expect(zoneHas(added.name)).toBe(true);
    } finally {
      stack.emulator.setFaults([]);
    }
  });

  it('waits as long as RetryInfo asks after a 429 before sending the change again', async () => {
    const added = record('quota');
    stack.emulator.setFaults([{ method: 'POST', path: '/changes', kind: 'status', status: 429, retryInfoSeconds: 2, times: 1 }]);
    try {
      const handle = await start({ additions: [added] }, 'quota');
      await handle.result();
      expect(await timersStarted(handle)).toContain(2000);
      expect(zoneHas(added.name)).toBe(true);
    } finally {
      stack.emulator.setFaults([]);
    }
  });

  it.each([
    ['a zone name that is not a managed zone name', { zone: 'Demo_Zone', additions: [record('x')] }, 'is not a managed zone name'],
    ['a record name without the trailing dot', { additions: [{ name: 'x.demo.example.com', type: 'A', ttl: 60, rrdatas: ['192.0.2.1'] }] }, 'fully qualified'],
    ['an empty change', { additions: [], deletions: [] }, 'at least one addition or deletion'],
    ['an unknown record type', { additions: [{ name: 'x.demo.example.com.', type: 'BOGUS', ttl: 60, rrdatas: ['1'] }] }, 'is not a record type'],
  ])('rejects %s before any call', async (_what, input, problem) => {
    stack.emulator.resetStats();
    const cause = await expectFailure(start(input, 'bad').then((h) => h.result()), GoogleOperationFailure.InvalidInput);
    expect(cause.message).toContain(problem);
    expect(stack.emulator.stats.requests).toBe(0);
  });
});
