/**
 * Webhook delivery repair, run by a Temporal Schedule per hook: GitHub's own recipe ("redeliver failed
 * deliveries"), made durable and polite.
 *
 * Since the last successful run (carried by the Schedule as the previous run's result; the first run
 * looks back `lookbackMs`), list the hook's deliveries newest first (`per_page=100`, following the
 * `cursor` in `Link`) until they are older than the window; group them by `guid`; redeliver once every
 * guid with no `OK` delivery, paced with durable timers under the content-creation limits; and advance
 * the last-checked time only when every redelivery of the run was accepted.
 */
import {
  ApplicationFailure,
  defineQuery,
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
  DEFAULT_CLOCK_SKEW_MS,
  DEFAULT_LOOKBACK_MS,
  DEFAULT_PACING,
  hookLabel,
  hookRepairProblems,
  hookTargetProblems,
  nextPacedSlot,
  planRepair,
  type DeliverySummary,
  type HookRepairInput,
  type HookRepairResult,
  type HookRepairStatus,
  type HookTarget,
  type Pacing,
} from '../common/hook-repair';
import { LonghaulOrg, LonghaulProcess, LonghaulState, LonghaulTarget } from '../common/search-attributes';

export const hookRepairStatusQuery = defineQuery<HookRepairStatus>('status');

export const HookFailure = { InvalidInput: 'InvalidHookInput' } as const;

const api = proxyActivities<Activities>(API_CALL);

/** Redelivery attempts refused as "spammed" before the run gives up on the rest (they wait for the next run). */
const SPAMMED_TRIES = 3;

function previousResult(): HookRepairResult | undefined {
  const last = workflowInfo().lastResult as HookRepairResult | undefined;
  return last && typeof last.lastCheckedAt === 'number' ? last : undefined;
}

function describe(s: HookRepairStatus): string {
  const c = s.counts;
  return `${s.hook} · ${s.phase} · since ${s.windowStart} · seen ${c.seen} deliveries (${c.guids} guids, ${c.pages} pages) · failed ${c.failed} · redelivered ${c.redelivered} · skipped as already OK ${c.skippedAlreadyOk}${c.notAccepted ? ` · not accepted ${c.notAccepted}` : ''}`;
}

export async function hookRepair(input: HookRepairInput): Promise<HookRepairResult> {
  const problems = hookRepairProblems(input);
  if (problems.length > 0) throw ApplicationFailure.nonRetryable(`invalid hook repair input: ${problems.join('; ')}`, HookFailure.InvalidInput, { problems });
  const { target, hookId } = input;
  const pacing: Pacing = { ...DEFAULT_PACING, ...input.pacing };
  const hook = hookLabel(target, hookId);
  const previous = previousResult();
  const runStartedAt = Date.now();
  const since = previous ? previous.lastCheckedAt - (input.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS) : runStartedAt - (input.lookbackMs ?? DEFAULT_LOOKBACK_MS);

  const status: HookRepairStatus = {
    phase: 'listing',
    hook,
    windowStart: new Date(since).toISOString(),
    counts: { seen: 0, guids: 0, failed: 0, redelivered: 0, skippedAlreadyOk: 0, notAccepted: 0, pages: 0 },
  };
  setHandler(hookRepairStatusQuery, () => status);
  const show = () => setCurrentDetails(describe(status));
  upsertSearchAttributes([
    { key: LonghaulProcess, value: 'hook-repair' },
    { key: LonghaulOrg, value: 'org' in target ? target.org : target.owner },
    { key: LonghaulTarget, value: hook },
    { key: LonghaulState, value: 'listing' },
  ]);
  show();

  // Newest first: stop at the first page that reaches past the window.
  const inWindow: DeliverySummary[] = [];
  let url: string | undefined;
  do {
    const page = await api.listHookDeliveries({ target, hookId, url });
    status.counts.pages++;
    inWindow.push(...page.deliveries.filter((d) => d.deliveredAt >= since));
    status.counts.seen = inWindow.length;
    show();
    if (page.deliveries.some((d) => d.deliveredAt < since)) break;
    url = page.next;
  } while (url);

  const plan = planRepair(inWindow);
  Object.assign(status.counts, { seen: plan.seen, guids: plan.guids, failed: plan.failed.length, skippedAlreadyOk: plan.skippedAlreadyOk });
  status.phase = 'redelivering';
  upsertSearchAttributes([{ key: LonghaulState, value: 'redelivering' }]);
  show();

  const recent = (previous?.recentRedeliveries ?? []).filter((t) => t > runStartedAt - pacing.hourMs);
  const redeliveredGuids: string[] = [];
  let refused = false;
  for (const { guid, deliveryId } of plan.failed) {
    if (refused) {
      status.counts.notAccepted++;
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
      const result = await api.redeliverHookDelivery({ target, hookId, deliveryId, notBefore: slot });
      if (result.accepted) {
        accepted = true;
        recent.push(result.sentAt);
        redeliveredGuids.push(guid);
        status.counts.redelivered++;
        show();
      } else {
        // Someone else spent this caller's budget: back off a whole pacing minute before trying again.
        recent.push(result.sentAt);
        await sleep(pacing.minuteMs);
      }
    }
    if (!accepted) {
      status.counts.notAccepted++;
      refused = true;
    }
  }

  const allAccepted = status.counts.notAccepted === 0;
  status.phase = 'done';
  upsertSearchAttributes([{ key: LonghaulState, value: allAccepted ? 'repaired' : 'incomplete' }]);
  show();
  return {
    hook,
    // Unaccepted redeliveries must be seen again: keep the window where it was.
    lastCheckedAt: allAccepted ? runStartedAt : (previous?.lastCheckedAt ?? since),
    windowStart: status.windowStart,
    runStartedAt: new Date(runStartedAt).toISOString(),
    allAccepted,
    counts: { ...status.counts },
    redeliveredGuids,
    recentRedeliveries: recent.filter((t) => t > Date.now() - pacing.hourMs),
  };
}

export interface HookPingInput {
  target: HookTarget;
  hookId: number;
}

/** `hook-ping`: the hook's health check (204 from `POST …/pings`). */
export async function hookPing(input: HookPingInput): Promise<{ hook: string; status: number; pingedAt: string }> {
  const problems = hookTargetProblems(input?.target, input?.hookId);
  if (problems.length > 0) throw ApplicationFailure.nonRetryable(`invalid hook: ${problems.join('; ')}`, HookFailure.InvalidInput, { problems });
  const hook = hookLabel(input.target, input.hookId);
  upsertSearchAttributes([
    { key: LonghaulProcess, value: 'hook-ping' },
    { key: LonghaulTarget, value: hook },
  ]);
  const result = await api.pingHook(input);
  setCurrentDetails(`${hook} answered the ping with ${result.status}`);
  return { hook, ...result };
}
