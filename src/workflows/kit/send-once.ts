/**
 * `sendOnce`: makes a mutating call (create an export, start an import, create a bucket, delete a key) at
 * most once in effect. One implementation for every process; the rules live in `send-once-decision.ts`.
 */
import { ApplicationFailure, CancellationScope, patched, sleep } from '@temporalio/workflow';
import { failureFacts } from '../../common/activity-failures';
import { resolveOutageBounds, type OutageBounds } from '../../common/outage';
import { defaultSendOnceGraceMs } from '../../common/send-once-grace';
import { afterLookupFailed, afterNotFound, afterSendFailed, FRESH_SEND, type SendOnceAction, type SendOnceConfig } from './send-once-decision';

export interface SendOnceOptions<T> {
  /** For messages: "the export of octo-org/alpha, beta". */
  what: string;
  /** The mutating call: an activity with the `SEND_ONCE` preset (one attempt). */
  send: () => Promise<T>;
  /** What an earlier try with an unknown outcome did, if anything (reads only). */
  recover: () => Promise<T | undefined>;
  /** Permanent failure types that mean "it exists already" (e.g. ALREADY_EXISTS): after an unknown outcome, expected. */
  conflictTypes?: readonly string[];
  /**
   * Run each try and the recovery that follows it in a non-cancellable scope, so a cancellation never leaves
   * an unknown creation behind (the caller learns what was created and can clean it up). Waits before a
   * re-send stay cancellable.
   */
  nonCancellable?: boolean;
  /** Failure type when the tries run out or the lookup cannot answer. */
  failureType: string;
  /** Default 6. */
  maxTries?: number;
  /** @format milliseconds — start-to-close timeout of the send activity, for the default grace. Default 60 000. */
  callTimeoutMs?: number;
  /** @format milliseconds — the send-once grace: how long lookups continue after an unknown outcome. Default `defaultSendOnceGraceMs(callTimeoutMs)`. */
  graceMs?: number;
  /** The budget for failing lookups. */
  outage?: OutageBounds | null;
  /** Added to the failure's details. */
  details?: Record<string, unknown>;
  /** Called before each lookup (`recover`), for the caller's count of lookups in its status. */
  onLookup?: () => void;
}

/** The patch after which a refused try (nothing processed) is waited out on the outage budget, not counted. */
export const REFUSALS_ON_OUTAGE_BUDGET_PATCH = 'send-once-refusals-on-outage-budget';

/** The patch after which the lookups after an unknown outcome are two at most (at once, and when the grace is spent). */
export const BOUNDED_LOOKUPS_PATCH = 'send-once-bounded-lookups';

export async function sendOnce<T>(opts: SendOnceOptions<T>): Promise<T> {
  const config: SendOnceConfig = {
    maxTries: opts.maxTries ?? 6,
    graceMs: opts.graceMs ?? defaultSendOnceGraceMs(opts.callTimeoutMs ?? 60_000),
    outage: resolveOutageBounds(opts.outage),
    conflictTypes: opts.conflictTypes ?? [],
  };
  let state = FRESH_SEND;
  let lastError: unknown;
  // One try and the recovery that follows it; ends with the result or the next action (send again or fail).
  const tryOnce = async (): Promise<{ value: T } | { action: SendOnceAction }> => {
    let action: SendOnceAction;
    try {
      return { value: await opts.send() };
    } catch (err) {
      const facts = failureFacts(err);
      if (facts.kind === 'cancelled') throw err;
      lastError = err;
      // Asked at the first refusal only, so runs recorded before the rule replay with the old one.
      if (facts.notProcessed && config.refusalsOnOutageBudget === undefined) config.refusalsOnOutageBudget = patched(REFUSALS_ON_OUTAGE_BUDGET_PATCH);
      action = afterSendFailed(state, facts, Date.now(), config);
      // Asked at the first unknown outcome only, so runs recorded before the rule replay their lookups.
      if (action.do === 'recover' && config.boundedLookups === undefined) config.boundedLookups = patched(BOUNDED_LOOKUPS_PATCH);
    }
    while (action.do === 'recover') {
      state = action.state;
      if (action.afterMs > 0) await sleep(action.afterMs);
      try {
        opts.onLookup?.();
        const found = await opts.recover();
        if (found !== undefined) return { value: found };
        action = afterNotFound(state, Date.now(), config);
      } catch (err) {
        const facts = failureFacts(err);
        if (facts.kind === 'cancelled') throw err;
        action = afterLookupFailed(state, facts, Date.now(), config);
      }
    }
    return { action };
  };

  for (;;) {
    const outcome = opts.nonCancellable ? await CancellationScope.nonCancellable(tryOnce) : await tryOnce();
    if ('value' in outcome) return outcome.value;
    const { action } = outcome;
    state = action.state;
    if (action.do === 'fail') {
      // A permanent answer to the only kind of try there was: the caller sees the API's own failure.
      if (action.why === 'permanent' && !state.hadUnknown) throw lastError;
      throw ApplicationFailure.create({
        type: opts.failureType,
        nonRetryable: true,
        message: `${opts.what}: ${action.message}`,
        details: [{ ...opts.details, tries: state.tries, lookups: state.lookups }],
        cause: lastError instanceof Error ? lastError : undefined,
      });
    }
    if (action.afterMs > 0) await sleep(action.afterMs);
  }
}
