/**
 * The API-key deletion workflow on a real Temporal server with a real worker and the emulator: success with
 * the 30-day note, an operation error, a stale etag, a lost answer, a RetryInfo-demanded wait, and names
 * rejected before any call.
 */
import { describe, expect, it } from 'vitest';
import { apiKeyDelete } from '../../src/processes/google-operation/apikey-delete';
import { operationStatusQuery } from '../../src/processes/google-operation/operation';
import { GoogleOperationFailure } from '../../src/processes/google-operation/model';
import type { ApiKeyDeleteInput } from '../../src/processes/google-operation/input';
import { FailureType } from '../../src/http/retry-policy';
import { LonghaulProcess, LonghaulState } from '../../src/common/search-attributes';
import { requestsTo } from '../helpers/emulator';
import { timersStarted } from '../helpers/history';
import { useStack } from '../helpers/stack';
import { expectFailure } from '../helpers/failures';
import { FAST_POLL_5_MIN } from '../helpers/presets';

const DAY_MS = 24 * 60 * 60 * 1000;
const keyName = (id: string) => `projects/demo-project/locations/global/keys/${id}`;

describe('API-key deletion workflow', () => {
  const stack = useStack({ emulator: { google: { apikeys: { deleteOperationMs: 700, failKeyIds: ['demo-key-3'] } } } });
  const start = (input: ApiKeyDeleteInput, name: string) =>
    stack.client.workflow.start(apiKeyDelete, { taskQueue: stack.taskQueue, workflowId: `apikey-${name}-${Date.now()}`, args: [input] });

  it('deletes the key, polls its operation to done and says it stays retrievable for 30 days', async () => {
    const name = keyName('demo-key-1');
    const etag = stack.emulator.google.apikeys.etag(name);
    const handle = await start({ name, etag, poll: FAST_POLL_5_MIN }, 'ok');
    const result = await handle.result();
    expect(result.operation).toMatch(/^operations\//);
    expect(result.key).toMatchObject({ name, deleteTime: result.deleteTime });
    expect(Date.parse(result.retrievableUntil!) - Date.parse(result.deleteTime!)).toBe(30 * DAY_MS);
    expect(result.note).toContain('retrievable');
    expect(result.note).toContain('30 days');
    expect(stack.emulator.google.apikeys.isDeleted(name)).toBe(true);

    const status = await handle.query(operationStatusQuery);
    expect(status).toMatchObject({ phase: 'done', state: 'SUCCEEDED', operation: result.operation });
    expect(status.states).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(status.polls).toBeGreaterThanOrEqual(1);
    const attributes = (await handle.describe()).typedSearchAttributes;
    expect(attributes.get(LonghaulProcess)).toBe('apikey-delete');
    expect(attributes.get(LonghaulState)).toBe('SUCCEEDED');
  });

  it('fails with the operation error when the deletion fails on the server', async () => {
    const cause = await expectFailure(start({ name: keyName('demo-key-3'), poll: FAST_POLL_5_MIN }, 'op-error').then((h) => h.result()), GoogleOperationFailure.OperationFailed);
    expect(cause.message).toContain('the key was not deleted');
    expect(stack.emulator.google.apikeys.isDeleted(keyName('demo-key-3'))).toBe(false);
  });

  it('refuses a stale etag with an EtagMismatchError that says the key changed since it was read, without retrying', async () => {
    const name = keyName('demo-key-2');
    const readEtag = stack.emulator.google.apikeys.etag(name);
    stack.emulator.google.apikeys.modify(name, 'changed by a colleague');
    const deletesBefore = requestsTo(stack.emulator, 'DELETE', '/keys/');
    const failure = await expectFailure(start({ name, etag: readEtag, poll: FAST_POLL_5_MIN }, 'etag').then((h) => h.result()), FailureType.EtagMismatch);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(`API key ${name} changed since you read it`);
    expect(failure.message).toContain(readEtag);
    expect(requestsTo(stack.emulator, 'DELETE', '/keys/') - deletesBefore).toBe(1);
    expect(stack.emulator.google.apikeys.isDeleted(name)).toBe(false);
  });

  it('does not delete twice when the answer to the deletion was lost: it finds the deleted key instead', async () => {
    const name = keyName('demo-key-2');
    stack.emulator.setFaults([{ method: 'DELETE', path: '/keys/', kind: 'reset', afterProcessing: true, times: 1 }]);
    try {
      const deletesBefore = requestsTo(stack.emulator, 'DELETE', '/keys/');
      const result = await (await start({ name, poll: FAST_POLL_5_MIN }, 'lost-answer')).result();
      expect(requestsTo(stack.emulator, 'DELETE', '/keys/') - deletesBefore).toBe(1);
      expect(result.operation).toBeUndefined();
      expect(result.note).toContain('earlier try');
      expect(result.retrievableUntil).toBeDefined();
      expect(stack.emulator.google.apikeys.isDeleted(name)).toBe(true);
    } finally {
      stack.emulator.setFaults([]);
    }
  });

  it('waits as long as RetryInfo asks after a 429 before sending the deletion again', async () => {
    const name = keyName('demo-key-1');
    // demo-key-1 was deleted by the first test: undelete it through the emulator's API to reuse it.
    stack.emulator.google.apikeys.keys.get(name)!.deleteTime = undefined;
    stack.emulator.setFaults([{ method: 'DELETE', path: '/keys/', kind: 'status', status: 429, retryInfoSeconds: 2, times: 1 }]);
    try {
      const handle = await start({ name, poll: FAST_POLL_5_MIN }, 'retry-info');
      await handle.result();
      expect(await timersStarted(handle)).toContain(2000);
    } finally {
      stack.emulator.setFaults([]);
    }
  });

  it.each([
    ['a location other than global', keyName('x').replace('/global/', '/us-central1/'), 'must be "global"'],
    ['a malformed name', 'projects/demo-project/keys/demo-key-1', 'is not an API key name'],
    ['a bad project id', 'projects/Demo_Project/locations/global/keys/k', 'is not a project id'],
  ])('rejects %s before any call', async (_what, name, problem) => {
    stack.emulator.resetStats();
    const cause = await expectFailure(start({ name, poll: FAST_POLL_5_MIN }, 'bad-name').then((h) => h.result()), GoogleOperationFailure.InvalidInput);
    expect(cause.message).toContain(problem);
    expect(stack.emulator.stats.requests).toBe(0);
  });
});
