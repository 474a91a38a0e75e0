/**
 * What the HTTP core reports about each call, for metrics and logs. The core only describes facts (the
 * call, the answer's status, the retry decision); what is counted or logged is the observer's business
 * (`api-observer.ts`, over the metrics and log of `src/telemetry/`), so the rest of the core stays free of them.
 */
import type { RetryDecision } from './retry-policy';

export type ApiObservation =
  /** Not sent: the rate-limit gate of this origin is closed for `waitMs` more. */
  | { kind: 'not-sent'; method: string; path: string; waitMs: number }
  /** Passed the gate's last check, as undici writes it to its connection (`send-check.ts`): sent now. Each redirect hop too. */
  | { kind: 'admitted'; method: string; path: string }
  /** An answer from the API (redirect hops are not reported, the final answer is). */
  | { kind: 'answer'; method: string; path: string; status: number; decision: RetryDecision; attempt: number; gateClosedUntilMs?: number }
  /** No answer: connection refused, reset or timed out. */
  | { kind: 'network-failure'; method: string; path: string; decision: RetryDecision; attempt: number };

export interface ApiObserver {
  observe(observation: ApiObservation): void;
}

/** Tells the observer, if any; its errors are swallowed: telemetry must never change the outcome of a call. */
export function observeSafely(observer: ApiObserver | undefined, observation: ApiObservation): void {
  try {
    observer?.observe(observation);
  } catch {
    // Telemetry must never change the outcome of a call.
  }
}
