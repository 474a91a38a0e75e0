/**
 * The Cloud Logging sink: `POST /v2/entries:write` (spec 000), one entry per event with labels for the
 * feed and the event type. `insertId` is the event id and `timestamp` its `created_at`, which Cloud
 * Logging treats as the identity of an entry, so a retried write does not store an event twice.
 */
import type { ApiClient } from '../../../../http/api-client';
import { DEFAULT_LOG_ID, type FeedEvent } from '../../model';
import { eventBatches } from './batches';

export function logEntriesFor(parent: string, logId: string | undefined, feed: string, events: readonly FeedEvent[]) {
  const logName = `${parent}/logs/${encodeURIComponent(logId ?? DEFAULT_LOG_ID)}`;
  const projectId = /^projects\/([^/]+)$/.exec(parent)?.[1];
  return events.map((event) => ({
    logName,
    resource: { type: 'global', labels: projectId ? { project_id: projectId } : {} },
    timestamp: event.created_at,
    insertId: event.id,
    severity: 'INFO',
    labels: { feed, event_type: event.type },
    jsonPayload: event as unknown as Record<string, unknown>,
  }));
}

export async function writeLogEntries(logging: ApiClient, opts: { parent: string; logId?: string; feed: string; events: readonly FeedEvent[]; batchSize?: number }): Promise<{ batches: number }> {
  let batches = 0;
  for (const batch of eventBatches(opts.events, opts.batchSize)) {
    const entries = logEntriesFor(opts.parent, opts.logId, opts.feed, batch);
    await logging.request({ method: 'POST', path: '/v2/entries:write', body: { entries, partialSuccess: false } });
    batches++;
  }
  return { batches };
}
