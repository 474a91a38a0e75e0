/**
 * Activity-feed polling (spec 001, "Activity feeds"): which feeds exist, the durable cursor a feed's
 * entity workflow keeps, and the pure decisions made with it (poll now, wait briefly, or skip; which
 * events are new; whether the 300-event window may have dropped events; which ids to remember).
 *
 * Deterministic: shared by workflows, activities, the starter and tests.
 */
import * as v from 'valibot';
import { SinkSchema, type SinkConfig } from './sinks';
import { nonNegativeNumber, notBoth, object, problemsOf, wholeBetween } from '../../common/schema';
import { OutageBoundsSchema } from '../../common/outage';
import { PauseAfterFailuresSchema } from '../scheduled-run/model';
import type { CredentialChoice } from '../../common/credential';
import { isGithubLogin, isRepositoryName } from '../../common/github-names';
import { Process } from './names';
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import { failureTypes } from '../../common/failures';
import { FEED_FAILURES } from './failures';

export * from './sinks';

/** The feed kinds of spec 001, each with its path template. */
export const FEED_TEMPLATES = [
  { kind: 'public', template: '/events' },
  { kind: 'network', template: '/networks/{owner}/{repo}/events' },
  { kind: 'org', template: '/orgs/{org}/events' },
  { kind: 'repo', template: '/repos/{owner}/{repo}/events' },
  { kind: 'user', template: '/users/{username}/events' },
  { kind: 'user-org', template: '/users/{username}/events/orgs/{org}' },
  { kind: 'user-public', template: '/users/{username}/events/public' },
  { kind: 'received', template: '/users/{username}/received_events' },
  { kind: 'received-public', template: '/users/{username}/received_events/public' },
] as const;

export type FeedKind = (typeof FEED_TEMPLATES)[number]['kind'];

export interface FeedRef {
  kind: FeedKind;
  /** The canonical path (lower-case names, leading slash), e.g. `/repos/octo-org/alpha/events`. */
  path: string;
  params: Record<string, string>;
}

/** A feed holds at most this many events (spec 001, rule 4). */
export const FEED_WINDOW = 300;
/** …and only events of the past 30 days. */
export const FEED_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** The largest `per_page` the API allows. */
export const FEED_PAGE_SIZE = 100;
/** Used until the server has sent an `X-Poll-Interval` (the value GitHub documents). */
export const DEFAULT_POLL_INTERVAL_SECONDS = 60;
/**
 * Added to the server's interval before the next poll may go out, so that latency jitter between two
 * requests never makes the second one arrive early by the server's clock.
 * @format milliseconds
 */
export const POLL_SAFETY_MS = 250;

/** Failure types of the feed workflows and their activities (stable strings; one list for both sides). */
export const FeedFailure = failureTypes(FEED_FAILURES);

/** A path parameter of a feed template: `{repo}` is a repository name, every other one a login (GitHub's rules). */
function validParam(name: string, value: string): boolean {
  return name === 'repo' ? isRepositoryName(value) : isGithubLogin(value);
}

/**
 * Parses a feed path (with or without the leading slash, any case) into a `FeedRef`, or returns the
 * reason it is not one of the spec's feeds.
 */
export function parseFeed(input: string): FeedRef | { problem: string } {
  if (typeof input !== 'string' || input.trim() === '') return { problem: 'feed must be a path such as /repos/OWNER/REPO/events' };
  const path = `/${input.trim().replace(/^\/+|\/+$/g, '')}`;
  const segments = path.split('/').slice(1);
  for (const { kind, template } of FEED_TEMPLATES) {
    const parts = template.split('/').slice(1);
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const m = /^\{(\w+)\}$/.exec(parts[i]);
      if (m) {
        if (!validParam(m[1], segments[i])) ok = false;
        else params[m[1]] = segments[i].toLowerCase();
      } else if (parts[i] !== segments[i].toLowerCase()) ok = false;
    }
    if (!ok) continue;
    const canonical = template.replace(/\{(\w+)\}/g, (_m, name: string) => params[name]);
    return { kind, path: canonical, params };
  }
  return { problem: `${JSON.stringify(input)} is not an activity feed (expected one of ${FEED_TEMPLATES.map((t) => t.template).join(', ')})` };
}

export function isFeedProblem(v: FeedRef | { problem: string }): v is { problem: string } {
  return 'problem' in v;
}

/** The id of the feed's entity workflow, which holds its cursor (one per feed, shared by every worker). */
export function feedCursorWorkflowId(feedPath: string): string {
  return `${Process.FeedCursor}:${feedPath}`;
}

/** The id of the feed's Temporal Schedule. */
export function feedScheduleId(feedPath: string): string {
  return `feed:${feedPath}`;
}

/** A feed event with the spec's fields. */
export interface FeedEvent {
  id: string;
  type: string;
  actor: { id: number; login: string; display_login?: string; gravatar_id: string; url: string; avatar_url: string };
  repo: { id: number; name: string; url: string };
  payload: Record<string, unknown>;
  public: boolean;
  created_at: string;
  org?: { id: number; login: string; gravatar_id: string; url: string; avatar_url: string };
}

/** The durable per-feed cursor (kept by the feed's entity workflow, carried across continue-as-new). */
export interface FeedCursor {
  feed: string;
  /** The `ETag` of page 1 of the last poll whose events were all delivered. */
  etag?: string;
  /** The last `X-Poll-Interval` the server sent. */
  pollIntervalSeconds: number;
  /** When the last request went out (epoch ms, the worker's clock); the next may not go before `+ interval`. */
  lastPolledAt?: number;
  /** Ids of events known to be delivered that may still be in the feed, newest first (≤ 300). */
  knownIds: string[];
  counters: FeedCounters;
}

export interface FeedCounters {
  /** Polls that called the API (page 1 requests). */
  polls: number;
  /** Polls answered 304. */
  notModified: number;
  /** Runs that fired before the server's interval had passed and did not call the API. */
  skippedEarly: number;
  /** Runs that waited briefly (less than the grace) for the interval instead of skipping. */
  waited: number;
  /** Events handed to the sink and acknowledged. */
  delivered: number;
  /** Polls whose window did not reach back to what was already delivered (events may have been dropped). */
  gaps: number;
  /** Polls whose delivery failed after its retries (the cursor did not advance; the events come again). */
  sinkFailures: number;
  /** Extra page requests (pages 2 and 3). */
  extraPages: number;
  /** Polls that could not reach the API (an outage; the cursor did not move and the run waits and asks again). */
  unavailable: number;
  /**
   * Polls started again because the worker that fetched their first page (and holds their events in its spool)
   * went away before the delivery; the fetch goes again to another worker.
   */
  workerRestarts: number;
}

export function newCursor(feed: string): FeedCursor {
  return {
    feed,
    pollIntervalSeconds: DEFAULT_POLL_INTERVAL_SECONDS,
    knownIds: [],
    counters: { polls: 0, notModified: 0, skippedEarly: 0, waited: 0, delivered: 0, gaps: 0, sinkFailures: 0, extraPages: 0, unavailable: 0, workerRestarts: 0 },
  };
}

export type PollDecision =
  | { kind: 'poll' }
  /** Due within the early wait: wait this long (durable timer), then poll. */
  | { kind: 'wait'; delayMs: number; dueAt: number }
  /** Not due: do not call the API. */
  | { kind: 'skip'; dueAt: number };

/**
 * The early wait: how early before its poll is due a run may come and still wait for it (durable timer)
 * instead of skipping. By default half the interval, at most 10 s.
 */
export function defaultEarlyWaitMs(pollIntervalSeconds: number): number {
  return Math.min(10_000, Math.round((pollIntervalSeconds * 1000) / 2));
}

/**
 * The early wait a request or run input gives: `earlyWaitMs`, or `graceMs`, its former name, which inputs
 * written before (Schedules' stored runs, requests in histories) still carry.
 */
export function earlyWaitOf(given: EarlyWaitInput | undefined): number | undefined {
  return given?.earlyWaitMs ?? given?.graceMs;
}

/** The early wait as inputs give it. */
export interface EarlyWaitInput {
  /** @format milliseconds — how early a run may come and still wait for its poll to be due (default `defaultEarlyWaitMs`). */
  earlyWaitMs?: number;
  /** @deprecated The former name of `earlyWaitMs` (not the send-once grace), still read. */
  graceMs?: number;
}

/** Whether a run at `nowMs` may poll, given the interval the server last asked for. */
export function pollDecision(
  cursor: Pick<FeedCursor, 'lastPolledAt' | 'pollIntervalSeconds'>,
  nowMs: number,
  earlyWaitMs = defaultEarlyWaitMs(cursor.pollIntervalSeconds),
): PollDecision {
  if (cursor.lastPolledAt === undefined) return { kind: 'poll' };
  const dueAt = cursor.lastPolledAt + cursor.pollIntervalSeconds * 1000 + POLL_SAFETY_MS;
  if (nowMs >= dueAt) return { kind: 'poll' };
  if (dueAt - nowMs <= earlyWaitMs) return { kind: 'wait', delayMs: dueAt - nowMs, dueAt };
  return { kind: 'skip', dueAt };
}

/** Accumulates the pages of one poll: dedupes by id across pages and finds where new events end. */
export interface WindowScan {
  /** Ids seen in this poll, in feed order (newest first), each once. */
  windowIds: string[];
  /** Ids of events not delivered before, in feed order (newest first). */
  fresh: string[];
  /** Whether some page contained an id already delivered (the new events end there). */
  overlap: boolean;
  /** Same id seen again on a later page (the feed moved while paging). */
  repeatedAcrossPages: number;
}

export function emptyScan(): WindowScan {
  return { windowIds: [], fresh: [], overlap: false, repeatedAcrossPages: 0 };
}

/** Adds one page's event ids (feed order) to the scan. Returns the scan (mutated) for chaining. */
export function scanPage(scan: WindowScan, pageIds: readonly string[], known: ReadonlySet<string>): WindowScan {
  const seen = new Set(scan.windowIds);
  for (const id of pageIds) {
    if (seen.has(id)) {
      scan.repeatedAcrossPages++;
      continue;
    }
    seen.add(id);
    scan.windowIds.push(id);
    if (known.has(id)) scan.overlap = true;
    else scan.fresh.push(id);
  }
  return scan;
}

/**
 * Whether events may have been dropped between the last delivered poll and this one: the cursor
 * knew delivered ids, this poll read the whole window without meeting any of them, and either the
 * window is full (the 300-event cap drops the oldest) or the last poll is older than the 30-day limit.
 */
export function possibleGap(opts: {
  knownCount: number;
  overlap: boolean;
  freshCount: number;
  windowCount: number;
  sinceLastPollMs?: number;
  windowSize?: number;
  maxAgeMs?: number;
}): boolean {
  if (opts.knownCount === 0 || opts.overlap || opts.freshCount === 0) return false;
  const full = opts.windowCount >= (opts.windowSize ?? FEED_WINDOW);
  const aged = opts.sinceLastPollMs !== undefined && opts.sinceLastPollMs >= (opts.maxAgeMs ?? FEED_MAX_AGE_MS);
  return full || aged;
}

/**
 * The ids to remember after a delivered poll: this poll's window first (newest first), then earlier
 * known ids it did not reach, capped at the feed's window size. An id older than the newest 300 known
 * can no longer be in the feed, so forgetting it cannot cause a duplicate.
 */
export function mergeKnownIds(windowIds: readonly string[], previous: readonly string[], max = FEED_WINDOW): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const id of [...windowIds, ...previous]) {
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
    if (out.length >= max) break;
  }
  return out;
}

/** A poll request, as the scheduled run (or a one-off `feed-poll`) sends it to the feed's entity workflow. */
export interface FeedPollRequest extends EarlyWaitInput {
  /** Identifies the request (the scheduled run's workflow id): a retried request is not polled twice. */
  requestId: string;
  sink: SinkConfig;
  /** Who asked: `schedule` or `manual`. */
  origin: 'schedule' | 'manual';
}

/** What one run did. Also the scheduled run's result. */
export type FeedPollOutcome = FeedPollOutcomeBase &
  (
    | { kind: 'skipped'; reason: 'early'; dueAt: string }
    | { kind: 'not-modified' }
    | { kind: 'delivered'; delivered: number; pages: number; possibleGap: boolean; repeatedAcrossPages: number }
    | { kind: 'sink-failed'; pending: number; error: string }
    /** The API could not be reached (after the fetch's own retries): nothing was delivered, the cursor did not move. */
    | { kind: 'unavailable'; error: string }
  );

export interface FeedPollOutcomeBase {
  feed: string;
  requestId: string;
  /** When the run was handled (workflow time, ISO). */
  at: string;
  /** The interval the server asks for now. */
  pollIntervalSeconds: number;
  /** How long the run waited for the interval (0 when it did not wait). @format milliseconds */
  waitedMs: number;
  counters: FeedCounters;
  /** Set by the scheduled run when it waited out an outage before this outcome. */
  outage?: { waits: number; spentMs: number; lastError?: string };
  /** Bytes of event JSON this poll fetched (spooled on the worker, never in history). */
  fetchedBytes?: number;
  /** Times this poll started again because the worker holding its events went away (absent when none). */
  workerRestarts?: number;
}

/** What the feed entity's `status` query answers. */
export interface FeedCursorStatus {
  feed: string;
  etag?: string;
  pollIntervalSeconds: number;
  lastPolledAt?: string;
  nextPollAt?: string;
  knownIds: number;
  counters: FeedCounters;
  lastOutcome?: FeedPollOutcome;
  /** Polls handled by this run (the workflow continues as new after a bounded number). */
  pollsThisRun: number;
  /** Poll requests waiting for the one in progress (polls are strictly one at a time). */
  queuedPolls?: number;
}

/** A poll costs about 10–20 history events: 200 polls keep a cursor's run well under 10,000. */
export const MAX_POLLS_PER_RUN = 200;

/** A feed path, one of the spec's feeds (the problem `parseFeed` names otherwise). */
const FeedPathSchema = v.custom<string>(
  (feed) => !isFeedProblem(parseFeed(feed as string)),
  (issue) => `{=}${(parseFeed(issue.input as string) as { problem: string }).problem}`,
);

/**
 * What starts (or continues) a feed's cursor entity workflow, `feedCursor`. The carried cursor is checked for the
 * fields the workflow reads before it merges counters (older cursors lack newer counters, so those are optional).
 */
export const FeedCursorInputSchema = object(
  {
    feed: FeedPathSchema,
    /** The cursor carried over by continue-as-new. */
    cursor: v.optional(
      object(
        {
          feed: v.string('must be the feed path'),
          etag: v.optional(v.string('must be a string')),
          pollIntervalSeconds: nonNegativeNumber(),
          lastPolledAt: v.optional(v.number('must be epoch milliseconds')),
          knownIds: v.array(v.string('must be an event id'), 'must be a list of event ids'),
          counters: v.optional(object({}, 'must be an object of counts')),
        },
        'is set by the workflow when it continues as new; it is malformed',
      ),
    ),
    /** Polls before continuing as new (default `POLLS_PER_RUN`, in `workflow.ts`). */
    pollsPerRun: v.optional(wholeBetween(1, MAX_POLLS_PER_RUN, `must be a whole number from 1 to ${MAX_POLLS_PER_RUN}`)),
  },
  'input must be an object',
);

/** What starts (or continues) a feed's cursor entity workflow: see `FeedCursorInputSchema`. */
export interface FeedCursorInput {
  feed: string;
  cursor?: FeedCursor;
  pollsPerRun?: number;
}

/** The cursor workflow's signature, for a client that starts it by name (`FEED_CURSOR_WORKFLOW`). */
export type FeedCursorWorkflow = (input: FeedCursorInput) => Promise<FeedCursorStatus>;

/** `feedCursor`, the cursor workflow function's name (test/unit/names.test.ts holds the two together). */
export const FEED_CURSOR_WORKFLOW = 'feedCursor';

/**
 * The cursor's messages, here rather than in workflow.ts: the feed-cursor activity sends them without importing
 * workflow code. Running cursors answer to these names: they never change.
 */
export const pollFeedUpdate = defineUpdate<FeedPollOutcome, [FeedPollRequest]>('pollFeed');
export const stopFeedCursorSignal = defineSignal('stopFeedCursor');

/** Input of the scheduled (or one-off) run. */
export const FeedPollRunInputSchema = v.pipe(
  object(
  {
    feed: FeedPathSchema,
    sink: SinkSchema,
    /** @format milliseconds — how early a run may come and still wait for its poll to be due (default `defaultEarlyWaitMs`). */
    earlyWaitMs: v.optional(nonNegativeNumber()),
    /** @deprecated The former name of `earlyWaitMs` (not the send-once grace), still read. */
    graceMs: v.optional(nonNegativeNumber()),
    origin: v.optional(v.custom<'schedule' | 'manual'>(() => true)),
    /** How long a run may spend waiting out outages of the API, accumulated over the run (default 6 h, waits 10 s doubling to 3 min). */
    outage: OutageBoundsSchema,
    /** Failed scheduled runs in a row after which the Schedule pauses itself (default 5). */
    pauseAfterFailures: PauseAfterFailuresSchema,
  },
  'input must be an object',
  ),
  notBoth('earlyWaitMs', 'graceMs'),
);

export type FeedPollRunInput = v.InferInput<typeof FeedPollRunInputSchema> & CredentialChoice;

/** Every problem with a scheduled run's input (empty when valid). */
export function feedRunProblems(input: unknown): string[] {
  return problemsOf(FeedPollRunInputSchema, input);
}

/** What a run did, in lines for people (the starter's output; the workflows' current details). */
export function describeFeedOutcome(o: FeedPollOutcome): string[] {
  const c = o.counters;
  const head =
    o.kind === 'skipped'
      ? `${o.feed}: skipped, the server's poll interval (${o.pollIntervalSeconds} s) has not passed; next poll allowed at ${o.dueAt}`
      : o.kind === 'not-modified'
        ? `${o.feed}: not modified (304, did not count against the rate limit)`
        : o.kind === 'delivered'
          ? `${o.feed}: delivered ${o.delivered} new event(s) from ${o.pages} page(s)`
          : o.kind === 'unavailable'
            ? `${o.feed}: the API could not be reached; nothing delivered, the cursor did not move: ${o.error}`
            : `${o.feed}: the sink failed; ${o.pending} event(s) will be delivered by a later poll: ${o.error}`;
  const lines = [head];
  if (o.outage && o.outage.waits > 0) lines.push(`waited out an outage first: ${o.outage.waits} wait(s), ${Math.round(o.outage.spentMs / 1000)} s (last error: ${o.outage.lastError ?? '?'})`);
  if (o.workerRestarts) lines.push(`fetched again ${o.workerRestarts} time(s): the worker holding the poll's events went away`);
  if (o.kind === 'delivered' && o.possibleGap) lines.push('GAP: the feed\u2019s 300-event window no longer reaches the last delivered event; events in between may be lost');
  lines.push(`cursor totals: ${c.polls} polls, ${c.notModified} × 304, ${c.skippedEarly} skipped early, ${c.delivered} delivered, ${c.gaps} gap(s), ${c.sinkFailures} sink failure(s)`);
  return lines;
}
