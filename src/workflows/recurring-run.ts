/**
 * What every run of recurring work (feed polls, hook repair) shares, in workflow code:
 * - `OutageWatch`: an outage is waited out on a durable timer, with backoff, within the run's outage
 *   budget; only a spent budget fails the run (`OutageBudgetExhausted`).
 * - `reportingFailureToSchedule`: a run that fails tells its Schedule, which pauses itself with a
 *   note after `pauseAfterFailures` failed runs in a row (see `common/schedule-health`).
 */
import { ApplicationFailure, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { outageCause, outageDelayMs, type OutageBudget } from '../common/outage';
import { summarized } from './activity-summaries';

export const RecurringFailure = { OutageBudgetExhausted: 'OutageBudgetExhausted' } as const;

const health = summarized(proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
}));

/** How a run has fared against outages (reported in its result and status). */
export interface OutageState {
  /** Waits taken after failed calls. */
  waits: number;
  /** Time spent in outages so far (failed calls and the waits after them). @format milliseconds */
  spentMs: number;
  lastError?: string;
}

export class OutageWatch {
  readonly state: OutageState = { waits: 0, spentMs: 0 };
  private streak = 0;
  private streakStartedAt: number | undefined;

  constructor(
    private readonly what: string,
    private readonly budget: OutageBudget,
    private readonly onWait?: (delayMs: number, error: string, state: OutageState) => void,
  ) {}

  /**
   * After a call failed because the service is unreachable: waits (durable timer) before the next
   * try, or fails the run when the outage would outlast the budget.
   */
  async wait(error: string, failedCallStartedAt: number): Promise<void> {
    this.streak++;
    this.streakStartedAt ??= failedCallStartedAt;
    const delay = outageDelayMs(this.streak, this.budget);
    const spent = this.state.spentMs + (Date.now() - this.streakStartedAt);
    this.state.lastError = error;
    if (spent + delay > this.budget.budgetMs) {
      throw ApplicationFailure.nonRetryable(
        `${this.what}: the service stayed unreachable past the outage budget of ${Math.round(this.budget.budgetMs / 1000)} s ` +
          `(${Math.round(spent / 1000)} s in outages, ${this.state.waits} waits); last error: ${error}`,
        RecurringFailure.OutageBudgetExhausted,
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

function messageOf(err: unknown): string {
  let e: unknown = err;
  // The innermost cause says what went wrong (an activity's failure inside an ActivityFailure).
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(err);
}

/** Runs `body`; when it fails, reports the failure to the Schedule (which may pause itself) and rethrows. */
export async function reportingFailureToSchedule<T>(opts: { scheduleId: string; pauseAfterFailures: number }, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (!isCancellation(err)) {
      // Best effort: failing to count must not hide the run's own failure.
      await health.recordScheduledRunFailure({ ...opts, reason: messageOf(err) }).catch(() => undefined);
    }
    throw err;
  }
}
