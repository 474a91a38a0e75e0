/**
 * Activity-feed polling on Temporal Schedules.
 *
 * - `feedCursor` is the feed's entity workflow (id `feed-cursor:<feed>`): it holds the durable cursor
 *   (ETag, `X-Poll-Interval`, last poll time, ids already delivered) and handles one `pollFeed` Update
 *   at a time, so every worker, every scheduled run and every one-off poll share one cursor and never
 *   poll the same feed concurrently. It continues as new after a bounded number of polls.
 * - `feedPollRun` is what the Schedule starts on every tick (and what `feed-poll` starts once): it asks
 *   the entity to poll (Update-with-Start) and returns the outcome, so each run in the UI says whether
 *   it skipped, got a 304, delivered events, or found a gap.
 *
 * One poll: skip when the server's interval has not passed (or wait for it when it is about to), send
 * page 1 with `If-None-Match` (a 304 ends the poll), follow `Link` until a page reaches events already
 * delivered, dedupe by id, flag a possible gap when the 300-event window no longer reaches back to what
 * was delivered, deliver the new events oldest first, and only then advance the cursor.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { API_CALL } from './activity-options';
import {
  FEED_WINDOW,
  defaultGraceMs,
  describeFeedOutcome,
  emptyScan,
  feedRunProblems,
  isFeedProblem,
  mergeKnownIds,
  newCursor,
  parseFeed,
  pollDecision,
  possibleGap,
  scanPage,
  sinkProblems,
  type FeedCursor,
  type FeedCursorStatus,
  type FeedPollOutcome,
  type FeedPollOutcomeBase,
  type FeedPollRequest,
  type FeedPollRunInput,
} from '../common/feeds';
import { LonghaulProcess, LonghaulState, LonghaulTarget } from '../common/search-attributes';

export const pollFeedUpdate = defineUpdate<FeedPollOutcome, [FeedPollRequest]>('pollFeed');
export const stopFeedCursorSignal = defineSignal('stopFeedCursor');
export const feedCursorStatusQuery = defineQuery<FeedCursorStatus>('status');

/** Failure types (stable strings; the activity side re-exports the same values). */
const FeedFailure = { InvalidInput: 'InvalidFeedInput', CursorStopping: 'FeedCursorStopping' } as const;

/**
 * Polls one run handles before it continues as new, carrying only the cursor. Each poll may carry up to
 * 300 events through history, and a cached run's worker-side state grows with every poll (measured with
 * `bench:feeds`: about 0.3 MB per poll, released by continue-as-new), so runs are kept short.
 */
export const POLLS_PER_RUN = 20;

export interface FeedCursorInput {
  feed: string;
  /** The cursor carried over by continue-as-new. */
  cursor?: FeedCursor;
  /** Polls before continuing as new (default `POLLS_PER_RUN`). */
  pollsPerRun?: number;
}

const api = proxyActivities<Activities>(API_CALL);

/** Sink retries: enough to ride out a restart of the receiver; after that the poll reports the failure. */
const sink = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 8, nonRetryableErrorTypes: ['SinkSecretMissing', 'SinkRejected'] },
});

const control = proxyActivities<Activities>({
  // Covers the entity's wait for the interval, its fetches and its sink retries.
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export async function feedCursor(input: FeedCursorInput): Promise<FeedCursorStatus> {
  const ref = parseFeed(input?.feed);
  if (isFeedProblem(ref)) throw ApplicationFailure.nonRetryable(`invalid feed: ${ref.problem}`, FeedFailure.InvalidInput);
  const cursor: FeedCursor = input.cursor ?? newCursor(ref.path);
  let busy = false;
  let stopping = false;
  let pollsThisRun = 0;
  let lastOutcome: FeedPollOutcome | undefined;
  /** Outcomes by request id: a request sent again (activity retry) gets its outcome, not a second poll. */
  const handled = new Map<string, FeedPollOutcome>();

  const status = (): FeedCursorStatus => ({
    feed: cursor.feed,
    etag: cursor.etag,
    pollIntervalSeconds: cursor.pollIntervalSeconds,
    lastPolledAt: cursor.lastPolledAt === undefined ? undefined : new Date(cursor.lastPolledAt).toISOString(),
    nextPollAt: cursor.lastPolledAt === undefined ? undefined : new Date(cursor.lastPolledAt + cursor.pollIntervalSeconds * 1000).toISOString(),
    knownIds: cursor.knownIds.length,
    counters: { ...cursor.counters },
    lastOutcome,
    pollsThisRun,
  });

  upsertSearchAttributes([
    { key: LonghaulProcess, value: 'feed-cursor' },
    { key: LonghaulTarget, value: cursor.feed },
  ]);
  setCurrentDetails(`cursor of ${cursor.feed}: waiting for the first poll of this run`);

  const base = (req: FeedPollRequest, waitedMs: number): FeedPollOutcomeBase => ({
    feed: cursor.feed,
    requestId: req.requestId,
    at: new Date(Date.now()).toISOString(),
    pollIntervalSeconds: cursor.pollIntervalSeconds,
    waitedMs,
    counters: { ...cursor.counters },
  });

  const pollOnce = async (req: FeedPollRequest): Promise<FeedPollOutcome> => {
    const decision = pollDecision(cursor, Date.now(), req.graceMs ?? defaultGraceMs(cursor.pollIntervalSeconds));
    let waitedMs = 0;
    if (decision.kind === 'skip') {
      cursor.counters.skippedEarly++;
      return { ...base(req, 0), kind: 'skipped', reason: 'early', dueAt: new Date(decision.dueAt).toISOString() };
    }
    if (decision.kind === 'wait') {
      await sleep(decision.delayMs);
      waitedMs = decision.delayMs;
      cursor.counters.waited++;
    }

    const previousPollAt = cursor.lastPolledAt;
    const first = await api.fetchFeedPage({ feed: cursor.feed, etag: cursor.etag });
    cursor.lastPolledAt = first.sentAt;
    if (first.pollIntervalSeconds !== undefined) cursor.pollIntervalSeconds = first.pollIntervalSeconds;
    cursor.counters.polls++;
    if (first.notModified) {
      cursor.counters.notModified++;
      return { ...base(req, waitedMs), kind: 'not-modified' };
    }

    const known = new Set(cursor.knownIds);
    const scan = scanPage(emptyScan(), first.events, known);
    let next = first.next;
    let pages = 1;
    // New events are at the head: read on until a page reaches what was delivered, or the window ends.
    while (!scan.overlap && next && scan.windowIds.length < FEED_WINDOW) {
      const page = await api.fetchFeedPage({ feed: cursor.feed, url: next });
      cursor.counters.extraPages++;
      pages++;
      scanPage(scan, page.events, known);
      next = page.next;
    }
    const gap = possibleGap({
      knownCount: known.size,
      overlap: scan.overlap,
      freshCount: scan.fresh.length,
      windowCount: scan.windowIds.length,
      sinceLastPollMs: previousPollAt === undefined ? undefined : first.sentAt - previousPollAt,
    });
    const fresh = [...scan.fresh].reverse();
    if (fresh.length > 0) {
      try {
        await sink.deliverFeedEvents({ feed: cursor.feed, sink: req.sink, events: fresh });
      } catch (err) {
        if (isCancellation(err)) throw err;
        // The cursor does not advance: the next poll sends the old ETag and gets these events again.
        cursor.counters.sinkFailures++;
        const message = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
        return { ...base(req, waitedMs), kind: 'sink-failed', pending: fresh.length, error: message };
      }
    }
    cursor.etag = first.etag;
    cursor.knownIds = mergeKnownIds(scan.windowIds, cursor.knownIds);
    cursor.counters.delivered += fresh.length;
    if (gap) cursor.counters.gaps++;
    return { ...base(req, waitedMs), kind: 'delivered', delivered: fresh.length, pages, possibleGap: gap, repeatedAcrossPages: scan.repeatedAcrossPages };
  };

  setHandler(
    pollFeedUpdate,
    async (req) => {
      const earlier = handled.get(req.requestId);
      if (earlier) return earlier;
      await condition(() => !busy);
      busy = true;
      try {
        const outcome = await pollOnce(req);
        pollsThisRun++;
        lastOutcome = outcome;
        handled.set(req.requestId, outcome);
        if (handled.size > 50) handled.delete(handled.keys().next().value!);
        setCurrentDetails(describeFeedOutcome(outcome).join(' · '));
        upsertSearchAttributes([{ key: LonghaulState, value: outcome.kind }]);
        return outcome;
      } finally {
        busy = false;
      }
    },
    {
      validator: (req) => {
        if (stopping) throw ApplicationFailure.create({ type: FeedFailure.CursorStopping, message: `the cursor of ${cursor.feed} is stopping`, nonRetryable: true });
        const problems = sinkProblems(req?.sink);
        if (typeof req?.requestId !== 'string' || req.requestId === '') problems.push('requestId is required');
        if (problems.length) throw ApplicationFailure.create({ type: FeedFailure.InvalidInput, message: `invalid poll request: ${problems.join('; ')}`, nonRetryable: true });
      },
    },
  );
  setHandler(stopFeedCursorSignal, () => {
    stopping = true;
  });
  setHandler(feedCursorStatusQuery, status);

  const pollsPerRun = input.pollsPerRun ?? POLLS_PER_RUN;
  await condition(() => stopping || pollsThisRun >= pollsPerRun || workflowInfo().continueAsNewSuggested);
  // Never drop a poll in flight: its outcome belongs to the cursor that continues.
  await condition(allHandlersFinished);
  if (stopping) return status();
  return continueAsNew<typeof feedCursor>({ feed: cursor.feed, cursor, pollsPerRun: input.pollsPerRun });
}

/** The scheduled run (and the one-off `feed-poll`): one poll of the feed through its entity workflow. */
export async function feedPollRun(input: FeedPollRunInput): Promise<FeedPollOutcome> {
  const problems = feedRunProblems(input);
  if (problems.length > 0) throw ApplicationFailure.nonRetryable(`invalid feed poll: ${problems.join('; ')}`, FeedFailure.InvalidInput, { problems });
  const ref = parseFeed(input.feed);
  const feed = isFeedProblem(ref) ? input.feed : ref.path;
  upsertSearchAttributes([
    { key: LonghaulProcess, value: 'feed-poll' },
    { key: LonghaulTarget, value: feed },
  ]);
  const info = workflowInfo();
  const outcome = await control.requestFeedPoll({
    feed,
    request: { requestId: `${info.workflowId}/${info.runId}`, sink: input.sink, graceMs: input.graceMs, origin: input.origin ?? 'schedule' },
  });
  upsertSearchAttributes([{ key: LonghaulState, value: outcome.kind }]);
  setCurrentDetails(describeFeedOutcome(outcome).join(' · '));
  return outcome;
}
