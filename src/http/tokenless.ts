/**
 * The token-less client of the HTTP core: requests to URLs that must never receive an API credential, the
 * pre-signed storage URLs of archive downloads and the user's URL of an HTTP sink. It has no token source at
 * all, and every header set it sends passes `withoutCredentials`, so not even a caller's header carries one.
 *
 * Everything else is the core's: what an answer means is `decideRetry` (on `tokenlessRetryPolicy`), redirects
 * and headers follow `redirects.ts`, failures are `failureFromDecision`'s, and every answer is told to the
 * observer (metrics and logs, labelled by `api`). Here: undici for small buffered requests (`send`, a sink POST);
 * the archive module's `StorageClient` (`src/archive/storage/client.ts`) adds the long streamed GET of storage.
 */
import { ApplicationFailure } from '@temporalio/common';
import { request, type Agent, type Dispatcher } from 'undici';
import { flattenHeaders } from './api-client';
import { currentAttempt } from './attempt';
import { failureFromDecision, type CallDescription } from './failures';
import { observeSafely, type ApiObservation, type ApiObserver } from './observer';
import { isRedirect, unfollowedRedirect, withoutCredentials } from './redirects';
import { BACKOFF } from '../common/backoff';
import { decideNetworkRetry, decideRetry, FailureType, PERMANENT_STATUSES, type RetryDecision, type RetryPolicy } from './retry-policy';
import { BODY_LIMITS, BodyTooLarge, readCappedText } from './body-limits';
import { apiObserver } from './api-observer';
import { checkedAddresses, checkOutboundUrl, guardedAgent, OutboundRefused, outboundFailure, shownUrl, type OutboundContext, type Resolver } from './outbound-policy';
import { currentNetworkSettings, proxyFor, sharedDispatcher, type NetworkSettings } from './proxy';
import type { Clock } from '../common/clock';

/**
 * Storage and sinks: the core's permanent statuses; 429 waits for its `retry-after` (else backs off like a
 * 5xx); 408, 425 and 5xx are transient. The attempts are bounded by the activity's retry policy, not here.
 */
export const tokenlessRetryPolicy: RetryPolicy = {
  permanent: PERMANENT_STATUSES,
  rateLimitStatuses: [429],
  alwaysRateLimitStatuses: [429],
  // No API rate-limit conventions here: a 403 is a refusal, never a "secondary limit".
  secondaryLimitPattern: /(?!)/,
  rateLimitBackoff: BACKOFF.tokenlessRateLimit,
  maxRateLimitAttempts: Number.POSITIVE_INFINITY,
  transientStatuses: [408, 425, 500, 502, 503, 504],
  transientBackoff: BACKOFF.tokenlessTransient,
  maxTransientAttempts: Number.POSITIVE_INFINITY,
  resetMarginMs: 0,
  maxHeaderDelayMs: 2 * 60 * 60 * 1000,
};

export interface TokenlessOptions {
  /** The observer's `api` label (`storage`, `sink`). */
  api: string;
  /** The observer's path: one fixed word, never the URL's (pre-signed and user paths are not routes). */
  route: string;
  policy?: RetryPolicy;
  /** The `api`'s `apiObserver` by default. */
  observer?: ApiObserver;
  clock?: Clock;
  /** The attempt number of the running activity (1 outside activities). */
  attempt?: () => number;
  userAgent?: string;
  /**
   * For `send`; without it, a dispatcher of the request's own whose connections pass the outbound policy. A
   * dispatcher given here (a test's `MockAgent`) makes its own connections: the policy then judges the URL only.
   */
  dispatcher?: Dispatcher;
  /**
   * The outbound policy's context of every URL this client is asked for (none is the operator's own), asked per
   * request: the API whose answer or process named it may depend on the activity's credential. Without it the
   * policy is at its strictest (https to public addresses only).
   */
  outbound?: () => OutboundContext | Promise<OutboundContext>;
  /** The name resolution the policy judges and connects by (tests inject one). */
  resolve?: Resolver;
  /** The proxy settings (`proxy.ts`); the process's by default. */
  network?: NetworkSettings;
  /** @format milliseconds — for `send`. */
  timeoutMs?: number;
  /** For `send`: the cap on a success answer's body (default `BODY_LIMITS.sinkAnswer`: 64 KiB). @format bytes */
  maxAnswerBytes?: number;
}

/** Failure types a caller keeps for its users (e.g. `SinkUnavailable`/`SinkRejected`) instead of the core's. */
export interface FailureTypes {
  retry: string;
  permanent: string;
}

export interface TokenlessRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: string | URL;
  headers?: Record<string, string>;
  body?: string;
}

export interface TokenlessAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export class TokenlessClient {
  private readonly observer: ApiObserver;
  private readonly policy: RetryPolicy;

  constructor(protected readonly opts: TokenlessOptions) {
    this.observer = opts.observer ?? apiObserver(opts.api, { clock: opts.clock });
    this.policy = opts.policy ?? tokenlessRetryPolicy;
  }

  /** What a token-less request sends: the user agent and the caller's headers, without any credential. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'user-agent': this.opts.userAgent ?? 'longhaul/0.1', ...withoutCredentials(extra) };
  }

  /** The core's decision for an answer (3xx included: whoever judges it did not follow it), told to the observer. */
  judge(method: string, status: number, headers: Readonly<Record<string, string>>, message?: string): RetryDecision {
    const decision = decideRetry({ status, headers, message }, this.context(), this.policy);
    this.observe({ kind: 'answer', method, path: this.opts.route, status, decision, attempt: this.attempt() });
    return decision;
  }

  /** The failure for a decision; the call is named without its query (pre-signed URLs carry their signature there). */
  failure(decision: Exclude<RetryDecision, { kind: 'success' }>, method: string, url: URL, types?: FailureTypes): ApplicationFailure {
    const call: CallDescription = { method, url: `${url.origin}${url.pathname}` };
    return failureFromDecision(decision, call, types ? (decision.kind === 'retry' ? types.retry : types.permanent) : decision.type);
  }

  /**
   * One buffered request (a sink POST). A redirect is not followed: the body is not sent anywhere the
   * caller did not name. A non-success answer or no answer throws the core's failure (or `types`).
   */
  async send(req: TokenlessRequest, types?: FailureTypes): Promise<TokenlessAnswer> {
    const url = new URL(req.url);
    let guarded: Agent | undefined;
    try {
      return await this.sendOnce(req, url, types, (ctx) => (guarded = guardedAgent(ctx, this.opts.resolve)));
    } finally {
      await guarded?.close();
    }
  }

  private async sendOnce(req: TokenlessRequest, url: URL, types: FailureTypes | undefined, guarded: (ctx: OutboundContext) => Dispatcher): Promise<TokenlessAnswer> {
    let res: Dispatcher.ResponseData;
    try {
      const ctx = await this.outboundContext();
      checkOutboundUrl(url, ctx);
      const proxy = this.opts.dispatcher ? undefined : proxyFor(url, this.network());
      // Through a proxy the worker does not connect to the host itself: its addresses are checked here, before the
      // request is handed to the proxy (which is asked for the name).
      if (proxy) await checkedAddresses(url.hostname, ctx, this.opts.resolve, shownUrl(url));
      res = await request(url, {
        method: req.method,
        headers: this.headers(req.headers),
        body: req.body,
        dispatcher: this.opts.dispatcher ?? (proxy ? sharedDispatcher() : guarded(ctx)),
        headersTimeout: this.opts.timeoutMs ?? 30_000,
        bodyTimeout: this.opts.timeoutMs ?? 30_000,
      });
    } catch (err) {
      const refusal = refusalIn(err);
      if (refusal) throw this.refused(refusal, req.method, url);
      throw this.failure(this.networkFailure(req.method, err), req.method, url, types);
    }
    const headers = flattenHeaders(res.headers);
    const text = await this.readAnswer(res, req.method, url, types);
    if (isRedirect(res.statusCode)) {
      const decision = unfollowedRedirect(res.statusCode, headers.location, url);
      this.observe({ kind: 'answer', method: req.method, path: this.opts.route, status: res.statusCode, decision, attempt: this.attempt() });
      throw this.failure(decision, req.method, url, types);
    }
    const decision = this.judge(req.method, res.statusCode, headers, text.slice(0, 300) || undefined);
    if (decision.kind !== 'success') throw this.failure(decision, req.method, url, types);
    return { status: res.statusCode, headers, text };
  }

  /**
   * The answer's body up to `sinkAnswer` (an error answer: its first bytes, for the message). A success answer past
   * the cap is not the counterpart's answer (a proxy's page): retryable, as `types.retry` (the core's
   * `MalformedAnswer` without), naming the cap. A body that breaks off reads as what arrived (the status decides).
   */
  private async readAnswer(res: Dispatcher.ResponseData, method: string, url: URL, types?: FailureTypes): Promise<string> {
    const ok = res.statusCode < 300;
    try {
      return (await readCappedText(res.body, { name: 'a sink answer', bytes: this.opts.maxAnswerBytes ?? BODY_LIMITS.sinkAnswer.bytes }, { truncate: !ok })).text;
    } catch (err) {
      if (!(err instanceof BodyTooLarge)) return '';
      throw ApplicationFailure.create({
        type: types?.retry ?? FailureType.MalformedAnswer,
        message: `${method} ${url.origin}${url.pathname} → ${res.statusCode}: ${err.message}`,
        details: [{ method, url: `${url.origin}${url.pathname}`, status: res.statusCode, capBytes: err.capBytes, bytesRead: err.bytesRead }],
      });
    }
  }

  protected network(): NetworkSettings {
    return this.opts.network ?? currentNetworkSettings();
  }

  protected async outboundContext(): Promise<OutboundContext> {
    return (await this.opts.outbound?.()) ?? { allowedHosts: [] };
  }

  /** The policy's refusal, named by the request's URL (a refusal at connect time only knew the host). */
  protected refused(refusal: OutboundRefused, method: string, url: URL): ApplicationFailure {
    const named = new OutboundRefused(refusal.rule, shownUrl(url), refusal.address, refusal.reason);
    this.observe({ kind: 'network-failure', method, path: this.opts.route, decision: { kind: 'permanent', type: FailureType.OutboundRefused, status: 0, message: named.message }, attempt: this.attempt() });
    return outboundFailure(named, method);
  }

  protected networkFailure(method: string, err: unknown): Exclude<RetryDecision, { kind: 'success' }> {
    const decision = decideNetworkRetry((err as Error)?.message ?? String(err), this.context(), this.policy);
    this.observe({ kind: 'network-failure', method, path: this.opts.route, decision, attempt: this.attempt() });
    // The decision for a missing answer is never "success"; the policy may give up (permanent).
    return decision as Exclude<RetryDecision, { kind: 'success' }>;
  }

  protected attempt(): number {
    return (this.opts.attempt ?? currentAttempt)();
  }

  protected context() {
    return { nowMs: (this.opts.clock ?? Date.now)(), attempt: this.attempt() };
  }

  protected observe(observation: ApiObservation): void {
    observeSafely(this.observer, observation);
  }
}

/** The policy's refusal in an error or its causes (undici may wrap what a connection's lookup failed with). */
function refusalIn(err: unknown): OutboundRefused | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) if (e instanceof OutboundRefused) return e;
  return undefined;
}
