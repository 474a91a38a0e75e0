/**
 * `keepTrying`: for calls that must happen (cleanup: unlock, archive delete, import cancel). Each call is an
 * activity with the `CLEANUP` preset; when it gives up on a transient failure, the call is made again on the
 * outage budget, until it succeeds or fails permanently. The caller names what is left to do by hand.
 */
import { log, sleep } from '@temporalio/workflow';
import { failureFacts } from '../../common/activity-failures';
import { afterFailure, NO_OUTAGE, resolveOutageBounds, type OutageBounds } from '../../common/outage';

export type KeepTryingOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; why: 'permanent' | 'budget'; message: string; error: unknown }
  /** `suspend` said stop before the next try (the run continues as new; the call is still to be made). */
  | { ok: false; why: 'suspended'; message: string; error: unknown };

export interface KeepTryingOptions {
  outage?: OutageBounds | null;
  /** Checked before each further try: true stops (e.g. the run's event budget is reached). */
  suspend?: () => boolean;
  /**
   * The cleanup step in words ("unlock alpha"): given, the outcome is logged (`event: "cleanup"` or
   * `"cleanup-failed"`). Waits on the outage budget are logged either way (`event: "outage-backoff"`).
   * Workflow logging is replay-safe: a replayed run writes nothing.
   */
  what?: string;
}

export async function keepTrying<T>(call: () => Promise<T>, opts: KeepTryingOptions = {}): Promise<KeepTryingOutcome<T>> {
  const bounds = resolveOutageBounds(opts.outage);
  let outage = NO_OUTAGE;
  for (;;) {
    try {
      const value = await call();
      if (opts.what) log.info(`${opts.what}: done`, { event: 'cleanup', step: opts.what, failedTries: outage.failuresInRow });
      return { ok: true, value };
    } catch (err) {
      const facts = failureFacts(err);
      if (facts.kind === 'cancelled') throw err;
      const decision = afterFailure(outage, facts, Date.now(), bounds);
      if (decision.action === 'give-up') {
        const why = decision.why === 'budget' ? 'budget' : 'permanent';
        // Only a named cleanup step logs its outcome: other callers fail with the error themselves.
        if (opts.what) log.error(`${opts.what}: failed (${decision.message})`, { event: 'cleanup-failed', step: opts.what, reason: why, type: facts.type, message: decision.message });
        return { ok: false, why, message: decision.message, error: err };
      }
      outage = decision.state;
      if (opts.suspend?.()) return { ok: false, why: 'suspended', message: decision.state.failuresInRow + ' failed tries so far', error: err };
      log.warn(`${opts.what ?? 'call'}: failed, trying again in ${Math.ceil(decision.delayMs / 1000)} s`, {
        event: 'outage-backoff',
        step: opts.what,
        waitMs: decision.delayMs,
        failuresInRow: decision.state.failuresInRow,
        type: facts.type,
      });
      await sleep(decision.delayMs);
    }
  }
}
