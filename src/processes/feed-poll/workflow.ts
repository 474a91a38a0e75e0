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
 *
 * Events never enter history: the fetch activity spools each page's events on the worker and returns
 * their ids; the delivery activity reads them back by id. History holds ids, counts and the cursor.
 * Page 1 goes to the shared task queue; it returns the task queue of the worker that fetched it (each worker
 * process polls one of its own, `worker.ts`), and the later pages and the delivery go there, so they find the
 * spool on any fleet, shared volume or not. When that worker goes away mid-poll, its queue takes no task: the
 * poll starts again on the shared queue (bounded, `MAX_WORKER_RESTARTS`).
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  uuid4,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { FeedPollActivities } from './activities';
import { FEED_CONTROL, READ } from '../../workflows/kit/activity-options';
import { BACKOFF, temporalRetryPolicy } from '../../common/backoff';
import { permanentTypes } from '../../common/failures';
import { workerGone } from '../../common/activity-failures';
import {
  FEED_WINDOW,
  defaultEarlyWaitMs,
  earlyWaitOf,
  describeFeedOutcome,
  emptyScan,
  FeedCursorInputSchema,
  FeedPollRunInputSchema,
  isFeedProblem,
  mergeKnownIds,
  newCursor,
  FeedFailure,
  parseFeed,
  pollDecision,
  possibleGap,
  scanPage,
  sinkProblems,
  sinkTrustRefusal,
  feedScheduleId,
  pollFeedUpdate,
  stopFeedCursorSignal,
  type FeedCursor,
  type FeedCursorInput,
  type FeedRef,
  type FeedCursorStatus,
  type FeedPollOutcome,
  type FeedPollOutcomeBase,
  type FeedPollRequest,
  type FeedPollRunInput,
  type SinkConfig,
} from './model';
import { LonghaulProcess, LonghaulState, LonghaulTarget } from '../../common/search-attributes';
import { DEFAULT_PAUSE_AFTER_FAILURES } from '../scheduled-run/model';
import { reportingFailureToSchedule } from '../scheduled-run/workflow';
import { OutageWatch, outageCause } from '../../workflows/kit/outage-watch';
import { refuseUntrusted } from '../../workflows/kit/trusted-inputs';
import { accumulatedOutageBounds } from '../../common/outage';
import { statusQuery, upsertAttributes } from '../../workflows/kit/status-tracker';
import { validatedWorkflow } from '../../workflows/kit/validated-input';
import { FEED_FAILURES, SINK_FAILURES } from './failures';
import { mustContinueAsNew } from '../../workflows/kit/run-budget';
import { summarized } from '../../workflows/kit/activity-summaries';
import { FEED_POLL_SUMMARIES } from './summaries';
import { Process } from './names';

/** The messages the cursor handles besides its status (defined with the model, which the feed-cursor activity imports). */
export { pollFeedUpdate, stopFeedCursorSignal } from './model';
export const feedCursorStatusQuery = statusQuery<FeedCursorStatus>();

/**
 * Polls one run handles before it continues as new, carrying only the cursor. Each poll may carry up to
 * 300 events through history, and a cached run's worker-side state grows with every poll (measured with
 * `bench:feeds`: about 0.3 MB per poll, released by continue-as-new), so runs are kept short.
 */
export const POLLS_PER_RUN = 20;
export { MAX_POLLS_PER_RUN } from './model';


const api = summarized(proxyActivities<FeedPollActivities>(READ), FEED_POLL_SUMMARIES);

/** A feed's sink deliveries: enough to ride out a restart of the receiver; after that the poll reports the failure. */
export const FEED_SINK: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: temporalRetryPolicy(BACKOFF.feedRetry, {
    maximumAttempts: 8,
    nonRetryableErrorTypes: [...permanentTypes(SINK_FAILURES), FEED_FAILURES.SpoolMissing.type],
  }),
};

const sink = summarized(proxyActivities<FeedPollActivities>(FEED_SINK), FEED_POLL_SUMMARIES);

/** `patched()` id: polls recorded before a poll's later pages and its delivery ran on the worker that fetched its first page. */
const SAME_WORKER_PATCH = 'feed-poll-same-worker';
/**
 * How long an activity waits on a worker's own task queue before the poll concludes that the worker is gone. That
 * queue has its own activity slots, taken only by feed polls (one at a time per feed), so a live worker starts its
 * tasks at once.
 */
const WORKER_QUEUE_START_TIMEOUT = '15 seconds';
/** How soon a worker that dies under one of those activities is noticed (the activities heartbeat, `keep-alive.ts`). */
const WORKER_QUEUE_HEARTBEAT_TIMEOUT = '10 seconds';
/** Passes of one poll, each ended by the loss of the worker holding its events, before the run reports it unavailable. */
export const MAX_WORKER_RESTARTS = 3;

/** The activities of a poll's later steps, on the worker that fetched its first page (the spool is there). */
function onWorker(workerQueue: string) {
  const pinned: ActivityOptions = { taskQueue: workerQueue, scheduleToStartTimeout: WORKER_QUEUE_START_TIMEOUT, heartbeatTimeout: WORKER_QUEUE_HEARTBEAT_TIMEOUT };
  return { api: summarized(proxyActivities<FeedPollActivities>({ ...READ, ...pinned }), FEED_POLL_SUMMARIES), sink: summarized(proxyActivities<FeedPollActivities>({ ...FEED_SINK, ...pinned }), FEED_POLL_SUMMARIES) };
}

/** A pass of a poll ended because the worker holding its spool is gone. */
interface WorkerGone {
  kind: 'worker-gone';
  pollId: string;
  workerQueue: string;
  step: 'page fetch' | 'delivery';
}

const control = summarized(proxyActivities<FeedPollActivities>(FEED_CONTROL), FEED_POLL_SUMMARIES);

/**
 * A page's event ids. Histories recorded before events were spooled carry the events themselves in the
 * fetch results; replaying them (a cursor that was running during the upgrade) must give the same ids.
 */
function pageIds(page: { ids?: string[]; events?: { id: string | number }[] }): string[] {
  return page.ids ?? (page.events ?? []).map((e) => String(e.id));
}

/**
 * One holder at a time, in arrival order: each caller chains on the completion of the one before. (A
 * `condition(() => !busy)` lets every waiter through in the same activation, before `busy` is set.)
 */
class FifoMutex {
  private tail: Promise<void> = Promise.resolve();
  /** Callers holding or waiting for the mutex. */
  pending = 0;

  run<T>(fn: () => Promise<T>): Promise<T> {
    this.pending++;
    const result = this.tail.then(fn).finally(() => this.pending--);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

export const feedCursor = validatedWorkflow('feedCursor', { what: 'feed cursor', failures: FEED_FAILURES, schema: FeedCursorInputSchema }, runCursor);

async function runCursor(input: FeedCursorInput): Promise<FeedCursorStatus> {
  const ref = parseFeed(input.feed) as FeedRef;
  const cursor: FeedCursor = input.cursor ?? newCursor(ref.path);
  // Older cursors (carried by continue-as-new from an earlier version) lack newer counters.
  cursor.counters = { ...newCursor(cursor.feed).counters, ...cursor.counters };
  const mutex = new FifoMutex();
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
    queuedPolls: Math.max(0, mutex.pending - 1),
  });

  upsertAttributes([
    { key: LonghaulProcess, value: Process.FeedCursor },
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
    const decision = pollDecision(cursor, Date.now(), earlyWaitOf(req) ?? defaultEarlyWaitMs(cursor.pollIntervalSeconds));
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
    // The poll's later pages and its delivery run on the worker that fetched its first page, whose spool holds the
    // events; runs recorded before sent them to the shared queue (any worker).
    const sameWorker = patched(SAME_WORKER_PATCH);
    for (let restarts = 0; ; restarts++) {
      const done = await fetchAndDeliver(req, waitedMs, previousPollAt, sameWorker);
      if (done.kind !== 'worker-gone') return restarts > 0 ? { ...done, workerRestarts: restarts } : done;
      // Nothing was delivered and the cursor did not move: the events are fetched again, by another worker.
      cursor.counters.workerRestarts++;
      const gone = `the worker that fetched poll ${done.pollId} (task queue ${done.workerQueue}) took no ${done.step} for ${WORKER_QUEUE_START_TIMEOUT}: it is gone, and its spool with it`;
      if (restarts + 1 >= MAX_WORKER_RESTARTS) {
        return { ...base(req, waitedMs), kind: 'unavailable', error: `${gone}; fetched ${restarts + 1} time(s), each time on a worker that went away`, workerRestarts: restarts };
      }
      setCurrentDetails(`${cursor.feed}: ${gone}; fetching again on the shared queue (${restarts + 1} of ${MAX_WORKER_RESTARTS - 1} restarts)`);
      upsertAttributes([{ key: LonghaulState, value: 'refetching' }]);
      // Page 1 went out already: the next one waits for the server's interval.
      const due = pollDecision(cursor, Date.now(), Number.POSITIVE_INFINITY);
      if (due.kind === 'wait') await sleep(due.delayMs);
    }
  };

  /** One pass of a poll: fetch its pages, deliver the new events, advance the cursor. */
  const fetchAndDeliver = async (
    req: FeedPollRequest,
    waitedMs: number,
    previousPollAt: number | undefined,
    sameWorker: boolean,
  ): Promise<FeedPollOutcome | WorkerGone> => {
    // The events of this poll wait in the worker's spool under this id; history gets their ids only.
    const pollId = uuid4();
    const unavailable = (err: unknown): FeedPollOutcome => {
      const error = outageCause(err);
      if (error === undefined) throw err;
      // Nothing delivered and the cursor unchanged: the run waits out the outage and asks again.
      cursor.counters.unavailable++;
      return { ...base(req, waitedMs), kind: 'unavailable', error };
    };
    let first: Awaited<ReturnType<typeof api.fetchFeedPage>>;
    try {
      first = await api.fetchFeedPage({ feed: cursor.feed, etag: cursor.etag, spool: { pollId, page: 1 } });
    } catch (err) {
      return unavailable(err);
    }
    // Timed from the answer: the request may have left long after `sentAt` (results recorded before
    // `answeredAt` existed carry only `sentAt`).
    const polledAt = first.answeredAt ?? first.sentAt;
    cursor.lastPolledAt = polledAt;
    if (first.pollIntervalSeconds !== undefined) cursor.pollIntervalSeconds = first.pollIntervalSeconds;
    cursor.counters.polls++;
    if (first.notModified) {
      cursor.counters.notModified++;
      return { ...base(req, waitedMs), kind: 'not-modified' };
    }
    const workerQueue = sameWorker ? first.workerQueue : undefined;
    const pinned = workerQueue === undefined ? { api, sink } : onWorker(workerQueue);
    const gone = (err: unknown, step: WorkerGone['step']): WorkerGone | undefined =>
      workerQueue !== undefined && workerGone(err) ? { kind: 'worker-gone', pollId, workerQueue, step } : undefined;

    const known = new Set(cursor.knownIds);
    const scan = scanPage(emptyScan(), pageIds(first), known);
    let next = first.next;
    let pages = 1;
    let fetchedBytes = first.bytes;
    // New events are at the head: read on until a page reaches what was delivered, or the window ends.
    while (!scan.overlap && next && scan.windowIds.length < FEED_WINDOW) {
      let page: typeof first;
      try {
        page = await pinned.api.fetchFeedPage({ feed: cursor.feed, url: next, spool: { pollId, page: pages + 1 } });
      } catch (err) {
        return gone(err, 'page fetch') ?? unavailable(err);
      }
      cursor.counters.extraPages++;
      pages++;
      fetchedBytes += page.bytes;
      scanPage(scan, pageIds(page), known);
      next = page.next;
    }
    const gap = possibleGap({
      knownCount: known.size,
      overlap: scan.overlap,
      freshCount: scan.fresh.length,
      windowCount: scan.windowIds.length,
      sinceLastPollMs: previousPollAt === undefined ? undefined : polledAt - previousPollAt,
    });
    const fresh = [...scan.fresh].reverse();
    if (fresh.length > 0) {
      try {
        await pinned.sink.deliverFeedEvents({ feed: cursor.feed, sink: req.sink, spool: { pollId }, ids: fresh });
      } catch (err) {
        if (isCancellation(err)) throw err;
        const lost = gone(err, 'delivery');
        if (lost) return lost;
        // The cursor does not advance: the next poll sends the old ETag and gets these events again.
        cursor.counters.sinkFailures++;
        const message = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
        return { ...base(req, waitedMs), kind: 'sink-failed', pending: fresh.length, error: message, fetchedBytes };
      }
    }
    cursor.etag = first.etag;
    cursor.knownIds = mergeKnownIds(scan.windowIds, cursor.knownIds);
    cursor.counters.delivered += fresh.length;
    if (gap) cursor.counters.gaps++;
    return { ...base(req, waitedMs), kind: 'delivered', delivered: fresh.length, pages, possibleGap: gap, repeatedAcrossPages: scan.repeatedAcrossPages, fetchedBytes };
  };

  setHandler(
    pollFeedUpdate,
    async (req) => {
      const earlier = handled.get(req.requestId);
      if (earlier) return earlier;
      return mutex.run(async () => {
        // The same request may have been queued twice (a retried activity): answer it once.
        const done = handled.get(req.requestId);
        if (done) return done;
        const outcome = await pollOnce(req);
        pollsThisRun++;
        lastOutcome = outcome;
        handled.set(req.requestId, outcome);
        if (handled.size > 50) handled.delete(handled.keys().next().value!);
        setCurrentDetails(describeFeedOutcome(outcome).join(' · '));
        upsertAttributes([{ key: LonghaulState, value: outcome.kind }]);
        return outcome;
      });
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
  await condition(() => stopping || mustContinueAsNew({ units: pollsPerRun }, pollsThisRun));
  // Never drop a poll in flight: its outcome belongs to the cursor that continues.
  await condition(allHandlersFinished);
  if (stopping) return status();
  return continueAsNew<typeof feedCursor>({ feed: cursor.feed, cursor, pollsPerRun: input.pollsPerRun });
}

/**
 * The scheduled run (and the one-off `feed-poll`): one poll of the feed through its entity workflow.
 * When the API cannot be reached, the run waits (durable timer, backoff) and asks for another poll,
 * within its outage budget; the Schedule's overlap policy skips the ticks that fall in meanwhile. A
 * run that fails (a permanent answer, a spent budget) counts towards pausing its Schedule.
 */
export const feedPollRun = validatedWorkflow(
  'feedPollRun',
  {
    what: 'feed poll',
    failures: FEED_FAILURES,
    schema: FeedPollRunInputSchema,
    // A sink writing outside the data directory or naming a variable (secretEnv) is refused before anything runs;
    // runs of an earlier release meet the same rules in the delivery activity.
    first: (input) => refuseUntrusted(sinkTrustRefusal(input.sink as SinkConfig | undefined, typeof input.feed === 'string' ? input.feed : undefined)),
  },
  pollRun,
);

async function pollRun(input: FeedPollRunInput): Promise<FeedPollOutcome> {
  const ref = parseFeed(input.feed);
  const feed = isFeedProblem(ref) ? input.feed : ref.path;
  upsertAttributes([
    { key: LonghaulProcess, value: Process.FeedPoll },
    { key: LonghaulTarget, value: feed },
  ]);
  const pauseAfterFailures = input.pauseAfterFailures ?? DEFAULT_PAUSE_AFTER_FAILURES;
  return reportingFailureToSchedule({ scheduleId: feedScheduleId(feed), pauseAfterFailures }, async () => {
    const watch = new OutageWatch(`polling ${feed}`, accumulatedOutageBounds(input.outage), (delayMs, error, state) => {
      upsertAttributes([{ key: LonghaulState, value: 'waiting-out-outage' }]);
      setCurrentDetails(`${feed}: the API cannot be reached (${error}); asking again in ${Math.round(delayMs / 1000)} s (wait ${state.waits})`);
    });
    const info = workflowInfo();
    for (let attempt = 0; ; attempt++) {
      const startedAt = Date.now();
      const outcome = await control.requestFeedPoll({
        feed,
        request: {
          requestId: `${info.workflowId}/${info.runId}${attempt === 0 ? '' : `/${attempt}`}`,
          sink: input.sink,
          earlyWaitMs: earlyWaitOf(input),
          origin: input.origin ?? 'schedule',
        },
      });
      if (outcome.kind === 'unavailable') {
        await watch.wait(outcome.error, startedAt);
        continue;
      }
      watch.recovered();
      const result: FeedPollOutcome = watch.state.waits > 0 ? { ...outcome, outage: { ...watch.state } } : outcome;
      upsertAttributes([{ key: LonghaulState, value: result.kind }]);
      setCurrentDetails(describeFeedOutcome(result).join(' · '));
      return result;
    }
  });
}
