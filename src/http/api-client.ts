/**
 * The one HTTP core every activity uses: base URL, auth, default headers, conditional requests,
 * redirects, pagination, and the translation of every non-success into a typed `ApplicationFailure`
 * through the pure retry decision (`retry-policy.ts`).
 *
 * An `ApiClient` is created once per API family by the worker and injected into activity factories.
 */
import { type Dispatcher, request } from 'undici';
import { ApplicationFailure } from '@temporalio/common';
import {
  blockedUntilFromHeaders,
  decideNetworkRetry,
  decideRetry,
  FailureType,
  githubRetryPolicy,
  type ResponseFacts,
  type RetryPolicy,
} from './retry-policy';
import { failureFromDecision, type CallDescription } from './failures';
import { answerProblem, malformedAnswerFailure } from './answer';
import { BODY_LIMITS, BodyTooLarge, readCappedText } from './body-limits';
import { RateLimitGate } from './rate-limit-gate';
import { githubRequestKind, outcomeOf, type BudgetTicket, type RequestBudget, type RequestKind } from './request-budget';
import { observeSafely, type ApiObservation, type ApiObserver } from './observer';
import { isRedirect, MAX_REDIRECTS, methodAfterRedirect } from './redirects';
import { bareHost, decideOutbound, OutboundRefused, outboundFailure, shownUrl, type OutboundContext } from './outbound-policy';
import { isIP } from 'node:net';
import { sharedDispatcher } from './proxy';
import { checkedAtSend, ClosedAtSend } from './send-check';
import type { Clock } from '../common/clock';

/** Resolves the bearer token at call time (env var, file, ADC…); `undefined` sends no `Authorization`. */
export type TokenProvider = () => string | undefined | Promise<string | undefined>;

/** Reads the API's message (and any retry hint) out of an error body. */
export type ErrorBodyParser = (body: unknown) => Pick<ResponseFacts, 'message' | 'bodyRetryDelayMs' | 'reason' | 'apiStatus'>;

export interface ApiClientOptions {
  /** e.g. `https://api.github.com` or `https://ghe.example.com/api/v3` (a path prefix is kept). */
  baseUrl: string;
  token: TokenProvider;
  /** Headers sent with every request to the API origin (Accept, version header…). */
  defaultHeaders?: Record<string, string>;
  dispatcher?: Dispatcher;
  policy?: RetryPolicy;
  gate?: RateLimitGate;
  /** A fleet-wide budget asked before every request (the rate governor); without it the gate is per process. */
  budget?: RequestBudget;
  /** Classifies a request for pacing (read, mutation, content creation); GitHub's rules by default. */
  requestKind?: (method: string, pathname: string) => RequestKind;
  /** @format milliseconds — how long a 422 "spammed" closes content creation for the fleet. */
  spammedWaitMs?: number;
  /**
   * @format milliseconds — up to this much (random) is added to rate-limit waits handed to Temporal, so
   * activities refused together do not all retry at the reset. 0 (default) keeps waits exact.
   */
  retryJitterMs?: number;
  random?: () => number;
  clock?: Clock;
  /** The attempt number of the running activity (1 outside activities). */
  attempt?: () => number;
  /** The API's error model; the body's top-level `message` without one. */
  parseErrorBody?: ErrorBodyParser;
  /** @format milliseconds */
  timeoutMs?: number;
  /** The cap on a success answer's body (default `BODY_LIMITS.apiAnswer`: 64 MiB). @format bytes */
  maxAnswerBytes?: number;
  userAgent?: string;
  /** Told about every call (metrics, logs); its errors never affect the call. */
  observer?: ApiObserver;
}

export type QueryValue = string | number | boolean | undefined | readonly (string | number)[];

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';
  /** A path below the base URL (`/orgs/x`) or an absolute URL on the same origin (pagination links). */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sends `If-None-Match`; a 304 answer comes back as `notModified: true` instead of failing. */
  ifNoneMatch?: string;
  /**
   * `follow` (default) follows redirects within the API's origin (one to another origin fails `ForeignOriginRefusedError`);
   * `manual` returns the 3xx.
   */
  redirect?: 'follow' | 'manual';
}

export interface ApiResponse<T> {
  status: number;
  headers: Record<string, string>;
  body: T;
  url: string;
  notModified: boolean;
  /** `Location` of a 3xx when `redirect: 'manual'`, resolved to an absolute URL. */
  location?: string;
}

/**
 * Without an API's own parser, an error body's top-level `message` string (if any) is the message; the API
 * modules (`github.ts`, `google.ts`) bring their error models.
 */
export const parseMessageBody: ErrorBodyParser = (body) => {
  const message = body && typeof body === 'object' ? (body as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? { message } : {};
};

export function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Parses an RFC 8288 `Link` header into `{ rel: url }`. */
export function parseLinkHeader(value: string | undefined): Record<string, string> {
  const links: Record<string, string> = {};
  if (!value) return links;
  for (const part of value.split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?([^";]+)"?/.exec(part.trim());
    if (m) for (const rel of m[2].split(/\s+/)) links[rel] = m[1];
  }
  return links;
}


export class ApiClient {
  readonly baseUrl: URL;
  readonly origin: string;
  private readonly opts: ApiClientOptions;
  private readonly policy: RetryPolicy;
  private readonly gate: RateLimitGate;
  private readonly clock: Clock;

  constructor(opts: ApiClientOptions) {
    this.opts = opts;
    const base = opts.baseUrl.endsWith('/') ? opts.baseUrl.slice(0, -1) : opts.baseUrl;
    this.baseUrl = new URL(base);
    this.origin = this.baseUrl.origin;
    this.policy = opts.policy ?? githubRetryPolicy;
    this.clock = opts.clock ?? Date.now;
    this.gate = opts.gate ?? new RateLimitGate(this.clock);
  }

  private jitter(): number {
    const max = this.opts.retryJitterMs ?? 0;
    return max > 0 ? Math.round((this.opts.random ?? Math.random)() * max) : 0;
  }

  get dispatcher(): Dispatcher {
    return this.opts.dispatcher ?? sharedDispatcher();
  }

  /** Absolute URL for a path below the base URL (keeps a base path such as `/api/v3`). */
  url(path: string, query?: Record<string, QueryValue>): URL {
    const url = /^https?:\/\//.test(path) ? new URL(path) : new URL(this.baseUrl.href.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`));
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, String(v));
      else url.searchParams.set(key, String(value));
    }
    return url;
  }

  /** Refuses, retryable with the wait left, while the rate-limit gate of this API is closed. */
  private refuseWhileGateClosed(method: string, url: URL, call: CallDescription): void {
    const closedForMs = this.gate.remainingMs(this.origin);
    if (closedForMs > 0) throw this.notSent(method, url, call, closedForMs);
  }

  /** How long this process already knows a request of `kind` may not go out: its own gate, and its budget's word. */
  private closedForMs(kind: RequestKind): number {
    return Math.max(this.gate.remainingMs(this.origin), this.opts.budget?.closedForMs?.(kind) ?? 0);
  }

  /** The retryable failure of a request kept back for a known wait of `closedForMs`. */
  private notSent(method: string, url: URL, call: CallDescription, closedForMs: number): ApplicationFailure {
    this.observe({ kind: 'not-sent', method, path: this.pathOf(url), waitMs: closedForMs });
    return failureFromDecision(
      { kind: 'retry', type: FailureType.PrimaryRateLimit, delayMs: closedForMs + this.jitter(), message: `not sent: API is rate limited for another ${Math.ceil(closedForMs / 1000)} s` },
      call,
    );
  }

  /**
   * Sends one request and returns the parsed response, or throws a typed `ApplicationFailure`.
   * Sends nothing while a wait is known for this API: checked before the permit is asked for, and again as undici
   * writes the request (`send-check.ts`).
   */
  async request<T = unknown>(req: ApiRequest): Promise<ApiResponse<T>> {
    const url = this.url(req.path, req.query);
    if (url.origin !== this.origin) {
      this.refuseByPolicy(req.method, url);
      throw ApplicationFailure.nonRetryable(`refusing to send API credentials to ${url.origin} (API is ${this.origin})`, FailureType.ForeignOrigin);
    }
    const call = { method: req.method, url: `${url.origin}${url.pathname}` };
    const attempt = this.opts.attempt?.() ?? 1;

    this.refuseWhileGateClosed(req.method, url, call);

    // The token first: a mutation's permit is a time slot, and nothing slow (a GitHub App's token exchange)
    // may lie between the slot and the request reaching the API.
    const token = await this.opts.token();
    const kind = (this.opts.requestKind ?? githubRequestKind)(req.method, url.pathname);
    const ticket = await this.opts.budget?.acquire(kind, call);
    try {
      // Again: an answer to another request of this process may have closed the gate while this one waited for
      // its token or its permit (seen at load 20: a DELETE sent 11 ms after the answer that closed it), and once
      // more as undici writes it, for the time it spends in undici's queue (seen in CI: a GET 96 ms after).
      this.refuseWhileGateClosed(req.method, url, call);
      return await this.send<T>(req, url, call, attempt, ticket, token, kind);
    } finally {
      // Without an answer from the API (network failure, a redirect elsewhere) the permit's slot is freed all the same.
      ticket?.done();
    }
  }

  private async send<T>(
    req: ApiRequest,
    url: URL,
    call: { method: string; url: string },
    attempt: number,
    ticket: BudgetTicket | undefined,
    token: string | undefined,
    kind: RequestKind,
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = {
      'user-agent': this.opts.userAgent ?? 'longhaul/0.1',
      ...(this.opts.defaultHeaders ?? {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(req.ifNoneMatch ? { 'if-none-match': req.ifNoneMatch } : {}),
      ...(req.headers ?? {}),
    };
    let bodyText: string | undefined;
    if (req.body !== undefined) {
      bodyText = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }

    let method: string = req.method;
    for (let hop = 0; ; hop++) {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          method: method as Dispatcher.HttpMethod,
          headers,
          body: bodyText,
          // Checked once more as undici writes it, and reported admitted then (each hop of a redirect is a request).
          dispatcher: checkedAtSend(
            this.dispatcher,
            () => this.closedForMs(kind),
            () => this.observe({ kind: 'admitted', method, path: this.pathOf(url) }),
          ),
          headersTimeout: this.opts.timeoutMs ?? 30_000,
          bodyTimeout: this.opts.timeoutMs ?? 30_000,
        });
      } catch (err) {
        if (err instanceof ClosedAtSend) throw this.notSent(method, url, call, err.waitMs);
        const decision = decideNetworkRetry(`${(err as Error).message ?? String(err)}`, { nowMs: this.clock(), attempt }, this.policy);
        this.observe({ kind: 'network-failure', method, path: this.pathOf(url), decision, attempt });
        if (decision.kind === 'success') throw err;
        throw failureFromDecision(decision, call);
      }
      const resHeaders = flattenHeaders(res.headers);
      const location = resHeaders.location ? new URL(resHeaders.location, url).href : undefined;

      if (isRedirect(res.statusCode) && location) {
        if (req.redirect === 'manual') {
          await res.body.dump();
          return { status: res.statusCode, headers: resHeaders, body: undefined as T, url: url.href, notModified: false, location };
        }
        await res.body.dump();
        if (hop >= MAX_REDIRECTS) {
          throw ApplicationFailure.nonRetryable(`too many redirects from ${call.url} (more than ${MAX_REDIRECTS})`, FailureType.TooManyRedirects);
        }
        const next = new URL(location);
        // An answer from another origin is not the API's (and would be taken for it): a download that is
        // redirected to storage asks for `manual` and checks the target itself.
        if (next.origin !== this.origin) {
          this.refuseByPolicy(call.method, next);
          throw ApplicationFailure.nonRetryable(
            `${call.method} ${call.url} → ${res.statusCode}: redirects to ${next.origin}, another origin than the API's; not followed`,
            FailureType.ForeignOrigin,
            { method: call.method, url: call.url, status: res.statusCode },
          );
        }
        const nextMethod = methodAfterRedirect(res.statusCode, method);
        if (nextMethod !== method) {
          method = nextMethod;
          bodyText = undefined;
        }
        url = next;
        continue;
      }

      const text = await this.readAnswer(res, call, attempt);
      const body = parseJson(text);
      const facts: ResponseFacts = {
        status: res.statusCode,
        headers: resHeaders,
        ...(res.statusCode >= 400 ? (this.opts.parseErrorBody ?? parseMessageBody)(body) : {}),
      };
      if (res.statusCode >= 400 && !facts.message && text) facts.message = text.slice(0, 500);

      const nowMs = this.clock();
      if (res.statusCode === 304 && req.ifNoneMatch) {
        // GitHub does not count a 304 to a conditional request against the limit.
        ticket?.done({ at: nowMs, notCounted: true });
        this.observe({ kind: 'answer', method, path: this.pathOf(url), status: 304, decision: { kind: 'success' }, attempt });
        return { status: 304, headers: resHeaders, body: undefined as T, url: url.href, notModified: true };
      }
      const decision = decideRetry(facts, { nowMs, attempt }, this.policy);
      if (ticket && url.origin === this.origin) ticket.done(outcomeOf(facts, decision, nowMs, this.policy, this.opts.spammedWaitMs ?? 60_000));
      const spentUntil = decision.kind === 'success' && url.origin === this.origin ? blockedUntilFromHeaders(facts, nowMs, this.policy) : undefined;
      const closesUntil = decision.kind === 'retry' && url.origin === this.origin ? decision.blockedUntilMs : spentUntil;
      this.observe({ kind: 'answer', method, path: this.pathOf(url), status: res.statusCode, decision, attempt, gateClosedUntilMs: closesUntil });
      if (decision.kind === 'success') {
        if (spentUntil !== undefined) this.gate.block(this.origin, spentUntil);
        // Parse, don't trust: an API success body that is not JSON (an HTML page, a truncated answer) is no answer.
        const problem = url.origin === this.origin ? answerProblem(resHeaders['content-type'], text, body) : undefined;
        if (problem) throw malformedAnswerFailure(call, `${res.statusCode}: ${problem}`, attempt);
        return { status: res.statusCode, headers: resHeaders, body: body as T, url: url.href, notModified: false, location };
      }
      if (decision.kind === 'retry' && decision.blockedUntilMs !== undefined && url.origin === this.origin) {
        this.gate.block(this.origin, decision.blockedUntilMs);
        throw failureFromDecision({ ...decision, delayMs: decision.delayMs + this.jitter() }, call);
      }
      throw failureFromDecision(decision, call);
    }
  }

  /**
   * The answer's body, read up to its cap (`BODY_LIMITS`). An error answer is read for its message only: its first
   * `apiErrorAnswer` bytes. A success answer past `maxAnswerBytes` is not the API's answer (a proxy's endless page,
   * a broken stream): a `MalformedAnswer` naming the cap, judged as an outage like any malformed answer, since the
   * cap is far above any answer the API documents and retrying after the fault clears is what helps.
   */
  private async readAnswer(res: Dispatcher.ResponseData, call: { method: string; url: string }, attempt: number): Promise<string> {
    if (res.statusCode >= 400) return (await readCappedText(res.body, 'apiErrorAnswer', { truncate: true })).text;
    try {
      return (await readCappedText(res.body, { name: 'an API answer', bytes: this.opts.maxAnswerBytes ?? BODY_LIMITS.apiAnswer.bytes })).text;
    } catch (err) {
      if (!(err instanceof BodyTooLarge)) throw err;
      throw malformedAnswerFailure(call, `${res.statusCode}: ${err.message}`, attempt, { capBytes: err.capBytes, bytesRead: err.bytesRead });
    }
  }

  /**
   * Another origin than the API's is never asked (credentials are attached), whatever it is; an address the
   * outbound policy refuses outright (`0.0.0.0`, link-local, …) is named as such (`OutboundAddressRefused`), so the
   * failure says what the answer pointed at. Decided on the URL alone: nothing is resolved or sent.
   */
  private refuseByPolicy(method: string, url: URL): void {
    const apiHost = bareHost(this.baseUrl.hostname);
    const ctx: OutboundContext = { api: { protocol: this.baseUrl.protocol, addresses: isIP(apiHost) ? [apiHost] : [] }, allowedHosts: [] };
    const decision = decideOutbound({ protocol: url.protocol, host: url.hostname }, ctx);
    if (!decision.allowed) throw outboundFailure(new OutboundRefused(decision.rule, shownUrl(url), undefined, decision.reason), method);
  }

  /** The path below the base URL (what route templates are made of); another origin is not one of our routes. */
  private pathOf(url: URL): string {
    if (url.origin !== this.origin) return '(other origin)';
    const base = this.baseUrl.pathname.replace(/\/+$/, '');
    return base && url.pathname.startsWith(`${base}/`) ? url.pathname.slice(base.length) : url.pathname;
  }

  private observe(observation: ApiObservation): void {
    observeSafely(this.opts.observer, observation);
  }

  /**
   * Follows `Link: rel="next"` from `path`, yielding each page's items. Stops after `maxPages`.
   * Links must stay on the API origin (credentials are attached).
   */
  async *paginate<T>(path: string, query?: Record<string, QueryValue>, maxPages = 100): AsyncGenerator<{ items: T[]; response: ApiResponse<T[]> }> {
    let next: string | undefined = this.url(path, query).href;
    for (let page = 0; next && page < maxPages; page++) {
      const response: ApiResponse<T[]> = await this.request<T[]>({ method: 'GET', path: next });
      yield { items: Array.isArray(response.body) ? response.body : [], response };
      next = parseLinkHeader(response.headers.link).next;
    }
  }
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
