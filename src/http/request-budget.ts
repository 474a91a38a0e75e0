/**
 * The seam between the HTTP core and a fleet-wide rate budget: before sending, `ApiClient` asks the
 * budget for a permit (which may wait, or refuse with a typed retryable failure); after the answer it
 * hands back what the response said about the limits. The worker plugs in the Temporal-backed governor
 * link (`src/processes/rate-governor/activities/governor-link.ts`); without a budget the client behaves as a single process.
 */
import type { RequestKind } from '../common/request-kind';
import type { CallDescription } from './failures';
import { FailureType, msUntilReset, type ResponseFacts, type RetryDecision, type RetryPolicy } from './retry-policy';

export type { RequestKind } from '../common/request-kind';

/** What one answer taught about the credential's limits. */
export interface ResponseOutcome {
  remaining?: number;
  limit?: number;
  /** @format milliseconds — until the window resets, on the server's clock. */
  resetInMs?: number;
  /** Set when the answer was a limit: which, and for how long nothing may be sent. */
  limited?: { kind: 'primary' | 'secondary' | 'content'; waitMs: number; message: string };
  /** Local epoch ms when the answer arrived. */
  at: number;
  /** The server did not count the request (a 304 to a conditional request): its permit goes back. */
  notCounted?: boolean;
}

export interface BudgetTicket {
  /** Called once, with the answer's facts, or without when no answer came (network failure). */
  done(outcome?: ResponseOutcome): void;
}

export interface RequestBudget {
  /** Resolves when the request may go out; rejects with a retryable `ApplicationFailure` when it may not yet. */
  acquire(kind: RequestKind, call: CallDescription): Promise<BudgetTicket>;
  /**
   * @format milliseconds — how long this process already knows `kind` may not be sent (0: not closed). Asked as the
   * request is written, after its permit: news that came while it waited in the HTTP client's queue still stops it.
   */
  closedForMs?(kind: RequestKind): number;
}

/** GitHub content creation the per-token 80/min and 500/h allowances apply to (spec 001). */
const CONTENT_CREATING: readonly RegExp[] = [
  /\/hooks\/\d+\/deliveries\/\d+\/attempts$/,
  /\/hooks\/\d+\/pings$/,
  /\/repos\/[^/]+\/[^/]+\/issues(\/\d+\/comments)?$/,
  /\/repos\/[^/]+\/[^/]+\/pulls(\/\d+\/(comments|reviews))?$/,
  /\/repos\/[^/]+\/[^/]+\/commits\/[0-9a-f]+\/comments$/,
];

export function githubRequestKind(method: string, pathname: string): RequestKind {
  if (method === 'GET' || method === 'HEAD') return 'read';
  if (method === 'POST' && CONTENT_CREATING.some((re) => re.test(pathname))) return 'content';
  return 'mutation';
}

/** A 422 GitHub sends when the content-creation allowance is spent. */
export function isSpammedAnswer(status: number, message: string | undefined): boolean {
  return status === 422 && /spammed/i.test(message ?? '');
}

function intHeader(facts: ResponseFacts, name: string): number | undefined {
  const v = facts.headers[name];
  return v !== undefined && /^\d+$/.test(v.trim()) ? Number(v) : undefined;
}

/** The facts of one answer worth sharing with the fleet. */
export function outcomeOf(facts: ResponseFacts, decision: RetryDecision, nowMs: number, policy: RetryPolicy, spammedWaitMs: number): ResponseOutcome {
  const outcome: ResponseOutcome = {
    remaining: intHeader(facts, 'x-ratelimit-remaining'),
    limit: intHeader(facts, 'x-ratelimit-limit'),
    resetInMs: msUntilReset(facts, nowMs),
    at: nowMs,
  };
  if (decision.kind === 'retry' && decision.blockedUntilMs !== undefined) {
    const primary = decision.type === FailureType.PrimaryRateLimit;
    outcome.limited = { kind: primary ? 'primary' : 'secondary', waitMs: decision.blockedUntilMs - nowMs, message: decision.message };
  } else if (decision.kind === 'permanent' && decision.type === FailureType.RateLimitExhausted) {
    outcome.limited = { kind: 'secondary', waitMs: policy.rateLimitBackoff.initialMs, message: decision.message };
  } else if (facts.status === 503 && decision.kind === 'retry' && facts.headers['retry-after'] !== undefined) {
    // A 503 with retry-after asks every client of the API to stay away that long, not just this request.
    outcome.limited = { kind: 'secondary', waitMs: decision.delayMs, message: decision.message };
  } else if (isSpammedAnswer(facts.status, facts.message)) {
    outcome.limited = { kind: 'content', waitMs: spammedWaitMs, message: facts.message ?? 'spammed' };
  }
  return outcome;
}
