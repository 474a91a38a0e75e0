/**
 * Feed sinks: where a feed's new events go. One activity, `deliverFeedEvents`, idempotent by event id
 * for every sink (file: tail check; HTTP: same batch bytes, receivers dedupe by id; Cloud Logging:
 * `insertId`), so a retry after a failure whose outcome was unknown never duplicates an event.
 */
import { isAbsolute, resolve } from 'node:path';
import type { ActivityDeps } from '../context';
import { DEFAULT_LOG_ID, DEFAULT_SINK_SECRET_ENV, defaultSinkFile, type FeedEvent, type SinkConfig } from '../../common/feeds';
import { appendEventsOnce } from './file';
import { postSignedBatches } from './http';
import { writeLogEntries } from './logging';

export interface DeliverFeedEventsInput {
  feed: string;
  sink: SinkConfig;
  /** Oldest first. */
  events: FeedEvent[];
}

export interface DeliverFeedEventsResult {
  sink: SinkConfig['kind'];
  delivered: number;
  /** Events found already delivered by an earlier attempt (file sink). */
  alreadyPresent: number;
  /** Where they went (file path, URL or log name). */
  destination: string;
}

export function createSinkActivities(deps: ActivityDeps) {
  return {
    async deliverFeedEvents(input: DeliverFeedEventsInput): Promise<DeliverFeedEventsResult> {
      const { sink, feed, events } = input;
      switch (sink.kind) {
        case 'file': {
          const file = sink.path ?? defaultSinkFile(feed);
          const path = isAbsolute(file) ? file : resolve(deps.dataDir, file);
          const { written, alreadyPresent } = await appendEventsOnce(path, feed, events);
          return { sink: 'file', delivered: written, alreadyPresent, destination: path };
        }
        case 'http':
          await postSignedBatches({ url: sink.url, secretEnv: sink.secretEnv ?? DEFAULT_SINK_SECRET_ENV, feed, events });
          return { sink: 'http', delivered: events.length, alreadyPresent: 0, destination: sink.url };
        case 'logging':
          await writeLogEntries(deps.google.logging, { parent: sink.parent, logId: sink.logId, feed, events });
          return { sink: 'logging', delivered: events.length, alreadyPresent: 0, destination: `${sink.parent}/logs/${sink.logId ?? DEFAULT_LOG_ID}` };
      }
    },
  };
}
