/**
 * Fault injection by configuration: answer a matching request with a 5xx, reset the connection, delay
 * it, redirect it (to another origin, say, or to itself in a loop), or answer with a malformed success (truncated JSON, a required field missing or saying what no
 * documentation names, an HTML page, a wrong content type — what captive proxies, truncating middleboxes and API changes produce), before the request
 * is processed or (`afterProcessing`) after it. Rules are deterministic (`times`, `every`) unless
 * `probability` is given.
 */

/** The malformed-answer kinds: the status is a success, the body is not what the API documents. */
export const MALFORMED_KINDS = ['truncated-json', 'missing-field', 'field-value', 'html-page', 'content-type'] as const;
export type MalformedKind = (typeof MALFORMED_KINDS)[number];

export interface FaultRule {
  /** HTTP method to match; any when omitted. */
  method?: string;
  /** Matches the route pattern (`/orgs/:org/migrations/:id`) or the concrete path; a string is a substring test. */
  path?: string | RegExp;
  kind: 'status' | 'reset' | 'slow' | 'redirect' | 'link' | MalformedKind;
  /**
   * For `status`: the status to answer (500, 502, 503…). For the malformed kinds: the success status to
   * answer (default: the handler's own after processing, 200 before).
   */
  status?: number;
  /**
   * For `redirect`: the `Location` answered (absolute, e.g. another origin, or relative to the request: the
   * request's own path makes a loop). The status is `status`, default 302.
   */
  location?: string;
  /**
   * For `link`: the `Link: <link>; rel="next"` added to the handler's own answer (always after processing), a next
   * page wherever the test wants one.
   */
  link?: string;
  /** For `status`: answer with an HTML error page (`text/html`), as proxies and load balancers do, instead of the API's JSON. */
  html?: boolean;
  /** For `status`: a `retry-after` header value in seconds. */
  retryAfterSeconds?: number;
  /** For `status` on Google services: a `RetryInfo.retryDelay` (seconds) in the error body, Google's way of saying when to retry. */
  retryInfoSeconds?: number;
  /** For `missing-field`: the top-level field removed from the answer (default `id`); for `field-value`: the one replaced. */
  field?: string;
  /** For `field-value`: what the top-level `field` says instead (e.g. a state no documentation names, any length or characters). */
  value?: unknown;
  /** For `content-type`: the content type sent with the (otherwise correct) JSON body (default `text/plain`). */
  contentType?: string;
  /** For `slow`: how long to hold the request (before handling it, or before answering with `afterProcessing`). @format milliseconds */
  delayMs?: number;
  /**
   * Apply the fault after the request was processed: the server acted (a migration was created), but the
   * answer is lost (`reset`), replaced (`status`) or late (`slow`), so the caller cannot know the outcome.
   */
  afterProcessing?: boolean;
  /** Fire at most this many times (then the rule is spent). */
  times?: number;
  /** Fire on every Nth matching request. */
  every?: number;
  /** Fire with this probability (0..1). */
  probability?: number;
  /** Only from this time on (emulator clock, epoch ms): with `activeUntilMs`, an outage window. */
  activeFromMs?: number;
  /** Only before this time (emulator clock, epoch ms). */
  activeUntilMs?: number;
}

export interface FaultState {
  rule: FaultRule;
  seen: number;
  fired: number;
}

export function pickFault(
  states: FaultState[],
  method: string,
  pattern: string,
  path: string,
  random: () => number = Math.random,
  nowMs: number = Date.now(),
): FaultRule | undefined {
  for (const state of states) {
    const { rule } = state;
    if ((rule.activeFromMs !== undefined && nowMs < rule.activeFromMs) || (rule.activeUntilMs !== undefined && nowMs >= rule.activeUntilMs)) continue;
    if (rule.method && rule.method.toUpperCase() !== method) continue;
    if (rule.path !== undefined) {
      const matches =
        typeof rule.path === 'string' ? pattern.includes(rule.path) || path.includes(rule.path) : rule.path.test(pattern) || rule.path.test(path);
      if (!matches) continue;
    }
    state.seen++;
    if (rule.times !== undefined && state.fired >= rule.times) continue;
    if (rule.every !== undefined && state.seen % rule.every !== 0) continue;
    if (rule.probability !== undefined && random() >= rule.probability) continue;
    state.fired++;
    return rule;
  }
  return undefined;
}

/**
 * The malformed answer a rule produces. `body` is what the handler answered (after processing) or
 * `undefined` (before processing: nothing was done, so there is nothing to mangle but a stand-in body).
 */
export function malformedAnswer(rule: FaultRule & { kind: MalformedKind }, handled?: { status: number; body?: unknown }): { status: number; contentType: string; raw: Buffer } {
  const status = rule.status ?? handled?.status ?? 200;
  const body = handled?.body ?? { message: 'ok' };
  const json = JSON.stringify(body);
  switch (rule.kind) {
    case 'truncated-json':
      // Cut mid-document, as a connection a proxy closed early leaves it: never valid JSON.
      return { status, contentType: 'application/json; charset=utf-8', raw: Buffer.from(json.slice(0, Math.max(1, Math.floor(json.length / 2)))) };
    case 'missing-field': {
      const copy = objectCopy(body);
      delete copy[rule.field ?? 'id'];
      return { status, contentType: 'application/json; charset=utf-8', raw: Buffer.from(JSON.stringify(copy)) };
    }
    case 'field-value': {
      const copy = objectCopy(body);
      copy[rule.field ?? 'id'] = rule.value;
      return { status, contentType: 'application/json; charset=utf-8', raw: Buffer.from(JSON.stringify(copy)) };
    }
    case 'html-page':
      return { status, contentType: 'text/html; charset=utf-8', raw: Buffer.from('<!DOCTYPE html><html><head><title>Sign in to continue</title></head><body><h1>Network login required</h1></body></html>') };
    case 'content-type':
      return { status, contentType: rule.contentType ?? 'text/plain; charset=utf-8', raw: Buffer.from(json) };
  }
}

/** A shallow copy of an answer's top-level object (an empty one for anything else). */
function objectCopy(body: unknown): Record<string, unknown> {
  return body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
}

export function isMalformedRule(rule: FaultRule): rule is FaultRule & { kind: MalformedKind } {
  return (MALFORMED_KINDS as readonly string[]).includes(rule.kind);
}
