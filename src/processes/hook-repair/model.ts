/**
 * Webhook delivery repair (spec 001, "Webhook deliveries"): which hook, the window to check, grouping
 * deliveries by `guid` to find the ones that never succeeded, and pacing redeliveries under the
 * content-creation limits (80 per minute, 500 per hour per caller).
 *
 * Deterministic: shared by the workflow, activities, the starter and tests.
 */
import { CLOCK_SKEW_MS } from '../../common/clock-skew';
import * as v from 'valibot';
import { OutageBoundsSchema } from '../../common/outage';
import { PauseAfterFailuresSchema } from '../scheduled-run/model';
import { isGithubLogin, isRepositoryName, loginSchema } from '../../common/github-names';
import { firstProblem, msBetween, nonNegativeNumber, object, positiveNumber, problemsOf, wholeBetween } from '../../common/schema';
import type { CredentialChoice } from '../../common/credential';
import { Process } from './names';
import { failureTypes } from '../../common/failures';
import { HOOK_FAILURES } from './failures';


/** Failure types of hook repair (stable strings). */
export const HookFailure = failureTypes(HOOK_FAILURES);
export type HookTarget = { org: string } | { owner: string; repo: string };

export interface Pacing {
  /** Redeliveries in any window of `minuteMs`. Default 70 (the limit is 80; the rest is headroom for other callers). */
  perMinute: number;
  /** Redeliveries in any window of `hourMs`. Default 450 (the limit is 500). */
  perHour: number;
  /** @format milliseconds — one minute on the real service (shorter in tests). */
  minuteMs: number;
  /** @format milliseconds — one hour on the real service (shorter in tests). */
  hourMs: number;
  /** Added to every computed slot so request jitter never squeezes one more into a window. @format milliseconds */
  marginMs: number;
}

export const DEFAULT_PACING: Pacing = { perMinute: 70, perHour: 450, minuteMs: 60_000, hourMs: 3_600_000, marginMs: 250 };
/** The content-creation limits of spec 001: pacing may not promise more. */
export const CONTENT_LIMITS = { perMinute: 80, perHour: 500 } as const;
/** Redeliveries of one guid across runs before the repair gives up on it (its target keeps failing). */
export const DEFAULT_MAX_REDELIVERIES_PER_GUID = 3;
/** Bounds of one run, so no run's history nears 10,000 events (a redelivery costs up to ~11 events, a page ~6). */
export const DEFAULT_MAX_REDELIVERIES_PER_RUN = 500;
export const DEFAULT_MAX_PAGES_PER_RUN = 100;
/** A run stops listing and redelivering once its history is this long, whatever its other bounds. */
export const HOOK_RUN_EVENT_BUDGET = 8_000;
/** How long redelivery counts are remembered (GitHub keeps deliveries for days, not weeks). */
export const ATTEMPTS_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** At most this many guids' counts travel to the next run (newest kept). */
export const MAX_CARRIED_ATTEMPTS = 2_000;
export const DEFAULT_LOOKBACK_MS = 24 * 60 * 60 * 1000;
/**
 * The next run starts this much before the last one did, so deliveries near the edge are not missed: GitHub's
 * clock-skew margin (`CLOCK_SKEW_MS.github`). Runs recorded with it decide on it (a delivery in or out of the
 * window), so it is the margin they were recorded with.
 */
export const DEFAULT_CLOCK_SKEW_MS = CLOCK_SKEW_MS.github;
/**
 * How long a redelivery may take to be listed after GitHub accepted it (202): redelivery is queued, so its
 * delivery and outcome appear later. Until then a guid redelivered is awaited, never redelivered again.
 */
export const DEFAULT_REDELIVERY_SETTLE_MS = 5 * 60 * 1000;

/** A hook repair's input: see `HookRepairInputSchema` for each field. */
export type HookRepairInput = v.InferInput<typeof HookRepairInputSchema> & CredentialChoice;

/** The part of a delivery the repair needs: ids and the outcome only (pages of it pass through history). */
export interface DeliverySummary {
  id: number;
  guid: string;
  /** Whether the delivery succeeded (`status: "OK"`). */
  ok: boolean;
  /** epoch ms */
  deliveredAt: number;
}

/** How often a guid was redelivered, carried from run to run (the per-guid cap holds across runs). */
export interface RedeliveryAttempts {
  guid: string;
  attempts: number;
  /** epoch ms of the last attempt */
  lastAt: number;
  /** The delivery the last attempt redelivered (its redelivery, once listed, has a larger id). */
  fromDeliveryId?: number;
}

/**
 * Whether a failed guid's last redelivery is still on its way: it was requested from the newest delivery
 * of the guid listed now (so its own delivery is not listed yet) less than `settleMs` ago. Redelivering
 * it again would deliver the event twice; past the settle time the redelivery counts as lost.
 */
export function awaitingRedelivery(attempt: RedeliveryAttempts | undefined, newestDeliveryId: number, nowMs: number, settleMs: number): boolean {
  if (attempt?.fromDeliveryId === undefined) return false;
  return newestDeliveryId <= attempt.fromDeliveryId && nowMs - attempt.lastAt < settleMs;
}

export interface RepairCounts {
  /** Deliveries listed inside the window. */
  seen: number;
  /** Distinct guids among them. */
  guids: number;
  /** Guids with no `OK` delivery (each gets one redelivery). */
  failed: number;
  /** Redeliveries the server accepted (202). */
  redelivered: number;
  /** Guids that had a failed delivery but also an `OK` one: nothing to do. */
  skippedAlreadyOk: number;
  /** Failed guids whose redelivery was refused ("spammed") or not attempted after that. */
  notAccepted: number;
  /** Pages of deliveries read. */
  pages: number;
  /** Failed guids not redelivered because they reached the per-guid cap (see `gaveUpGuids`). */
  gaveUp: number;
  /** Failed guids left for the next run because this run reached its bounds. */
  deferred: number;
  /** Failed guids whose earlier redelivery is accepted but not listed yet: left for its outcome, not sent again. */
  awaitingOutcome: number;
}

export interface HookRepairResult {
  hook: string;
  /** Where the next run starts (epoch ms). Advances to this run's start only when every redelivery was accepted. */
  lastCheckedAt: number;
  /** This run's window (ISO). */
  windowStart: string;
  runStartedAt: string;
  allAccepted: boolean;
  counts: RepairCounts;
  redeliveredGuids: string[];
  /** Guids that still fail after `maxRedeliveriesPerGuid` redeliveries: left alone, for a person to look at. */
  gaveUpGuids: string[];
  /** Send times (epoch ms) of this hook's redeliveries within the last pacing hour, carried to the next run. */
  recentRedeliveries: number[];
  /** Redeliveries per guid so far, carried to the next run. */
  redeliveryAttempts: RedeliveryAttempts[];
  /** Why the run stopped before the end of its window, if it did (its bounds). */
  stoppedEarly?: string;
  /** Outages waited out by this run. */
  outage?: { waits: number; spentMs: number; lastError?: string };
}

export interface HookRepairStatus {
  phase: 'listing' | 'redelivering' | 'waiting-for-pacing' | 'waiting-out-outage' | 'done';
  hook: string;
  windowStart: string;
  counts: RepairCounts;
  nextRedeliveryAt?: string;
}

export function hookLabel(target: HookTarget, hookId: number): string {
  return 'org' in target ? `orgs/${target.org}/hooks/${hookId}` : `repos/${target.owner}/${target.repo}/hooks/${hookId}`;
}

export function hookRepairScheduleId(target: HookTarget, hookId: number): string {
  return `${Process.HookRepair}:${hookLabel(target, hookId).toLowerCase()}`;
}

/** The API path of the hook (`/orgs/o/hooks/1` or `/repos/o/r/hooks/1`). */
export function hookPath(target: HookTarget, hookId: number): string {
  const enc = encodeURIComponent;
  return 'org' in target ? `/orgs/${enc(target.org)}/hooks/${hookId}` : `/repos/${enc(target.owner)}/${enc(target.repo)}/hooks/${hookId}`;
}

/** The hook: `{ org }` or `{ owner, repo }`, and its id. */
const HOOK_ENTRIES = {
  target: v.pipe(
    v.custom<HookTarget>((target) => !!target && typeof target === 'object', 'must be { org } or { owner, repo }'),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const target = dataset.value;
      if ('org' in target) {
        const path: [v.ObjectPathItem] = [{ type: 'object', origin: 'value', input: target, key: 'org', value: target.org }];
        for (const issue of v.safeParse(loginSchema(), target.org).issues ?? []) addIssue({ message: issue.message, path });
      } else if (!isGithubLogin(target.owner) || !isRepositoryName(target.repo)) addIssue({ message: '{=}repository must be OWNER/REPO' });
    }),
  ),
  hookId: wholeBetween(1, Number.POSITIVE_INFINITY, 'must be a positive integer'),
};

/** A hook ping's input: the hook's target and id. */
export const HookPingInputSchema = object(HOOK_ENTRIES, 'input must be an object');

/** Problems with a hook's target and id (empty when valid). */
export function hookTargetProblems(target: unknown, hookId: unknown): string[] {
  return problemsOf(object(HOOK_ENTRIES), { target, hookId });
}

const PacingSchema = v.object({
  perMinute: v.optional(positiveNumber()),
  perHour: v.optional(positiveNumber()),
  minuteMs: v.optional(positiveNumber()),
  hourMs: v.optional(positiveNumber()),
});

const upTo = (max: number) => v.optional(wholeBetween(1, max, `must be a whole number from 1 to ${max}`));
const MAX_LOOKBACK_MS = 30 * 24 * 3_600_000;

/** A hook repair's input (the scheduled run's and a one-off run's). */
export const HookRepairInputSchema = v.pipe(
  object(
    {
      ...HOOK_ENTRIES,
      /** How far back the first run looks. Default 24 h. @format milliseconds */
      lookbackMs: v.optional(firstProblem(v.pipe(positiveNumber(), v.maxValue(MAX_LOOKBACK_MS, 'may be at most 30 days')))),
      /** @format milliseconds */
      clockSkewMs: v.optional(firstProblem(v.pipe(nonNegativeNumber(), v.maxValue(3_600_000, 'may be at most 1 hour')))),
      /** Redelivery pacing; each field defaults to `DEFAULT_PACING`'s. */
      pacing: v.optional(
        v.pipe(
          // Anything but an object leaves the defaults as they are.
          v.custom<Partial<Pacing> | null>(() => true),
          v.rawCheck(({ dataset, addIssue }) => {
            const pacing: unknown = dataset.value;
            if (typeof pacing !== 'object' || pacing === null || Array.isArray(pacing)) return;
            for (const issue of v.safeParse(PacingSchema, pacing).issues ?? []) addIssue({ message: issue.message, path: issue.path });
          }),
        ),
      ),
      /** Redeliveries of one guid, over all runs, before giving up on it (default 3). */
      maxRedeliveriesPerGuid: upTo(20),
      /** Redeliveries in one run (default 500); the rest waits for the next run. */
      maxRedeliveriesPerRun: upTo(700),
      /** Pages of deliveries listed in one run (default 100, i.e. 10,000 deliveries). */
      maxPagesPerRun: upTo(200),
      /** How long an accepted redelivery may take to be listed (default 5 min). @format milliseconds */
      redeliverySettleMs: v.optional(msBetween(0, 24 * 3_600_000, 'must be a number of milliseconds from 0 to 24 hours')),
      /** @format milliseconds — each API call's timeout (default 60 s): a call lost with its worker is tried again after it. */
      apiCallTimeoutMs: v.optional(msBetween(1_000, 24 * 3_600_000, 'must be a number of milliseconds between 1000 and 86400000')),
      /** How long a run may spend waiting out outages of the API, accumulated over the run (default 6 h, waits 10 s doubling to 3 min). */
      outage: OutageBoundsSchema,
      /** Failed scheduled runs in a row after which the Schedule pauses itself (default 5). */
      pauseAfterFailures: PauseAfterFailuresSchema,
    },
    'input must be an object',
  ),
  // The pacing as it applies (the given fields over the defaults) against the content-creation limits.
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const pacing = { ...DEFAULT_PACING, ...dataset.value.pacing };
    if (pacing.perMinute > CONTENT_LIMITS.perMinute) addIssue({ message: `pacing.perMinute must stay under the content-creation limit of ${CONTENT_LIMITS.perMinute}` });
    if (pacing.perHour > CONTENT_LIMITS.perHour) addIssue({ message: `pacing.perHour must stay under the content-creation limit of ${CONTENT_LIMITS.perHour}` });
    if (pacing.minuteMs < 100 || pacing.hourMs < pacing.minuteMs) addIssue({ message: 'pacing.minuteMs must be at least 100 and pacing.hourMs at least pacing.minuteMs' });
    if (!(Number.isFinite(pacing.marginMs) && pacing.marginMs >= 0)) addIssue({ message: 'pacing.marginMs must be a non-negative number' });
  }),
);

/** Every problem with a hook repair's input (empty when valid). */
export function hookRepairProblems(input: unknown): string[] {
  return problemsOf(HookRepairInputSchema, input);
}

/**
 * The redelivery counts to carry to the next run: this run's, then earlier ones not older than the
 * retention, newest first, at most `MAX_CARRIED_ATTEMPTS`.
 */
export function carriedAttempts(counts: ReadonlyMap<string, RedeliveryAttempts>, nowMs: number): RedeliveryAttempts[] {
  return [...counts.values()]
    .filter((a) => a.lastAt > nowMs - ATTEMPTS_RETENTION_MS)
    .sort((a, b) => b.lastAt - a.lastAt)
    .slice(0, MAX_CARRIED_ATTEMPTS);
}

/** Parses `OWNER/REPO` or an organization name into a target. */
export function parseHookTarget(opts: { org?: string; repo?: string }): HookTarget | { problem: string } {
  if (opts.org && opts.repo) return { problem: 'give --org or --repo, not both' };
  if (opts.org) return { org: opts.org };
  if (opts.repo) {
    const [owner, repo, extra] = opts.repo.split('/');
    if (!owner || !repo || extra !== undefined) return { problem: `--repo ${JSON.stringify(opts.repo)} must be OWNER/REPO` };
    return { owner, repo };
  }
  return { problem: 'give --org ORG or --repo OWNER/REPO' };
}

/**
 * Groups deliveries by guid. Every guid without an `OK` delivery is redelivered once, from its newest
 * failed delivery (the newest listed of the guid); guids that failed but also succeeded are skipped.
 */
export function planRepair(deliveries: readonly DeliverySummary[]): { seen: number; guids: number; failed: { guid: string; deliveryId: number }[]; skippedAlreadyOk: number } {
  const byGuid = new Map<string, { ok: boolean; failedId?: number; failedAt?: number; anyFailed: boolean }>();
  for (const d of deliveries) {
    const g = byGuid.get(d.guid) ?? { ok: false, anyFailed: false };
    if (d.ok) g.ok = true;
    else {
      g.anyFailed = true;
      if (g.failedAt === undefined || d.deliveredAt > g.failedAt || (d.deliveredAt === g.failedAt && d.id > (g.failedId ?? 0))) {
        g.failedAt = d.deliveredAt;
        g.failedId = d.id;
      }
    }
    byGuid.set(d.guid, g);
  }
  const failed: { guid: string; deliveryId: number }[] = [];
  let skippedAlreadyOk = 0;
  for (const [guid, g] of byGuid) {
    if (!g.ok) failed.push({ guid, deliveryId: g.failedId! });
    else if (g.anyFailed) skippedAlreadyOk++;
  }
  // Oldest failure first: the order the events happened in.
  failed.sort((a, b) => a.deliveryId - b.deliveryId);
  return { seen: deliveries.length, guids: byGuid.size, failed, skippedAlreadyOk };
}

/**
 * The earliest time at or after `nowMs` the next redelivery may go out so that no window of
 * `minuteMs` holds more than `perMinute` of `sentTimes` and no window of `hourMs` more than `perHour`.
 */
export function nextPacedSlot(sentTimes: readonly number[], nowMs: number, pacing: Pacing): number {
  const sorted = [...sentTimes].sort((a, b) => a - b);
  let slot = nowMs;
  if (sorted.length >= pacing.perMinute) slot = Math.max(slot, sorted[sorted.length - pacing.perMinute] + pacing.minuteMs + pacing.marginMs);
  if (sorted.length >= pacing.perHour) slot = Math.max(slot, sorted[sorted.length - pacing.perHour] + pacing.hourMs + pacing.marginMs);
  return slot;
}

/** The largest number of `times` inside any window of `windowMs` (for tests and the benchmark). */
export function maxInAnyWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end] - sorted[start] >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}
