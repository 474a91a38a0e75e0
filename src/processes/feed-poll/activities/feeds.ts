/**
 * Activity-feed reads (spec 001): one HTTP call per activity. Page 1 is a conditional request with the
 * cursor's ETag (a 304 comes back as `notModified`, not as a failure); later pages follow `Link`. The
 * feed's entity workflow decides when to poll and which events are new; this only fetches.
 *
 * The events themselves never leave the worker: they go to the poll's spool (`../sinks/spool.ts`) and
 * only their ids return to the workflow, so no history payload grows with event sizes.
 */
import { githubFor, type ActivityDeps } from '../../../activities/context';
import { FEED_PAGE_SIZE, type FeedEvent } from '../model';
import { parseLinkHeader } from '../../../http/api-client';
import { spoolPage } from './sinks/spool';
import { answer, expectList, optional, required } from '../../../http/answer';
import { countPoll } from '../../../telemetry/metrics';
import { whileBeating } from '../../../activities/keep-alive';
import { Process } from '../names';

/** Activity-feed events: the id is what the cursor remembers. */
export const FEED_EVENT_SHAPE = answer({ id: required('string'), type: optional('string'), created_at: optional('string') });

export interface FeedPageInput {
  /** Canonical feed path (`/repos/octo-org/alpha/events`). */
  feed: string;
  /** A `Link` URL of a later page; page 1 of the feed when omitted. */
  url?: string;
  /** The ETag of the last delivered poll (page 1 only). */
  etag?: string;
  /** Where this page's events are kept until delivery: the poll and the page number (1, 2, 3). */
  spool: { pollId: string; page: number };
}

export interface FeedPage {
  /** When the activity began the request (epoch ms, this worker's clock), before any wait on the rate budget. */
  sentAt: number;
  /**
   * When the answer arrived (epoch ms). The server's poll interval counts from its receipt of the request,
   * which lies between `sentAt` and this; `sentAt` can be long before the request left (a wait on the
   * fleet's rate budget happens inside the call), so the next poll is timed from this instant.
   */
  answeredAt?: number;
  notModified: boolean;
  etag?: string;
  /** `X-Poll-Interval` in seconds, when the server sent one. */
  pollIntervalSeconds?: number;
  /** The ids of the page's events in feed order (newest first); the events are in the spool. */
  ids: string[];
  /** Bytes of the page's events as spooled (for the UI and the tests; never the events themselves). */
  bytes: number;
  /** `Link: rel="next"`, when there is a next page. */
  next?: string;
  /**
   * The task queue of the worker that fetched this page and spooled its events (`ActivityDeps.workerQueue`): the
   * poll's later pages and its delivery go there. Absent from a worker without one (and from older results).
   */
  workerQueue?: string;
}

/** Keeps the spec's fields (and drops whatever else a server adds): sinks get exactly the spec's event. */
export function specEvent(raw: Record<string, unknown>): FeedEvent {
  const e: Record<string, unknown> = {};
  for (const key of ['id', 'type', 'actor', 'repo', 'payload', 'public', 'created_at', 'org']) if (raw[key] !== undefined) e[key] = raw[key];
  e.id = String(raw.id);
  return e as unknown as FeedEvent;
}

export function createFeedActivities(deps: ActivityDeps) {
  return {
    /** GET one page of an activity feed. */
    fetchFeedPage: (input: FeedPageInput): Promise<FeedPage> => whileBeating(() => fetchPage(input)),
  };

  async function fetchPage(input: FeedPageInput): Promise<FeedPage> {
    countPoll(Process.FeedPoll);
    const sentAt = deps.clock();
    const res = await githubFor(deps).request<unknown>(
      input.url
        ? { method: 'GET', path: input.url }
        : { method: 'GET', path: input.feed, query: { per_page: FEED_PAGE_SIZE }, ifNoneMatch: input.etag },
    );
    const answeredAt = deps.clock();
    const interval = Number(res.headers['x-poll-interval']);
    const page: FeedPage = {
      sentAt,
      answeredAt,
      notModified: res.notModified,
      etag: res.headers.etag,
      pollIntervalSeconds: Number.isFinite(interval) && interval > 0 ? interval : undefined,
      ids: [],
      bytes: 0,
      next: parseLinkHeader(res.headers.link).next,
      ...(deps.workerQueue ? { workerQueue: deps.workerQueue } : {}),
    };
    if (res.notModified) return page;
    const events = expectList<Record<string, unknown>>(res, 'GET', FEED_EVENT_SHAPE).map(specEvent);
    page.bytes = (await spoolPage(deps.dataDir, input.feed, input.spool, events)).bytes;
    page.ids = events.map((e) => e.id);
    return page;
  }
}
