/**
 * Fault injection by configuration: answer a matching request with a 5xx, reset the connection, or
 * delay it, before the request is processed or (`afterProcessing`) after it. Rules are deterministic
 * (`times`, `every`) unless `probability` is given.
 */
export interface FaultRule {
  /** HTTP method to match; any when omitted. */
  method?: string;
  /** Matches the route pattern (`/orgs/:org/migrations/:id`) or the concrete path; a string is a substring test. */
  path?: string | RegExp;
  kind: 'status' | 'reset' | 'slow';
  /** For `status`: the status to answer (500, 502, 503…). */
  status?: number;
  /** For `status`: answer with an HTML error page (`text/html`), as proxies and load balancers do, instead of the API's JSON. */
  html?: boolean;
  /** For `status`: a `retry-after` header value in seconds. */
  retryAfterSeconds?: number;
  /** For `status` on Google services: a `RetryInfo.retryDelay` (seconds) in the error body, Google's way of saying when to retry. */
  retryInfoSeconds?: number;
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
