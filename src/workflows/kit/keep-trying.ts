/**
 * `keepTrying`: for calls that must happen (cleanup: unlock, archive delete, import cancel). Each call is an
 * activity with the `CLEANUP` preset; when it gives up on a transient failure, the call is made again on the
 * outage budget, until it succeeds or fails permanently. The caller names what is left to do by hand.
 */
import { sleep } from '@temporalio/workflow';
import { failureFacts } from '../activity-failures';
import { afterFailure, NO_OUTAGE, resolveOutageBounds, type OutageBounds } from './outage';

export type KeepTryingOutcome<T> = { ok: true; value: T } | { ok: false; why: 'permanent' | 'budget'; message: string; error: unknown };

export async function keepTrying<T>(call: () => Promise<T>, opts: { outage?: OutageBounds } = {}): Promise<KeepTryingOutcome<T>> {
  const bounds = resolveOutageBounds(opts.outage);
  let outage = NO_OUTAGE;
  for (;;) {
    try {
      return { ok: true, value: await call() };
    } catch (err) {
      const facts = failureFacts(err);
      if (facts.kind === 'cancelled') throw err;
      const decision = afterFailure(outage, facts, Date.now(), bounds);
      if (decision.action === 'give-up') return { ok: false, why: decision.why === 'budget' ? 'budget' : 'permanent', message: decision.message, error: err };
      outage = decision.state;
      await sleep(decision.delayMs);
    }
  }
}
