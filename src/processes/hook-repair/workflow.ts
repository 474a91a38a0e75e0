/**
 * Webhook delivery repair, run by a Temporal Schedule per hook: GitHub's own recipe ("redeliver failed
 * deliveries"), made durable and polite.
 *
 * Since the last successful run (carried by the Schedule as the previous run's result; the first run
 * looks back `lookbackMs`), list the hook's deliveries newest first (`per_page=100`, following the
 * `cursor` in `Link`) until they are older than the window; group them by `guid`; redeliver once every
 * guid with no `OK` delivery, paced with durable timers under the content-creation limits; and advance
 * the last-checked time only when every redelivery of the run was accepted.
 *
 * Permanent failures stop: a guid is redelivered at most `maxRedeliveriesPerGuid` times over all runs
 * (the counts travel in the result), then reported in `gaveUpGuids`. Outages are waited out within the
 * run's outage budget. Runs are bounded (pages, redeliveries and events per run), and a failed run
 * counts towards pausing the Schedule.
 */
import {
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { RedeliveryResult } from './activities';
import type { HookActivities } from './activities';
import { READ, withCallTimeout } from '../../workflows/kit/activity-options';
import {
  DEFAULT_CLOCK_SKEW_MS,
  DEFAULT_LOOKBACK_MS,
  DEFAULT_MAX_PAGES_PER_RUN,
  DEFAULT_MAX_REDELIVERIES_PER_GUID,
  DEFAULT_MAX_REDELIVERIES_PER_RUN,
  DEFAULT_PACING,
  DEFAULT_REDELIVERY_SETTLE_MS,
  HOOK_RUN_EVENT_BUDGET,
  awaitingRedelivery,
  carriedAttempts,
  hookLabel,
  HookRepairInputSchema,
  hookRepairScheduleId,
  HookPingInputSchema,
  nextPacedSlot,
  planRepair,
  type DeliverySummary,
  type HookRepairInput,
  type HookRepairResult,
  type HookRepairStatus,
  type HookTarget,
  type Pacing,
  type RedeliveryAttempts,
} from './model';
import { DEFAULT_PAUSE_AFTER_FAILURES } from '../scheduled-run/model';
import { LonghaulOrg, LonghaulProcess, LonghaulState, LonghaulTarget } from '../../common/search-attributes';
import { reportingFailureToSchedule } from '../scheduled-run/workflow';
import { OutageWatch } from '../../workflows/kit/outage-watch';
import { accumulatedOutageBounds } from '../../common/outage';
import { statusQuery, upsertAttributes } from '../../workflows/kit/status-tracker';
import { validatedWorkflow } from '../../workflows/kit/validated-input';
import { HOOK_FAILURES } from './failures';
import { mustContinueAsNew } from '../../workflows/kit/run-budget';
import { summarized } from '../../workflows/kit/activity-summaries';
import { HOOK_SUMMARIES } from './summaries';
import { Process } from './names';

export const hookRepairStatusQuery = statusQuery<HookRepairStatus>();

/** The hook API's activities, each call bounded by `callTimeoutMs` when given (otherwise `READ`'s minute). */
const hookApi = (callTimeoutMs?: number) => summarized(proxyActivities<HookActivities>(withCallTimeout(READ, callTimeoutMs)), HOOK_SUMMARIES);
const pingApi = hookApi();

/** Redelivery attempts refused as "spammed" before the run gives up on the rest (they wait for the next run). */
const SPAMMED_TRIES = 3;
/** How often a run looks for a redelivery it could not confirm from the answer (a malformed one). */
const CONFIRM_POLL_MS = 5_000;
/** `patched()` id: runs recorded before redelivery was known to be asynchronous looked once, not until it settles. */
const CONFIRM_UNTIL_SETTLED_PATCH = 'hook-repair-confirm-until-settled';
/** `patched()` id: runs recorded before it read only page 1 of the deliveries when looking for a redelivery. */
const CONFIRM_EVERY_PAGE_PATCH = 'hook-repair-confirm-every-page';

function previousResult(): HookRepairResult | undefined {
  const last = workflowInfo().lastResult as HookRepairResult | undefined;
  return last && typeof last.lastCheckedAt === 'number' ? last : undefined;
}

function describe(s: HookRepairStatus): string {
  const c = s.counts;
  const extra = [c.notAccepted ? `not accepted ${c.notAccepted}` : '', c.awaitingOutcome ? `awaiting the outcome of ${c.awaitingOutcome}` : '', c.gaveUp ? `gave up on ${c.gaveUp} (still failing after the cap)` : '', c.deferred ? `deferred ${c.deferred}` : '']
    .filter(Boolean)
    .map((x) => ` · ${x}`)
    .join('');
  return `${s.hook} · ${s.phase} · since ${s.windowStart} · seen ${c.seen} deliveries (${c.guids} guids, ${c.pages} pages) · failed ${c.failed} · redelivered ${c.redelivered} · skipped as already OK ${c.skippedAlreadyOk}${extra}`;
}

/**
 * Pages recorded before the activity filtered the window and reduced deliveries to `ok` carry every
 * delivery with its `status`; a run replaying such a history must decide the same way.
 */
function compatibleDeliveries(deliveries: (DeliverySummary & { status?: string })[]): DeliverySummary[] {
  return deliveries.map((d) => (typeof d.ok === 'boolean' ? d : { ...d, ok: d.status === 'OK' }));
}

/**
 * Whether this run's history has room for more work (no run nears 10,000 events): the one run-budget policy, on
 * hook repair's own budget. A run out of room ends, and the Schedule's next run goes on.
 */
const historyHasRoom = () => !mustContinueAsNew({ events: HOOK_RUN_EVENT_BUDGET });

export const hookRepair = validatedWorkflow('hookRepair', { what: 'hook repair input', failures: HOOK_FAILURES, schema: HookRepairInputSchema }, repairRun);

async function repairRun(input: HookRepairInput): Promise<HookRepairResult> {
  const pauseAfterFailures = input.pauseAfterFailures ?? DEFAULT_PAUSE_AFTER_FAILURES;
  return reportingFailureToSchedule({ scheduleId: hookRepairScheduleId(input.target, input.hookId), pauseAfterFailures }, () => repair(input));
}

async function repair(input: HookRepairInput): Promise<HookRepairResult> {
  const { target, hookId } = input;
  // A call lost with its worker (a host SIGKILLed mid-call) is tried again once its timeout has passed.
  const api = hookApi(input.apiCallTimeoutMs);
  const pacing: Pacing = { ...DEFAULT_PACING, ...input.pacing };
  const perGuid = input.maxRedeliveriesPerGuid ?? DEFAULT_MAX_REDELIVERIES_PER_GUID;
  const perRun = input.maxRedeliveriesPerRun ?? DEFAULT_MAX_REDELIVERIES_PER_RUN;
  const maxPages = input.maxPagesPerRun ?? DEFAULT_MAX_PAGES_PER_RUN;
  const settleMs = input.redeliverySettleMs ?? DEFAULT_REDELIVERY_SETTLE_MS;
  const hook = hookLabel(target, hookId);
  const previous = previousResult();
  const runStartedAt = Date.now();
  const since = previous ? previous.lastCheckedAt - (input.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS) : runStartedAt - (input.lookbackMs ?? DEFAULT_LOOKBACK_MS);

  const status: HookRepairStatus = {
    phase: 'listing',
    hook,
    windowStart: new Date(since).toISOString(),
    counts: { seen: 0, guids: 0, failed: 0, redelivered: 0, skippedAlreadyOk: 0, notAccepted: 0, pages: 0, gaveUp: 0, deferred: 0, awaitingOutcome: 0 },
  };
  setHandler(hookRepairStatusQuery, () => status);
  const show = () => setCurrentDetails(describe(status));
  upsertAttributes([
    { key: LonghaulProcess, value: Process.HookRepair },
    { key: LonghaulOrg, value: 'org' in target ? target.org : target.owner },
    { key: LonghaulTarget, value: hook },
    { key: LonghaulState, value: 'listing' },
  ]);
  show();
  let phaseBeforeOutage = status.phase;
  const watch = new OutageWatch(`repairing ${hook}`, accumulatedOutageBounds(input.outage), (delayMs, error) => {
    if (status.phase !== 'waiting-out-outage') phaseBeforeOutage = status.phase;
    status.phase = 'waiting-out-outage';
    setCurrentDetails(`${describe(status)} · the API cannot be reached (${error}); trying again in ${Math.round(delayMs / 1000)} s`);
  });
  /** An API call that waits out outages within the run's budget. */
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    const result = await watch.call(fn);
    if (status.phase === 'waiting-out-outage') status.phase = phaseBeforeOutage;
    return result;
  };
  let stoppedEarly: string | undefined;

  // Newest first: stop at the first page that reaches past the window.
  const inWindow: DeliverySummary[] = [];
  let url: string | undefined;
  do {
    if (status.counts.pages >= maxPages || !historyHasRoom()) {
      stoppedEarly = `listed ${status.counts.pages} pages, the most one run may (maxPagesPerRun ${maxPages} or its event budget); the rest of the window is left for the next run`;
      break;
    }
    const page = await call(() => api.listHookDeliveries({ target, hookId, since, url }));
    status.counts.pages++;
    const deliveries = compatibleDeliveries(page.deliveries);
    inWindow.push(...deliveries.filter((d) => d.deliveredAt >= since));
    status.counts.seen = inWindow.length;
    show();
    if (page.reachedPastWindow ?? deliveries.some((d) => d.deliveredAt < since)) break;
    url = page.next;
  } while (url);

  const plan = planRepair(inWindow);
  Object.assign(status.counts, { seen: plan.seen, guids: plan.guids, failed: plan.failed.length, skippedAlreadyOk: plan.skippedAlreadyOk });
  status.phase = 'redelivering';
  upsertAttributes([{ key: LonghaulState, value: 'redelivering' }]);
  show();

  const recent = (previous?.recentRedeliveries ?? []).filter((t) => t > runStartedAt - pacing.hourMs);
  const attempts = new Map<string, RedeliveryAttempts>((previous?.redeliveryAttempts ?? []).map((a) => [a.guid, { ...a }]));
  const redeliveredGuids: string[] = [];
  const gaveUpGuids: string[] = [];
  let refused = false;
  for (const { guid, deliveryId } of plan.failed) {
    const counted = attempts.get(guid) ?? { guid, attempts: 0, lastAt: 0 };
    if (counted.attempts >= perGuid) {
      // Its target keeps failing: redelivering again would fail again. Report it instead.
      gaveUpGuids.push(guid);
      status.counts.gaveUp++;
      continue;
    }
    if (awaitingRedelivery(attempts.get(guid), deliveryId, Date.now(), settleMs)) {
      // Redelivery is asynchronous: the one accepted earlier is not listed yet. Sending another would deliver
      // the event twice; the window stays so that its outcome is seen by a later run.
      status.counts.awaitingOutcome++;
      continue;
    }
    if (refused) {
      status.counts.notAccepted++;
      continue;
    }
    if (status.counts.redelivered >= perRun || !historyHasRoom()) {
      stoppedEarly ??= `redelivered ${status.counts.redelivered}, the most one run may (maxRedeliveriesPerRun ${perRun} or its event budget); the rest is left for the next run`;
      status.counts.deferred++;
      continue;
    }
    let accepted = false;
    for (let attempt = 1; attempt <= SPAMMED_TRIES && !accepted; attempt++) {
      const slot = nextPacedSlot(recent, Date.now(), pacing);
      if (slot > Date.now()) {
        status.phase = 'waiting-for-pacing';
        status.nextRedeliveryAt = new Date(slot).toISOString();
        show();
        await sleep(slot - Date.now());
        status.phase = 'redelivering';
        status.nextRedeliveryAt = undefined;
      }
      // Counted before it is sent: a redelivery whose answer an outage lost may still have happened.
      counted.attempts++;
      counted.lastAt = Date.now();
      attempts.set(guid, counted);
      const sent = await call(() => api.redeliverHookDelivery({ target, hookId, deliveryId, notBefore: slot }));
      // A malformed answer: the redelivery may have happened. Look for it before concluding it did not.
      const result = 'unknown' in sent ? await confirmRedelivery(sent, guid, deliveryId) : sent;
      if (result.accepted) {
        accepted = true;
        // Its delivery is listed later (redelivery is asynchronous): until then the guid is awaited.
        counted.fromDeliveryId = deliveryId;
        recent.push(result.sentAt);
        redeliveredGuids.push(guid);
        status.counts.redelivered++;
        show();
      } else if ('unknown' in result) {
        // Not found after a malformed answer: concluded not done, so not counted; the next try sends it again.
        counted.attempts--;
        recent.push(result.sentAt);
      } else {
        // Refused, so not sent: it does not count against the guid. Someone else spent this caller's
        // budget: back off a whole pacing minute before trying again.
        counted.attempts--;
        recent.push(result.sentAt);
        await sleep(pacing.minuteMs);
      }
    }
    if (!accepted) {
      status.counts.notAccepted++;
      refused = true;
    }
  }

  /**
   * After a malformed answer to a redelivery: the deliveries since it was sent hold a newer delivery of the
   * guid when the server did redeliver (it is then adopted as accepted, never sent twice). A busy hook lists
   * more than a page in that time, so every page back to the send is read. Redelivery is asynchronous, so
   * absence proves nothing at first: look again until the settle time has passed since it was sent, and only
   * then conclude it was not made.
   */
  async function confirmRedelivery(sent: RedeliveryResult & { unknown: true }, guid: string, deliveryId: number): Promise<RedeliveryResult> {
    const since = sent.sentAt - (input.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS);
    for (;;) {
      let page = await call(() => api.listHookDeliveries({ target, hookId, since }));
      for (;;) {
        if (page.deliveries.some((d) => d.guid === guid && d.id > deliveryId)) return { accepted: true, sentAt: sent.sentAt };
        if (page.reachedPastWindow || !page.next || !patched(CONFIRM_EVERY_PAGE_PATCH)) break;
        const url = page.next;
        page = await call(() => api.listHookDeliveries({ target, hookId, since, url }));
      }
      const left = sent.sentAt + settleMs - Date.now();
      if (left <= 0 || !patched(CONFIRM_UNTIL_SETTLED_PATCH)) return sent;
      await sleep(Math.min(CONFIRM_POLL_MS, left));
    }
  }

  const complete = status.counts.notAccepted === 0 && status.counts.deferred === 0 && status.counts.awaitingOutcome === 0 && stoppedEarly === undefined;
  status.phase = 'done';
  upsertAttributes([{ key: LonghaulState, value: complete ? (gaveUpGuids.length ? 'repaired-with-give-ups' : 'repaired') : 'incomplete' }]);
  show();
  return {
    hook,
    // Unaccepted or deferred redeliveries must be seen again: keep the window where it was.
    lastCheckedAt: complete ? runStartedAt : (previous?.lastCheckedAt ?? since),
    windowStart: status.windowStart,
    runStartedAt: new Date(runStartedAt).toISOString(),
    allAccepted: status.counts.notAccepted === 0,
    counts: { ...status.counts },
    redeliveredGuids,
    gaveUpGuids,
    recentRedeliveries: recent.filter((t) => t > Date.now() - pacing.hourMs),
    redeliveryAttempts: carriedAttempts(attempts, Date.now()),
    ...(stoppedEarly ? { stoppedEarly } : {}),
    ...(watch.state.waits > 0 ? { outage: { ...watch.state } } : {}),
  };
}

export interface HookPingInput {
  target: HookTarget;
  hookId: number;
}

/** `hook-ping`: the hook's health check (204 from `POST …/pings`). */
export const hookPing = validatedWorkflow('hookPing', { what: 'hook', failures: HOOK_FAILURES, schema: HookPingInputSchema }, ping);

async function ping(input: HookPingInput): Promise<{ hook: string; status: number; pingedAt: string }> {
  const hook = hookLabel(input.target, input.hookId);
  upsertAttributes([
    { key: LonghaulProcess, value: Process.HookPing },
    { key: LonghaulTarget, value: hook },
  ]);
  const result = await pingApi.pingHook(input);
  setCurrentDetails(`${hook} answered the ping with ${result.status}`);
  return { hook, ...result };
}
