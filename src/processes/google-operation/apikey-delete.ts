/**
 * API-key deletion: validate the key name (location `global`) before any call → `DELETE` once (optionally
 * guarded by the etag the caller read) → poll the returned Operation to `done`. The result carries the
 * operation's response and says until when the key stays retrievable (30 days).
 */
import { ApplicationFailure } from '@temporalio/workflow';
import { ApiKeyDeleteInputSchema, type ApiKeyDeleteInput, type ApiKeyDeleteResult } from './input';
import { GoogleOperationFailure, type OperationView } from './model';
import { awaitOperation, endWith, googleApi, googlePoll, googleQuietPoll, googleSend, FailureType, sendOperation, startRun } from './operation';
import { CLOCK_SKEW_MS } from '../../common/clock-skew';
import { Process } from './names';
import { validatedWorkflow } from '../../workflows/kit/validated-input';
import { GOOGLE_OPERATION_FAILURES } from './failures';

const RETRIEVABLE_FOR_MS = 30 * 24 * 60 * 60 * 1000;

export const apiKeyDelete = validatedWorkflow('apiKeyDelete', { what: 'API key deletion', failures: GOOGLE_OPERATION_FAILURES, schema: ApiKeyDeleteInputSchema }, deleteApiKey);

async function deleteApiKey(input: ApiKeyDeleteInput): Promise<ApiKeyDeleteResult> {
  const run = startRun(Process.ApiKeyDelete, input.name);
  const notBefore = Date.now() - CLOCK_SKEW_MS.google;
  try {
    const first = await sendOperation<OperationView>({
      what: `the deletion of API key ${input.name}`,
      send: () => googleSend.deleteApiKey({ name: input.name, etag: input.etag }),
      // An earlier try whose answer was lost may have deleted it: then the key shows a recent deleteTime.
      recover: async () => {
        const key = await googleApi.getApiKey({ name: input.name });
        const deletedAt = typeof key?.deleteTime === 'string' ? Date.parse(key.deleteTime) : NaN;
        return deletedAt >= notBefore ? { name: '', done: true, state: 'SUCCEEDED', response: key } : undefined;
      },
      conflictTypes: [FailureType.FailedPrecondition, FailureType.NotFound],
      outage: input.outage,
      graceMs: input.sendOnceGraceMs ?? input.recoveryGraceMs,
    });
    run.status.phase = 'waiting';
    const done = first.name
      ? await awaitOperation(run, first, {
          what: `the deletion of API key ${input.name}`,
          bounds: input.poll,
          outage: input.outage,
          read: () => googlePoll.getApiKeyOperation({ name: first.name }),
          quiet: (request) => googleQuietPoll.quietGetApiKeyOperation({ name: first.name, ...request }),
        })
      : first;
    if (done.error) {
      throw ApplicationFailure.nonRetryable(
        `the deletion of API key ${input.name} failed on the server: ${done.error.message} (code ${done.error.code})`,
        GoogleOperationFailure.OperationFailed,
        { operation: done.name, error: done.error },
      );
    }
    const deleteTime = typeof done.response?.deleteTime === 'string' ? done.response.deleteTime : undefined;
    const retrievableUntil = deleteTime ? new Date(Date.parse(deleteTime) + RETRIEVABLE_FOR_MS).toISOString() : undefined;
    run.status.phase = 'done';
    run.observe();
    return {
      name: input.name,
      ...(done.name ? { operation: done.name } : {}),
      key: done.response,
      deleteTime,
      retrievableUntil,
      note: `API key ${input.name} is deleted. It stays retrievable (and can be undeleted) for 30 days${retrievableUntil ? `, until ${retrievableUntil}` : ''}, and is then purged.${done.name ? '' : ' (An earlier try whose answer was lost had already deleted it.)'}`,
    };
  } catch (err) {
    endWith(run, err);
  }
}
