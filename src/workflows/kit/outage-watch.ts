/**
 * `OutageWatch`: recurring work (feed polls, hook repair) waits out an outage on a durable timer, with the kit's
 * backoff, within the run's *accumulated* outage budget (`accumulatedOutageBounds`, `RECURRING_OUTAGE` by
 * default): the time spent in outages adds up over the whole run, successes in between do not refill it (unlike
 * the consecutive budget of `src/common/outage.ts`). Only a spent budget fails the run (`OutageBudgetExhausted`). Unlike
 * `keepTrying`, only an *outage* is waited out (`outageCause`): any other failure ends the call at once.
 */
import { ActivityFailure, ApplicationFailure, isCancellation, patched, sleep, TimeoutFailure } from '@temporalio/workflow';
import { FAILURES, failureTypes, FailureType, meansOutage } from '../../common/failures';
import { outageBackoffMs, type AccumulatedOutageBounds } from '../../common/outage';

export const OutageFailure = failureTypes(FAILURES.outage);

/**
 * `patched()` id: runs begun before `UnexpectedResponseError` was permanent waited it out as an outage. The API
 * client no longer raises it for the calls recurring work makes (a refused foreign origin and a redirect loop
 * have their own permanent types), so only a history recorded by an older worker meets it here.
 */
export const UNEXPECTED_RESPONSE_PERMANENT_PATCH = 'unexpected-response-permanent';

/** The failure a call ended with, if it means the service is unreachable for now (an outage: the registry's `meansOutage`). */
export function outageCause(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return `timed out: ${cause.message}`;
  if (!(cause instanceof ApplicationFailure)) return undefined;
  const waitedOutBefore = cause.type === FailureType.UnexpectedResponse && !patched(UNEXPECTED_RESPONSE_PERMANENT_PATCH);
  return meansOutage(cause.type) || waitedOutBefore ? `${cause.type}: ${cause.message}` : undefined;
}

/** How a run has fared against outages (reported in its result and status). */
export interface RunOutage {
  /** Waits taken after failed calls. */
  waits: number;
  /** Time spent in outages so far, accumulated (failed calls and the waits after them). @format milliseconds */
  spentMs: number;
  lastError?: string;
}

export class OutageWatch {
  readonly state: RunOutage = { waits: 0, spentMs: 0 };
  private streak = 0;
  private streakStartedAt: number | undefined;

  constructor(
    private readonly what: string,
    private readonly bounds: AccumulatedOutageBounds,
    private readonly onWait?: (delayMs: number, error: string, state: RunOutage) => void,
  ) {}

  /**
   * After a call failed because the service is unreachable: waits (durable timer) before the next
   * try, or fails the run when the outage would outlast the budget.
   */
  async wait(error: string, failedCallStartedAt: number): Promise<void> {
    this.streak++;
    this.streakStartedAt ??= failedCallStartedAt;
    const delay = outageBackoffMs(this.streak, this.bounds);
    const spent = this.state.spentMs + (Date.now() - this.streakStartedAt);
    this.state.lastError = error;
    if (spent + delay > this.bounds.accumulatedBudgetMs) {
      throw ApplicationFailure.nonRetryable(
        `${this.what}: the service stayed unreachable past the outage budget of ${Math.round(this.bounds.accumulatedBudgetMs / 1000)} s ` +
          `(${Math.round(spent / 1000)} s in outages, ${this.state.waits} waits); last error: ${error}`,
        OutageFailure.OutageBudgetExhausted,
        { ...this.state, spentMs: spent },
      );
    }
    this.state.waits++;
    this.onWait?.(delay, error, this.state);
    await sleep(delay);
  }

  /** After a call succeeded: the outage (if any) is over. */
  recovered(): void {
    if (this.streakStartedAt !== undefined) this.state.spentMs += Date.now() - this.streakStartedAt;
    this.streak = 0;
    this.streakStartedAt = undefined;
  }

  /** Runs `call` until it succeeds or fails for another reason than an outage (or the budget is spent). */
  async call<T>(call: () => Promise<T>): Promise<T> {
    for (;;) {
      const startedAt = Date.now();
      try {
        const result = await call();
        this.recovered();
        return result;
      } catch (err) {
        const cause = isCancellation(err) ? undefined : outageCause(err);
        if (cause === undefined) throw err;
        await this.wait(cause, startedAt);
      }
    }
  }
}
