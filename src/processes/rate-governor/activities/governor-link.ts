/**
 * The worker's link to a credential's `rateGovernor` entity workflow: the `RequestBudget` the HTTP core
 * asks before every request.
 *
 * - Asks are coalesced: while one `acquire` Update is out, further requests of the same kind queue and
 *   go together in the next one, so a busy worker costs the governor one Update per round trip, not per
 *   request.
 * - A local mirror of the gate closes at once on this worker's own limited answers (and on refusals), so
 *   its other requests wait without asking; the limit is reported by Signal-with-Start so every other
 *   worker's next ask is refused.
 * - Refused requests wait here (jittered) when the wait is short, and otherwise fail with a retryable
 *   typed failure whose `nextRetryDelay` is the wait — Temporal's retry timer then does the waiting.
 * - A worker's concurrent requests stay within its share of the fleet-wide cap (cap ÷ live workers).
 * - If the governor cannot be reached, nothing is sent (fail closed) and the request is retried.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { ApplicationFailureCategory } from '@temporalio/common';
import { BACKOFF, backoffMs } from '../../../common/backoff';
import { chainedReleaseAt, gateCheckAheadMs, MUTATION_SLOT_LEAD_MS, nextSlotLead, slotStillValid } from '../mutation-slots';
import {
  acquireUpdate,
  BUDGET_SPENT,
  CONTENT_CLOSED,
  governorWorkflowId,
  limitsQuery,
  RATE_GOVERNOR_WORKFLOW,
  reportSignal,
  type AcquireGrant,
  type AcquireRequest,
  type GovernorConfig,
  type GovernorSnapshot,
  type LimitReport,
  type RateObservation,
  type RequestKind,
} from '../model';
import { fitSearchAttributes, LonghaulProcess, LonghaulTarget } from '../../../common/search-attributes';
import { failureFromDecision, type CallDescription } from '../../../http/failures';
import { longhaulMetrics } from '../../../telemetry/metrics';
import { activityLog } from '../../../telemetry/log';
import type { BudgetTicket, RequestBudget, ResponseOutcome } from '../../../http/request-budget';
import { FailureType } from '../../../http/retry-policy';
import { sharedWaitLine } from '../../../common/shared-wait';
import type { rateGovernor } from '../workflow';
import { attemptSendDeadline, showSharedWait, untilCancelled } from './activity-time';
import { Process } from '../names';
import type { Clock } from '../../../common/clock';

export interface GovernorLinkOptions {
  credential: string;
  /** The API the credential calls, as metrics and logs label it (default `github`). */
  api?: 'github' | 'google';
  /** The task queue the governor workflow runs on; default: the running activity's (the worker's own). */
  taskQueue?: () => string;
  /** The Temporal client to reach the governor with; default: the running activity's (the worker's connection). */
  client?: () => Client | Promise<Client>;
  /** Settings a fresh governor starts with (from this worker's environment). */
  config?: Partial<GovernorConfig>;
  workerId?: string;
  /** @format milliseconds — the longest a request waits here before failing to let Temporal retry it. */
  maxLocalWaitMs?: number;
  clock?: Clock;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** The last moment the running attempt may send a mutation (default: from the activity's timeouts, `activity-time.ts`). */
  sendDeadline?: () => number | undefined;
}

/** Why a mutation was not sent when its attempt's time ran out waiting: its next attempt sends it. */
export const ATTEMPT_TIME_SPENT = "the attempt's time ran out waiting for a mutation slot";

/** `lateMs`: how long after the governor granted the slot its answer arrived here. */
type Answer = { ok: true; slotAt?: number; lateMs?: number; spacingMs?: number; window: number } | { ok: false; retryInMs: number; reason: string };

interface Waiter {
  /** The last moment its request may be sent (Infinity: none). */
  deadline: number;
  resolve(answer: Answer): void;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

export class GovernorLink implements RequestBudget {
  readonly workerId: string;
  private readonly api: 'github' | 'google';
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly pending: Record<RequestKind, Waiter[]> = { read: [], mutation: [], content: [] };
  private readonly asking: Record<RequestKind, boolean> = { read: false, mutation: false, content: false };
  private observation?: { obs: Omit<RateObservation, 'ageMs'>; at: number };
  private closedUntil = 0;
  private closedReason = '';
  /** Content creation closed after a 422 "spammed" (this worker's own answer, or the governor's word): content only. */
  private contentClosedUntil = 0;
  private concurrency = 1;
  private active = 0;
  private readonly slotQueue: (() => void)[] = [];
  /** @format milliseconds — how far ahead mutation slots are asked for: this worker's answers arrive that late. */
  private slotLead = MUTATION_SLOT_LEAD_MS;
  /** When (this worker's clock) it last released a mutation: slots granted back to back may be that close. */
  private lastReleaseAt = -Infinity;

  constructor(private readonly opts: GovernorLinkOptions) {
    this.workerId = opts.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.api = opts.api ?? 'github';
    this.clock = opts.clock ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.sleep = opts.sleep ?? defaultSleep;
  }

  async acquire(kind: RequestKind, call: CallDescription): Promise<BudgetTicket> {
    // Reads sent twice cost only budget; a mutation is never sent after its attempt may have been retried.
    const deadline = kind === 'read' ? undefined : (this.opts.sendDeadline ?? (() => attemptSendDeadline(this.clock)))();
    await this.takeSlot();
    let window: number;
    try {
      window = await this.permit(kind, call, deadline ?? Infinity);
    } catch (err) {
      this.releaseSlot();
      throw err;
    }
    let done = false;
    return {
      done: (outcome?: ResponseOutcome) => {
        if (done) return;
        done = true;
        this.releaseSlot();
        if (outcome?.notCounted) this.refunds.set(window, (this.refunds.get(window) ?? 0) + 1);
        if (outcome) this.learn(outcome);
      },
    };
  }

  /** Waits for a permit (a mutation: releasing it by `deadline`); returns the window it was granted from. */
  private async permit(kind: RequestKind, call: CallDescription, deadline: number): Promise<number> {
    const maxWait = this.opts.maxLocalWaitMs ?? 20_000;
    const timeSpent = this.retrySoon(ATTEMPT_TIME_SPENT);
    let waited = 0;
    for (;;) {
      const now = this.clock();
      if (now > deadline) throw this.refusal(timeSpent, call);
      const closed = this.closedHere(kind, now);
      const answer: Answer = closed ?? (await untilCancelled(this.askBy(kind, deadline)));
      if (!closed && !answer.ok && kind === 'content' && answer.reason === CONTENT_CLOSED) this.heardOfContentLimit(this.clock() + answer.retryInMs, 'governor');
      if (answer.ok) {
        // A limit learned while the answer travelled (this worker's own limited answer) outranks the permit.
        if (this.closedHere(kind, this.clock())) continue;
        if (answer.slotAt === undefined) return answer.window;
        // A slot far ahead was granted before limits reported meanwhile: confirm the gate just before it,
        // early enough for the gate check's own round trip (as slow as the answers here).
        const confirmAhead = gateCheckAheadMs(this.slotLead);
        if (answer.slotAt - this.clock() > confirmAhead + 100) {
          await untilCancelled(this.sleep(answer.slotAt - confirmAhead - this.clock()));
          const asked = this.clock();
          const closed = await untilCancelled(this.closedFor(kind));
          this.slotLead = nextSlotLead(this.slotLead, this.clock() - asked, false);
          if (closed) {
            if (waited + closed.retryInMs > maxWait || this.clock() + closed.retryInMs > deadline) throw this.refusal(closed, call);
            await this.waitHere(closed, call);
            waited += closed.retryInMs;
            continue;
          }
        }
        const early = answer.slotAt - this.clock();
        if (early > 0) {
          // Pacing for a mutation slot is time spent on limits too (counted, not logged: it is routine).
          longhaulMetrics().limitWaitMs.add(Math.round(early), { api: this.api });
          await untilCancelled(this.sleep(early));
        }
        // This worker's previous mutation may have gone out late; the governor spaced this slot from it by less
        // than the tolerance (`slotSpacingMs`), so the gap is kept here, from the actual release. Re-read after
        // every sleep: another of this worker's requests may have been released meanwhile.
        const spacingMs = answer.spacingMs ?? this.opts.config?.mutationSpacingMs ?? 1000;
        let chained = false;
        for (let wait: number; (wait = chainedReleaseAt(this.lastReleaseAt, spacingMs) - this.clock()) > 0; chained = true) {
          await untilCancelled(this.sleep(wait));
        }
        const releaseAt = this.clock();
        if (releaseAt > deadline) throw this.refusal(timeSpent, call);
        // A limit learned while waiting for the slot: the slot is given up, the loop waits for the limit's end.
        if (this.closedHere(kind, releaseAt)) continue;
        if (slotStillValid(answer.slotAt, releaseAt, spacingMs)) {
          this.lastReleaseAt = releaseAt;
          return answer.window;
        }
        // Too late to keep the spacing to the next slot: let it go, and (unless its own previous mutation held it
        // back) ask further ahead so the next answer arrives in time (a fixed lead would miss every slot while
        // answers stay this slow).
        if (!chained) this.slotLead = nextSlotLead(this.slotLead, answer.lateMs ?? 0, true);
        activityLog('info', 'governor-wait', `${call.method} ${call.url}: mutation slot on ${this.opts.credential} arrived too late; asks again ${this.slotLead} ms ahead`, {
          api: this.api,
          credential: this.opts.credential,
          slotLeadMs: this.slotLead,
        });
        continue;
      }
      const timeOut = answer.reason === ATTEMPT_TIME_SPENT || now + answer.retryInMs > deadline;
      if (timeOut || waited + answer.retryInMs > maxWait) throw this.refusal(answer, call);
      await this.waitHere(answer, call);
      waited += answer.retryInMs;
    }
  }

  closedForMs(kind: RequestKind): number {
    const now = this.clock();
    return Math.max(0, this.closedUntil - now, kind === 'content' ? this.contentClosedUntil - now : 0);
  }

  /** What this worker already knows closes `kind` at `now` (a limit for every request, or content creation closed). */
  private closedHere(kind: RequestKind, now: number): { ok: false; retryInMs: number; reason: string } | undefined {
    const jitter = () => Math.round(this.random() * 1000);
    if (this.closedUntil > now) return { ok: false, retryInMs: this.closedUntil - now + jitter(), reason: this.closedReason };
    if (kind === 'content' && this.contentClosedUntil > now) return { ok: false, retryInMs: this.contentClosedUntil - now + jitter(), reason: CONTENT_CLOSED };
    return undefined;
  }

  /** A short wait on a shared limit, spent here rather than in a Temporal retry: counted and logged. */
  private async waitHere(answer: { retryInMs: number; reason: string }, call: CallDescription): Promise<void> {
    const until = new Date(this.clock() + answer.retryInMs).toISOString();
    showSharedWait({ credential: this.opts.credential, until, reason: answer.reason });
    longhaulMetrics().limitWaitMs.add(Math.round(answer.retryInMs), { api: this.api });
    // `until`: the end the waiting activity shows (its heartbeat details), to be read beside the worker's `limit-learned`.
    activityLog('info', 'governor-wait', `${call.method} ${call.url}: waits ${Math.ceil(answer.retryInMs / 1000)} s on ${this.opts.credential}'s shared rate limit (${answer.reason})`, {
      api: this.api,
      credential: this.opts.credential,
      waitMs: Math.round(answer.retryInMs),
      reason: answer.reason,
      until,
    });
    await untilCancelled(this.sleep(answer.retryInMs));
  }

  /** A retry in 1–2 s (jittered, so refused workers do not all ask again at once). */
  private retrySoon(reason: string): { retryInMs: number; reason: string } {
    return { retryInMs: backoffMs(BACKOFF.governorRetry, 1, this.random), reason };
  }

  private refusal(answer: { retryInMs: number; reason: string }, call: CallDescription) {
    longhaulMetrics().limitWaitMs.add(Math.round(answer.retryInMs), { api: this.api });
    activityLog('info', 'governor-wait', `${call.method} ${call.url}: not sent, Temporal retries in ${Math.ceil(answer.retryInMs / 1000)} s (${this.opts.credential}'s shared rate limit: ${answer.reason})`, {
      api: this.api,
      credential: this.opts.credential,
      waitMs: Math.round(answer.retryInMs),
      reason: answer.reason,
    });
    return failureFromDecision(
      {
        kind: 'retry',
        type: /spent|primary/i.test(answer.reason) ? FailureType.PrimaryRateLimit : FailureType.SecondaryRateLimit,
        delayMs: answer.retryInMs,
        message: `not sent: ${sharedWaitLine({ credential: this.opts.credential, until: new Date(this.clock() + answer.retryInMs).toISOString() })} (${answer.reason})`,
      },
      call,
      undefined,
      // Nothing reached the API: expected flow, said above at INFO, not a failed request (the SDK would log
      // every refusal at WARN as "Activity failed").
      ApplicationFailureCategory.BENIGN,
    );
  }

  /** Reads the governor's gate (a Query: no history written); undefined when open for this kind. */
  private async closedFor(kind: RequestKind): Promise<{ retryInMs: number; reason: string } | undefined> {
    let snap: GovernorSnapshot;
    try {
      const client = await this.client();
      snap = await client.workflow.getHandle(governorWorkflowId(this.opts.credential)).query(limitsQuery);
    } catch (err) {
      return this.retrySoon(`rate governor unreachable: ${(err as Error).message}`);
    }
    const now = this.clock();
    const jitter = Math.round(this.random() * 1000);
    if (snap.blockedUntil !== undefined && snap.blockedUntil > now && snap.reason !== BUDGET_SPENT) {
      this.heardOfLimit(snap.blockedUntil, snap.reason ?? 'rate limited', 'governor');
      return { retryInMs: snap.blockedUntil - now + jitter, reason: snap.reason ?? 'rate limited' };
    }
    if (kind === 'content' && snap.contentBlockedUntil !== undefined && snap.contentBlockedUntil > now) {
      this.heardOfContentLimit(snap.contentBlockedUntil, 'governor');
      return { retryInMs: snap.contentBlockedUntil - now + jitter, reason: CONTENT_CLOSED };
    }
    return undefined;
  }

  /**
   * The answer to an ask, or (a mutation) "time spent" at its send deadline, whichever comes first. The governor's
   * answer can be late by a workflow task timeout (its task was on a worker that was SIGKILLed): waiting for it past
   * the deadline let the server time the attempt out, an unknown outcome that `sendOnce` looks up for its whole
   * grace period (over a minute) before sending again. Refused at the deadline, the next attempt sends it at once.
   * The waiter stays queued: a slot granted to it later goes past its deadline, so to the next waiter (`flush`).
   */
  private askBy(kind: RequestKind, deadline: number): Promise<Answer> {
    const asked = this.ask(kind, deadline);
    // Node fires a timer of more than 2^31 - 1 ms at once: a deadline that far off needs no guard.
    if (!(deadline - this.clock() <= MAX_TIMER_MS)) return asked;
    // A real timer, not `sleep`: it must run beside the ask (an injected sleep may advance a test's clock at once).
    let timer: ReturnType<typeof setTimeout> | undefined;
    const spent = new Promise<Answer>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, ...this.retrySoon(ATTEMPT_TIME_SPENT) }), Math.max(0, deadline - this.clock()));
    });
    return Promise.race([asked, spent]).finally(() => clearTimeout(timer));
  }

  /** Slots granted here that their requests' attempts could not use in time, for the next requests to ask. */
  private spare: Record<RequestKind, Answer[]> = { read: [], mutation: [], content: [] };

  /** Queues the ask (or takes a spare slot still ahead); one Update per kind is out at a time, carrying every request queued meanwhile. */
  private ask(kind: RequestKind, deadline: number): Promise<Answer> {
    const now = this.clock();
    this.spare[kind] = this.spare[kind].filter((slot) => slot.ok && slot.slotAt !== undefined && slot.slotAt > now);
    const fits = this.spare[kind].findIndex((slot) => slot.ok && slot.slotAt! <= deadline);
    if (fits >= 0) return Promise.resolve(this.spare[kind].splice(fits, 1)[0]);
    return new Promise((resolve) => {
      this.pending[kind].push({ deadline, resolve });
      if (!this.asking[kind]) void this.flush(kind);
    });
  }

  private async flush(kind: RequestKind): Promise<void> {
    this.asking[kind] = true;
    try {
      while (this.pending[kind].length > 0) {
        // The nearest deadlines first: the slots come in order, and those waiters can wait least.
        const waiters = this.pending[kind].splice(0).sort((a, b) => a.deadline - b.deadline);
        let grant: AcquireGrant;
        try {
          const latest = waiters[waiters.length - 1].deadline - this.clock() - this.slotLead;
          const sendBy = waiters[waiters.length - 1].deadline;
          const bounded = Number.isFinite(latest) ? { maxWaitMs: Math.max(0, Math.round(latest)), sendBy: Math.round(sendBy) } : {};
          const lead = kind === 'read' ? {} : { leadMs: this.slotLead, ...bounded };
          grant = await this.update({ workerId: this.workerId, kind, count: waiters.length, observation: this.takeObservation(), refunds: this.takeRefunds(), ...lead });
        } catch (err) {
          const reason = `rate governor unreachable: ${(err as Error).message}`;
          for (const w of waiters) w.resolve({ ok: false, ...this.retrySoon(reason) });
          continue;
        }
        const lateMs = grant.grantedAt === undefined ? undefined : this.clock() - grant.grantedAt;
        // Every dated answer, a refusal too, tells how late answers arrive, so the lead follows them down as well as
        // up. Measured on grants alone, a lead grown past the attempts' time while answers were slow (the governor's
        // task on a worker SIGKILLed) was never measured again: every ask refused for it, for ever.
        if (lateMs !== undefined) this.slotLead = nextSlotLead(this.slotLead, lateMs, false);
        if (grant.limitedUntil !== undefined) this.heardOfLimit(grant.limitedUntil, grant.reason ?? 'rate limited', 'governor');
        this.concurrency = grant.concurrency;
        this.wakeSlots();
        const slots = grant.slotTimes?.slice(0, grant.granted);
        let next = 0;
        for (const w of waiters) {
          if (next < grant.granted && (!slots || slots[next] <= w.deadline)) {
            w.resolve({ ok: true, slotAt: slots?.[next++], lateMs, spacingMs: grant.spacingMs, window: grant.window });
          } else if (next < grant.granted) {
            // Its slot would come after its attempt's time: the slot stays for the waiters after it.
            w.resolve({ ok: false, ...this.retrySoon(ATTEMPT_TIME_SPENT) });
          } else {
            w.resolve({ ok: false, retryInMs: (grant.retryInMs ?? 1000) + Math.round(this.random() * 500), reason: grant.reason ?? 'refused' });
          }
        }
        for (const slotAt of slots?.slice(next) ?? []) this.spare[kind].push({ ok: true, slotAt, spacingMs: grant.spacingMs, window: grant.window });
        if (grant.observe) this.wantObservationNow = true;
      }
    } finally {
      this.asking[kind] = false;
    }
  }

  private wantObservationNow = false;

  private async update(req: AcquireRequest): Promise<AcquireGrant> {
    const client = await this.client();
    return client.workflow.executeUpdateWithStart(acquireUpdate, {
      args: [req],
      startWorkflowOperation: this.startOperation(),
    });
  }

  private client(): Client | Promise<Client> {
    return this.opts.client ? this.opts.client() : Context.current().client;
  }

  private taskQueue(): string {
    return this.opts.taskQueue ? this.opts.taskQueue() : Context.current().info.taskQueue;
  }

  private startOperation() {
    return new WithStartWorkflowOperation<typeof rateGovernor>(RATE_GOVERNOR_WORKFLOW, {
      workflowId: governorWorkflowId(this.opts.credential),
      taskQueue: this.taskQueue(),
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ credential: this.opts.credential, config: this.opts.config }],
      typedSearchAttributes: fitSearchAttributes([
        { key: LonghaulProcess, value: Process.RateGovernor },
        { key: LonghaulTarget, value: this.opts.credential },
      ]).pairs,
    });
  }

  /** Keeps the newest facts for the next ask; a limit closes the local mirror and is told to the fleet at once. */
  private learn(outcome: ResponseOutcome): void {
    if (outcome.remaining !== undefined && (!this.observation || outcome.at >= this.observation.at)) {
      this.observation = { obs: { remaining: outcome.remaining, limit: outcome.limit, resetInMs: outcome.resetInMs }, at: outcome.at };
    }
    const limited = outcome.limited;
    if (limited && limited.kind !== 'content') this.heardOfLimit(outcome.at + limited.waitMs, `${limited.kind} rate limit: ${limited.message}`, 'answer');
    if (limited?.kind === 'content') this.heardOfContentLimit(outcome.at + limited.waitMs, 'answer');
    if (limited || this.wantObservationNow) {
      this.wantObservationNow = false;
      const report: LimitReport | undefined = limited ? { ...limited, ageMs: this.clock() - outcome.at, workerId: this.workerId } : undefined;
      void this.signal({ limit: report, observation: this.takeObservation() });
    }
  }

  /**
   * Closes the local mirror until `until` (never shortens it) and logs, once per new end, that this worker learned
   * of the wait and from where: what a fleet test compares this worker's sends with (nothing may go out before `until`).
   */
  private heardOfLimit(until: number, reason: string, source: 'answer' | 'governor'): void {
    if (until <= this.closedUntil) return;
    this.closedUntil = until;
    this.closedReason = reason;
    const [at, end] = [new Date(this.clock()).toISOString(), new Date(until).toISOString()];
    activityLog('info', 'limit-learned', `${this.opts.credential} is rate limited until ${end}, learned from ${source === 'answer' ? 'an answer of the API' : 'the rate governor'} (${reason})`, {
      api: this.api,
      credential: this.opts.credential,
      source,
      at,
      until: end,
    });
  }

  /**
   * Closes content creation here until `until` (never shortens it) and logs it as `limit-learned` with
   * `kind: 'content'`: this worker sends no content request before `until`, whatever the governor has heard yet.
   */
  private heardOfContentLimit(until: number, source: 'answer' | 'governor'): void {
    if (until <= this.contentClosedUntil) return;
    this.contentClosedUntil = until;
    const [at, end] = [new Date(this.clock()).toISOString(), new Date(until).toISOString()];
    activityLog('info', 'limit-learned', `${this.opts.credential} may create no content until ${end}, learned from ${source === 'answer' ? 'an answer of the API' : 'the rate governor'} (${CONTENT_CLOSED})`, {
      api: this.api,
      credential: this.opts.credential,
      kind: 'content',
      source,
      at,
      until: end,
    });
  }

  private readonly refunds = new Map<number, number>();

  private takeRefunds(): { window: number; count: number }[] | undefined {
    if (this.refunds.size === 0) return undefined;
    const out = [...this.refunds].map(([window, count]) => ({ window, count }));
    this.refunds.clear();
    return out;
  }

  private takeObservation(): RateObservation | undefined {
    const o = this.observation;
    this.observation = undefined;
    return o ? { ...o.obs, ageMs: Math.max(0, this.clock() - o.at) } : undefined;
  }

  private async signal(msg: { limit?: LimitReport; observation?: RateObservation }): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const client = await this.client();
        await client.workflow.signalWithStart<typeof rateGovernor, [{ limit?: LimitReport; observation?: RateObservation }]>(RATE_GOVERNOR_WORKFLOW, {
          workflowId: governorWorkflowId(this.opts.credential),
          taskQueue: this.taskQueue(),
          args: [{ credential: this.opts.credential, config: this.opts.config }],
          signal: reportSignal,
          signalArgs: [msg],
        });
        return;
      } catch {
        await this.sleep(backoffMs(BACKOFF.governorReport, attempt + 1));
      }
    }
  }

  private takeSlot(): Promise<void> {
    if (this.active < this.concurrency) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.slotQueue.push(() => resolve()));
  }

  private releaseSlot(): void {
    this.active--;
    this.wakeSlots();
  }

  private wakeSlots(): void {
    while (this.active < this.concurrency && this.slotQueue.length > 0) {
      this.active++;
      this.slotQueue.shift()!();
    }
  }
}
