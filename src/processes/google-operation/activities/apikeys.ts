/**
 * API Keys v2 activities: one HTTP call each. The deletion is guarded by the workflow (it is not re-sent
 * blindly); polls read the returned operation.
 */
import { ApplicationFailure } from '@temporalio/common';
import { googleFor, type ActivityDeps } from '../../../activities/context';
import type { OperationView } from '../model';
import { etagMismatchMessage } from '../../../http/google';
import { FailureType } from '../../../http/retry-policy';
import { isFailure, operationView, OPERATION_SHAPE, pick, resourcePath, RESOURCE_SHAPE, unlessNotFound, type GoogleOperation } from './operations';
import { expectShape } from '../../../http/answer';
import { countPoll } from '../../../telemetry/metrics';
import { quietly } from '../../../activities/quiet-poll';
import { Process } from '../names';

const KEY_FIELDS = ['name', 'uid', 'displayName', 'createTime', 'updateTime', 'deleteTime', 'etag'] as const;

export function summarizeKey(key: Record<string, unknown>): Record<string, unknown> {
  return pick(key, KEY_FIELDS);
}

export function createApiKeyActivities(deps: ActivityDeps) {

  const activities = {
    /** DELETE /v2/{name}?etag= — starts the deletion; a stale etag is an EtagMismatchError that says so. */
    async deleteApiKey(input: { name: string; etag?: string }): Promise<OperationView> {
      try {
        const res = await googleFor(deps).apikeys.request<GoogleOperation>({ method: 'DELETE', path: `/v2/${resourcePath(input.name)}`, query: { etag: input.etag } });
        return operationView(expectShape<GoogleOperation>(res, 'DELETE', OPERATION_SHAPE), summarizeKey);
      } catch (err) {
        if (isFailure(err, FailureType.EtagMismatch)) {
          throw ApplicationFailure.create({
            type: FailureType.EtagMismatch,
            message: `${etagMismatchMessage(`API key ${input.name}`, input.etag)}. ${err.message}`,
            nonRetryable: true,
            details: err.details as unknown[] | undefined,
            cause: err,
          });
        }
        throw err;
      }
    },

    /** GET /v2/{name} — the key (deleted keys show `deleteTime` for 30 days); undefined when it does not exist. */
    async getApiKey(input: { name: string }): Promise<Record<string, unknown> | undefined> {
      const res = await unlessNotFound(() => googleFor(deps).apikeys.request<Record<string, unknown>>({ method: 'GET', path: `/v2/${resourcePath(input.name)}` }));
      return res && summarizeKey(expectShape(res, 'GET', RESOURCE_SHAPE));
    },

    /** GET /v2/operations/{id} */
    async getApiKeyOperation(input: { name: string }): Promise<OperationView> {
      countPoll(Process.ApiKeyDelete);
      const res = await googleFor(deps).apikeys.request<GoogleOperation>({ method: 'GET', path: `/v2/${resourcePath(input.name)}` });
      return operationView(expectShape<GoogleOperation>(res, 'GET', OPERATION_SHAPE), summarizeKey);
    },
  };
  // The same poll as a quiet poll (see quiet-poll.ts): attempts are polls, unchanged ones cost the workflow nothing.
  return { ...activities, quietGetApiKeyOperation: quietly(activities.getApiKeyOperation) };
}
