/**
 * Feed sinks: where a feed's new events go. One activity, `deliverFeedEvents`, idempotent by event id
 * for every sink (file: tail check; HTTP: same batch bytes, receivers dedupe by id; Cloud Logging:
 * `insertId`), so a retry after a failure whose outcome was unknown never duplicates an event. It takes
 * ids, not events: the events wait in the poll's spool (`spool.ts`), never in workflow history.
 */
import { githubFor, type ActivityDeps } from '../../../../activities/context';
import { pathInDataDir } from '../../../../activities/data-dir';
import { outboundContext, type OutboundContext, type Resolver } from '../../../../http/outbound-policy';
import { DEFAULT_LOG_ID, defaultSinkFile, sinkSecretName, sinkTrustRefusal, type FeedEvent, type SinkConfig } from '../../model';
import { appendEventsOnce } from './file';
import { postSignedBatches } from './http';
import { writeLogEntries } from './logging';
import { markDelivered, readSpooled, type SpoolRef } from './spool';
import { longhaulMetrics } from '../../../../telemetry/metrics';
import { activityLog } from '../../../../telemetry/log';
import { whileBeating } from '../../../../activities/keep-alive';

export interface DeliverFeedEventsInput {
  feed: string;
  sink: SinkConfig;
  /** The poll whose spooled events are delivered. */
  spool: SpoolRef;
  /** Ids of the events to deliver, oldest first (the events are read from the spool). */
  ids: string[];
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
    /** Delivers a poll's spooled events by id, then marks the poll delivered (a retry returns at once). */
    deliverFeedEvents: (input: DeliverFeedEventsInput): Promise<DeliverFeedEventsResult> => whileBeating(() => deliverSpooled(deps, input)),
  };
}

async function deliverSpooled(deps: ActivityDeps, input: DeliverFeedEventsInput): Promise<DeliverFeedEventsResult> {
  const { sink, feed } = input;
  const spooled = await readSpooled(deps.dataDir, feed, input.spool, input.ids);
  if (spooled.done) return { sink: sink.kind, delivered: 0, alreadyPresent: input.ids.length, destination: await destinationOf(deps.dataDir, feed, sink) };
  let result: DeliverFeedEventsResult;
  try {
    result = await deliver(deps, feed, sink, spooled.events);
  } catch (err) {
    longhaulMetrics().sinkFailures.add(1, { sink: sink.kind });
    activityLog('warn', 'sink-failure', `${feed}: delivering ${spooled.events.length} events to the ${sink.kind} sink failed: ${(err as Error).message}`, {
      feed,
      sink: sink.kind,
      type: (err as { type?: string }).type,
      events: spooled.events.length,
    });
    throw err;
  }
  if (result.delivered > 0) longhaulMetrics().eventsDelivered.add(result.delivered, { sink: sink.kind });
  await markDelivered(deps.dataDir, feed, input.spool);
  return result;
}

/** The file sink's file: inside the data directory, links followed, or `PathOutsideDataDir` before anything is written. */
function fileSinkPath(dataDir: string, feed: string, sink: { path?: string }): Promise<string> {
  return pathInDataDir(dataDir, sink.path ?? defaultSinkFile(feed), 'file sink path');
}

async function destinationOf(dataDir: string, feed: string, sink: SinkConfig): Promise<string> {
  if (sink.kind === 'file') return fileSinkPath(dataDir, feed, sink);
  return sink.kind === 'http' ? sink.url : `${sink.parent}/logs/${sink.logId ?? DEFAULT_LOG_ID}`;
}

async function deliver(deps: ActivityDeps, feed: string, sink: SinkConfig, events: FeedEvent[]): Promise<DeliverFeedEventsResult> {
  // The same rules the workflow applies to new runs, for polls a run of an earlier release asked for.
  const refused = sinkTrustRefusal(sink, feed);
  if (refused) throw refused;
  const destination = await destinationOf(deps.dataDir, feed, sink);
  switch (sink.kind) {
    case 'file': {
      const { written, alreadyPresent } = await appendEventsOnce(destination, feed, events);
      return { sink: 'file', delivered: written, alreadyPresent, destination };
    }
    case 'http':
      await postSignedBatches({ url: sink.url, secret: sinkSecretName(sink), feed, events, ...sinkOutbound(deps) });
      return { sink: 'http', delivered: events.length, alreadyPresent: 0, destination };
    case 'logging':
      await writeLogEntries(deps.google.logging, { parent: sink.parent, logId: sink.logId, feed, events });
      return { sink: 'logging', delivered: events.length, alreadyPresent: 0, destination };
  }
}

/** The sink URL is the caller's: it passes the outbound policy, judged against the feed's own API origin. */
function sinkOutbound(deps: ActivityDeps): { outbound: () => Promise<OutboundContext>; resolve?: Resolver } {
  const resolver = deps.outbound?.resolve;
  return { outbound: () => outboundContext(githubFor(deps).baseUrl, deps.outbound?.allowedHosts ?? [], resolver), resolve: resolver };
}
