/**
 * The fleet-wide rate budget of one API credential: the pure state and decisions the `rateGovernor`
 * entity workflow (`rate-governor:<credential>`) holds, so every worker process on the namespace shares
 * one gate, one request budget, one mutation queue and one content-creation allowance per credential.
 *
 * Deterministic (no I/O, time injected as `now`): the workflow, the worker's link and tests share it.
 *
 * The budget is kept, not guessed: a worker asks before each request (`acquire`) and the governor grants
 * permits out of the window's remaining budget (`limit - reserve`, lowered by what responses report), so
 * the fleet spends the window down to the reserve and then waits for the reset instead of learning about
 * exhaustion from a limited answer. Limited answers any worker receives still close the gate for all.
 */
import * as v from 'valibot';
import { nonNegativeNumber, object, problemsOf, wholeBetween } from '../../common/schema';
import { contentFreeAt, heldForMutations, holdForMutations, slotLeadFor, slotSpacingMs, type MutationsWaiting } from './mutation-slots';
import { Process } from './names';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

export type { RequestKind } from '../../common/request-kind';

export interface GovernorConfig {
  /** Fleet-wide concurrent requests on the credential (GitHub allows 100). */
  maxConcurrent: number;
  /** Permits kept back from each window (unset: `min(maxConcurrent, ceil(5 % of limit))`, for requests crossing a reset). */
  reserve?: number;
  /** @format milliseconds — minimum gap between two mutations on the credential, across the fleet. */
  mutationSpacingMs: number;
  /** Content-creating requests per minute and per hour (GitHub: 80 and 500). */
  contentPerMinute: number;
  contentPerHour: number;
  /** @format milliseconds — how long a 422 "spammed" closes content creation (GitHub says nothing). */
  spammedWaitMs: number;
  /** @format milliseconds — refused requests retry after the wait plus up to this much, so they do not all fire at the reset. */
  jitterMs: number;
  /** @format milliseconds — a mutation slot further out than this is refused (retry later) rather than held. */
  maxSlotWaitMs: number;
  /** @format milliseconds — added after a header-derived reset before the next window's budget is granted. */
  resetMarginMs: number;
  /** @format milliseconds — a worker that has not asked for this long no longer counts for the concurrency split. */
  workerTtlMs: number;
  /** No announced window (Google: only 429 + `RetryInfo`): grant all while open, not one probe at a time. */
  windowless?: boolean;
}

export const defaultGovernorConfig: GovernorConfig = {
  maxConcurrent: 50,
  mutationSpacingMs: 1000,
  contentPerMinute: 75,
  contentPerHour: 480,
  spammedWaitMs: 60_000,
  jitterMs: 1500,
  maxSlotWaitMs: 30_000,
  resetMarginMs: 1000,
  workerTtlMs: 30_000,
};

export { MUTATION_SLOT_LEAD_MS, MUTATION_SLOT_TOLERANCE_MS } from './mutation-slots';

/** Rate-limit facts from one response, as a worker saw them. */
export interface RateObservation {
  /** `x-ratelimit-remaining` / `-limit` of the response. */
  remaining?: number;
  limit?: number;
  /** @format milliseconds — until `x-ratelimit-reset`, measured on the server's clock (`Date` header). */
  resetInMs?: number;
  /** @format milliseconds — how long ago the response arrived (the governor dates the facts back). */
  ageMs: number;
}

/** A limit a worker was told about: closes the gate (or content creation) for the whole fleet. */
export interface LimitReport {
  kind: 'primary' | 'secondary' | 'content';
  /** @format milliseconds — the wait the answer demanded (from when it arrived). */
  waitMs: number;
  ageMs: number;
  message: string;
  workerId: string;
}

const waitMs = () => v.optional(nonNegativeNumber());

/** An `acquire` request, checked by the Update's validator: bad input is refused before it reaches history. */
export const AcquireRequestSchema = object(
  {
    workerId: v.pipe(v.string('must be a non-empty string'), v.nonEmpty('must be a non-empty string')),
    kind: v.picklist(['read', 'mutation', 'content'], 'must be read, mutation or content'),
    count: wholeBetween(1, 1000, 'must be an integer 1..1000'),
    /** The worker's latest rate-limit facts since its previous ask. */
    observation: v.optional(v.custom<RateObservation>(() => true)),
    /** Granted requests the server did not count (304 Not Modified), by the window they were granted in. */
    refunds: v.optional(v.custom<{ window: number; count: number }[]>(() => true)),
    /** @format milliseconds — for mutations/content: no slot nearer than this (how late this worker's answers arrive). */
    leadMs: waitMs(),
    /** @format milliseconds — for mutations/content: no slot further out than this (the asking attempts' time left to send). */
    maxWaitMs: waitMs(),
    /**
     * @format epoch milliseconds — for mutations/content: the latest send deadline of the asking attempts (worker's clock).
     * The Update may be handled long after it was sent (the governor's workflow task was on a worker that died and
     * waits out its timeout): a slot after this can never be used, so none is granted (older workers omit it).
     */
    sendBy: v.optional(v.number('must be epoch milliseconds')),
  },
  'request must be an object',
);

const configNumber = () => v.optional(nonNegativeNumber());

/**
 * The governor's input: the credential's name and its settings, as the worker's link starts it, and the state it
 * carries over continue-as-new (checked for the fields the workflow reads before any message).
 */
export const RateGovernorInputSchema = object(
  {
    credential: v.pipe(v.string('must be the name of a credential'), v.nonEmpty('must be the name of a credential'), v.maxLength(200, 'must be at most 200 characters')),
    config: v.optional(
      object(
        {
          maxConcurrent: configNumber(),
          reserve: configNumber(),
          mutationSpacingMs: configNumber(),
          contentPerMinute: configNumber(),
          contentPerHour: configNumber(),
          spammedWaitMs: configNumber(),
          jitterMs: configNumber(),
          maxSlotWaitMs: configNumber(),
          resetMarginMs: configNumber(),
          workerTtlMs: configNumber(),
          windowless: v.optional(v.boolean('must be true or false')),
        },
        'must be an object of settings',
      ),
    ),
    state: v.optional(
      object(
        {
          credential: v.string('must be the name of a credential'),
          config: object({}, 'must be an object of settings'),
          contentTimes: v.array(v.number('must be epoch milliseconds'), 'must be a list of times'),
          workers: object({}, 'must be an object'),
          waiting: object({}, 'must be an object'),
          totals: object({}, 'must be an object'),
        },
        'is set by the workflow when it continues as new; it is malformed',
      ),
    ),
  },
  'input must be an object',
);

/** What a worker asks the governor for: see `AcquireRequestSchema` for each field. */
export type AcquireRequest = v.InferInput<typeof AcquireRequestSchema>;

/** Problems with an `acquire` request (empty when valid). */
export function acquireRequestProblems(req: unknown): string[] {
  return problemsOf(AcquireRequestSchema, req);
}

export interface AcquireGrant {
  /** How many of the requested permits were granted (the first `granted` waiters may send). */
  granted: number;
  /** For mutations/content: when (epoch ms) each granted request may go out. */
  slotTimes?: number[];
  /** Epoch ms (governor's clock) the slots were granted at: the worker measures how late the answer came. */
  grantedAt?: number;
  /** @format milliseconds — with slots: the spacing the worker keeps between its own releases (`chainedReleaseAt`). */
  spacingMs?: number;
  /** @format milliseconds — for the refused rest: when to ask again (jittered). */
  retryInMs?: number;
  /** Why the rest were refused (shown in failures and the UI). */
  reason?: string;
  /**
   * Epoch ms (governor's clock): set when the rest were refused because the API told a worker to wait (a limited
   * answer reported to the governor), until when that wait is in force. The worker closes its own gate until
   * then; refusals for the governor's own pacing (budget, slots) carry none.
   */
  limitedUntil?: number;
  /** This worker's share of the fleet-wide concurrency cap. */
  concurrency: number;
  /** The window the permits were granted from (for refunds). */
  window: number;
  /** The governor knows no window yet: report this response's headers at once. */
  observe?: boolean;
}

export interface GovernorState {
  credential: string;
  config: GovernorConfig;
  /** `x-ratelimit-limit` last seen. */
  limit?: number;
  /** Permits left in the current window (undefined until a response told the limit). */
  budget?: number;
  /** Permits granted for slots after the current window's reset (charged to the next window). */
  debt: number;
  /** Counts windows, so a refund reaches only the window its permits came from. */
  windowSeq: number;
  /** Epoch ms (workflow clock) when the current window ends, margin included. */
  windowResetAt?: number;
  /** A probe request is out (no limit known yet); no second one before this. */
  probeUntil: number;
  /** The shared gate: nothing goes out before this. */
  blockedUntil: number;
  blockedReason?: string;
  contentBlockedUntil: number;
  /** The last mutation slot granted (epoch ms), and the worker it went to (unset in older states). */
  lastMutationAt: number;
  lastMutationHolder?: string;
  /** Content slots granted in the past hour. */
  contentTimes: number[];
  /** workerId → last ask (epoch ms). */
  workers: Record<string, number>;
  /** workerId → requests refused at its last ask, and when: the work waiting on the limit. */
  waiting: Record<string, { count: number; at: number; until: number }>;
  /** Mutations refused at their workers' last ask: reads leave them that much budget (unset in older states). */
  mutationsWaiting?: MutationsWaiting;
  totals: { granted: number; refused: number; limitedReports: number; observations: number };
}

export function newGovernorState(credential: string, config: Partial<GovernorConfig> = {}): GovernorState {
  return {
    credential,
    config: { ...defaultGovernorConfig, ...config },
    debt: 0,
    windowSeq: 0,
    probeUntil: 0,
    blockedUntil: 0,
    contentBlockedUntil: 0,
    lastMutationAt: 0,
    contentTimes: [],
    workers: {},
    waiting: {},
    totals: { granted: 0, refused: 0, limitedReports: 0, observations: 0 },
  };
}

export function reserveOf(state: GovernorState): number {
  const { config } = state;
  if (config.reserve !== undefined) return config.reserve;
  return state.limit === undefined ? 0 : Math.min(config.maxConcurrent, Math.ceil(state.limit * 0.05));
}

/** Opens the next window once the current one has reset. */
function roll(state: GovernorState, now: number): void {
  if (state.windowResetAt !== undefined && now >= state.windowResetAt) {
    state.windowResetAt = undefined;
    state.windowSeq++;
    state.budget = state.limit === undefined ? undefined : Math.max(0, state.limit - reserveOf(state) - state.debt);
    state.debt = 0;
  }
  state.contentTimes = state.contentTimes.filter((t) => now - t < 3_600_000);
  for (const [id, seen] of Object.entries(state.workers)) if (now - seen > state.config.workerTtlMs) delete state.workers[id];
  for (const [id, w] of Object.entries(state.waiting)) if (w.until < now) delete state.waiting[id];
}

/** Folds a worker's rate-limit facts in: learns the limit and the window's reset, never raises the budget. */
export function observe(state: GovernorState, obs: RateObservation, now: number): void {
  roll(state, now);
  state.totals.observations++;
  if (obs.limit !== undefined && obs.limit > 0) state.limit = obs.limit;
  if (obs.remaining === undefined || obs.resetInMs === undefined) return;
  const resetAt = now - obs.ageMs + obs.resetInMs + state.config.resetMarginMs;
  // Facts of a window that has already reset are stale.
  if (resetAt <= now) return;
  const known = state.windowResetAt;
  if (known !== undefined && resetAt > known + 2 * state.config.resetMarginMs) {
    // A later window than the one we thought current: it reset without our noticing.
    state.windowResetAt = now;
    roll(state, now);
  }
  if (state.windowResetAt === undefined) state.windowResetAt = resetAt;
  else if (known !== undefined && resetAt < known - 2 * state.config.resetMarginMs) return;
  if (state.limit !== undefined && state.budget === undefined) state.budget = state.limit - reserveOf(state);
  // The server's remaining counts what reached it; our budget also counts grants still on their way, so
  // it is normally lower. Only another consumer of the same token makes the server's figure the lower one.
  const fromServer = Math.max(0, obs.remaining - reserveOf(state));
  if (state.budget !== undefined) state.budget = Math.min(state.budget, fromServer);
}

/** A limited answer somewhere in the fleet: nobody sends (or creates content) until it has passed. */
export function reportLimit(state: GovernorState, report: LimitReport, now: number): void {
  roll(state, now);
  state.totals.limitedReports++;
  const until = now - report.ageMs + report.waitMs;
  if (report.kind === 'content') {
    state.contentBlockedUntil = Math.max(state.contentBlockedUntil, until);
    return;
  }
  if (until > state.blockedUntil) {
    state.blockedUntil = until;
    state.blockedReason = `${report.kind} rate limit reported by ${report.workerId}: ${report.message}`;
  }
  if (report.kind === 'primary') state.budget = 0;
}

export function concurrencyShare(state: GovernorState): number {
  const live = Math.max(1, Object.keys(state.workers).length);
  return Math.max(1, Math.floor(state.config.maxConcurrent / live));
}

/** Grants up to `count` permits now (and, for mutations, their slots); refuses the rest with a jittered retry time. */
export function acquire(state: GovernorState, req: AcquireRequest, now: number, random: () => number): AcquireGrant {
  if (req.observation) observe(state, req.observation, now);
  roll(state, now);
  if (state.budget !== undefined) {
    for (const r of req.refunds ?? []) if (r.window === state.windowSeq && r.count > 0) state.budget += r.count;
  }
  state.workers[req.workerId] = now;
  const jitter = () => Math.round(random() * state.config.jitterMs);
  const refuse = (granted: number, untilMs: number, reason: string, slotTimes?: number[]): AcquireGrant => {
    const refused = req.count - granted;
    state.totals.granted += granted;
    state.totals.refused += refused;
    if (refused > 0) state.waiting[req.workerId] = { count: refused, at: now, until: untilMs };
    else delete state.waiting[req.workerId];
    // Mutations waiting for a slot (not for budget) would gain nothing from budget held for them.
    const slotBound = reason === SLOTS_QUEUED || reason === CONTENT_SPENT || reason === SEND_DEADLINE_PASSED;
    if (req.kind !== 'read') holdForMutations((state.mutationsWaiting ??= {}), req.workerId, slotBound ? 0 : refused, untilMs + state.config.jitterMs);
    return {
      granted,
      ...(slotTimes ? { slotTimes, grantedAt: now, spacingMs: state.config.mutationSpacingMs } : {}),
      ...(refused > 0 ? { retryInMs: Math.max(0, untilMs - now) + jitter(), reason } : {}),
      concurrency: concurrencyShare(state),
      window: state.windowSeq,
    };
  };

  // Only a reported limit sets `blockedUntil` (`reportLimit`): the refusal tells the worker until when it is in force.
  if (state.blockedUntil > now) return { ...refuse(0, state.blockedUntil, state.blockedReason ?? 'rate limited'), limitedUntil: state.blockedUntil };
  if (req.kind === 'content' && state.contentBlockedUntil > now) {
    return refuse(0, state.contentBlockedUntil, CONTENT_CLOSED);
  }
  if (state.budget === undefined && state.config.windowless) return refuse(req.count, now, '');
  if (state.budget === undefined) {
    // No window known yet: one request at a time until a response tells the limit and the reset.
    if (state.probeUntil > now) return refuse(0, now + 250, 'waiting for the first response to tell the rate limit');
    state.probeUntil = now + 10_000;
    const slot = now + slotLeadFor(req.leadMs, state.config.maxSlotWaitMs);
    const grant = refuse(1, now + 250, 'waiting for the first response to tell the rate limit', req.kind === 'read' ? undefined : [slot]);
    if (req.kind !== 'read') [state.lastMutationAt, state.lastMutationHolder] = [slot, req.workerId];
    if (req.kind === 'content') state.contentTimes.push(slot);
    return { ...grant, observe: true };
  }
  if (req.kind === 'read') {
    // Mutations refused earlier go first: reads arrive in droves at every reset and would take it all.
    const held = heldForMutations((state.mutationsWaiting ??= {}), now);
    const granted = Math.min(req.count, Math.max(0, state.budget - held));
    state.budget -= granted;
    if (state.budget > 0) return refuse(granted, now + 1000, `budget held for ${held} waiting mutation(s)`);
    return refuse(granted, state.windowResetAt ?? now + 1000, `request budget of the window spent (reserve ${reserveOf(state)} kept)`);
  }
  // While the new window's reset is unknown, every slot belongs to it.
  return grantSlots(state, req, now, state.windowResetAt ?? Infinity, refuse);
}

const SLOTS_QUEUED = 'mutations queued for the next slots';
/** Why a mutation is refused whose attempt's send deadline (`sendBy`) comes before any slot could: its next attempt asks. */
export const SEND_DEADLINE_PASSED = "the asking attempts' send deadline comes before the next slot";
const CONTENT_SPENT = 'content-creation allowance spent';

function grantSlots(
  state: GovernorState,
  req: AcquireRequest,
  now: number,
  windowEnd: number,
  refuse: (granted: number, untilMs: number, reason: string, slotTimes?: number[]) => AcquireGrant,
): AcquireGrant {
  const { config } = state;
  const lead = slotLeadFor(req.leadMs, config.maxSlotWaitMs);
  // A slot past the asking attempts' time would go unused: the API would see a gap in the queue.
  // An Update handled late (`sendBy`) measures the asker's time left from its own send deadline, not from `now`.
  const horizon = Math.min(config.maxSlotWaitMs, req.maxWaitMs ?? Infinity, (req.sendBy ?? Infinity) - now);
  const slots: number[] = [];
  let retryAt = now;
  let reason = '';
  for (let i = 0; i < req.count; i++) {
    let slot = Math.max(now + lead, state.lastMutationAt + slotSpacingMs(config.mutationSpacingMs, state.lastMutationHolder === req.workerId));
    if (req.kind === 'content') slot = Math.max(slot, contentFreeAt(state.contentTimes, config.contentPerMinute, config.contentPerHour, slot));
    if (slot - now > horizon) {
      // Past every asking attempt's send deadline the slot could never be used (a worker that died meanwhile, or
      // an Update handled this late), and granting it would hold back every other worker's mutations for nothing.
      const passed = req.sendBy !== undefined && req.sendBy < now + lead;
      retryAt = passed ? now : Math.max(now, slot - config.maxSlotWaitMs / 2);
      reason = passed ? SEND_DEADLINE_PASSED : req.kind === 'content' ? CONTENT_SPENT : SLOTS_QUEUED;
      break;
    }
    // A slot after the reset is charged to the next window.
    const inThisWindow = slot < windowEnd;
    if (inThisWindow && state.budget! <= 0) {
      retryAt = windowEnd;
      reason = `request budget of the window spent (reserve ${reserveOf(state)} kept)`;
      break;
    }
    if (inThisWindow) state.budget!--;
    else state.debt++;
    [state.lastMutationAt, state.lastMutationHolder] = [slot, req.workerId];
    if (req.kind === 'content') state.contentTimes.push(slot);
    slots.push(slot);
  }
  return refuse(slots.length, retryAt, reason, slots);
}

/** The snapshot's reason when the gate is closed only because the window's budget is spent. */
export const BUDGET_SPENT = 'budget of the window spent';
/** Why a content request is refused after a 422 "spammed" (a worker that reads it closes content creation too). */
export const CONTENT_CLOSED = 'content creation closed after a 422 "spammed" answer';

/** What `limits` shows and the workflow's current details say. */
export interface GovernorSnapshot {
  credential: string;
  gate: 'open' | 'closed';
  /** Epoch ms; set while closed. */
  blockedUntil?: number;
  reason?: string;
  limit?: number;
  /** Permits left in the current window (after the reserve). */
  budget?: number;
  reserve: number;
  /** Epoch ms when the current window resets (margin included). */
  windowResetAt?: number;
  contentBlockedUntil?: number;
  contentLastMinute: number;
  contentLastHour: number;
  /** Epoch ms of the last mutation slot granted. */
  lastMutationAt?: number;
  workers: number;
  concurrencyPerWorker: number;
  /** Requests refused at their workers' last ask that wait on the limit, and the latest time they wait for. */
  queued: number;
  queuedUntil?: number;
  totals: GovernorState['totals'];
}

/** The state as of `now`. Pure: a query handler calls it, and queries must not change workflow state. */
export function snapshot(current: GovernorState, now: number): GovernorSnapshot {
  const state = JSON.parse(JSON.stringify(current)) as GovernorState;
  roll(state, now);
  const blocked = state.blockedUntil > now;
  const spent = state.budget !== undefined && state.budget <= 0 && state.windowResetAt !== undefined;
  const waits = Object.values(state.waiting);
  return {
    credential: state.credential,
    gate: blocked || spent ? 'closed' : 'open',
    ...(blocked ? { blockedUntil: state.blockedUntil, reason: state.blockedReason } : spent ? { blockedUntil: state.windowResetAt, reason: BUDGET_SPENT } : {}),
    limit: state.limit,
    budget: state.budget,
    reserve: reserveOf(state),
    windowResetAt: state.windowResetAt,
    ...(state.contentBlockedUntil > now ? { contentBlockedUntil: state.contentBlockedUntil } : {}),
    contentLastMinute: state.contentTimes.filter((t) => t > now - 60_000 && t <= now + 60_000).length,
    contentLastHour: state.contentTimes.length,
    lastMutationAt: state.lastMutationAt || undefined,
    workers: Object.keys(state.workers).length,
    concurrencyPerWorker: concurrencyShare(state),
    queued: waits.reduce((n, w) => n + w.count, 0),
    queuedUntil: waits.length ? Math.max(...waits.map((w) => w.until)) : undefined,
    totals: { ...state.totals },
  };
}

/** One line for the UI's current details and the starter. */
export function describeGovernor(s: GovernorSnapshot): string {
  const time = (ms: number) => new Date(ms).toISOString().slice(11, 19);
  const parts = [`${s.credential}: gate ${s.gate}`];
  if (s.gate === 'closed' && s.blockedUntil) parts.push(`until ${time(s.blockedUntil)} UTC (${s.reason ?? 'limited'})`);
  if (s.budget !== undefined) parts.push(`budget ${s.budget}/${s.limit ?? '?'} (reserve ${s.reserve})`);
  if (s.windowResetAt) parts.push(`window resets ${time(s.windowResetAt)} UTC`);
  if (s.contentBlockedUntil) parts.push(`content creation closed until ${time(s.contentBlockedUntil)} UTC`);
  if (s.queued > 0) parts.push(`${s.queued} request(s) waiting${s.queuedUntil ? ` until ${time(s.queuedUntil)} UTC` : ''}`);
  parts.push(`${s.workers} worker(s), ${s.concurrencyPerWorker} concurrent each`);
  return parts.join(' · ');
}

export function governorWorkflowId(credential: string): string {
  return `${Process.RateGovernor}:${credential}`;
}

/**
 * The governor's messages and workflow type, here rather than in workflow.ts: every worker's activities send them
 * (`GovernorLink`) without importing workflow code. Running governors answer to these names: they never change.
 */
export const acquireUpdate = defineUpdate<AcquireGrant, [AcquireRequest]>('acquire');
export const reportSignal = defineSignal<[{ limit?: LimitReport; observation?: RateObservation }]>('report');
export const limitsQuery = defineQuery<GovernorSnapshot>('limits');
/** `rateGovernor`, the workflow function's name (test/unit/names.test.ts holds the two together). */
export const RATE_GOVERNOR_WORKFLOW = 'rateGovernor';
