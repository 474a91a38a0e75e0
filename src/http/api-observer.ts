/**
 * The HTTP core's observer in the worker: counts every answer by api, templated route and status, the
 * answers that said "limited" and the time spent waiting on limits, keeps the gate gauge, and logs each
 * wait, retry decision and permanent failure as a structured line.
 */
import type { ApiObservation, ApiObserver } from './observer';
import { FailureType, type RetryDecision } from './retry-policy';
import { isSpammedAnswer } from './request-budget';
import { activityLog } from '../telemetry/log';
import { longhaulMetrics, type LonghaulMetrics } from '../telemetry/metrics';
import { routeTemplate } from '../telemetry/route-template';
import type { Clock } from '../common/clock';

/** Failure types that mean "the credential is limited", and their `kind` label. */
const LIMIT_KINDS: Readonly<Record<string, string>> = {
  [FailureType.PrimaryRateLimit]: 'primary',
  [FailureType.SecondaryRateLimit]: 'secondary',
  [FailureType.ResourceExhausted]: 'quota',
  [FailureType.RateLimitExhausted]: 'exhausted',
};

export function limitKind(decision: RetryDecision): string | undefined {
  if (decision.kind === 'success') return undefined;
  if (decision.kind === 'permanent' && isSpammedAnswer(decision.status, decision.message)) return 'spammed';
  return LIMIT_KINDS[decision.type];
}

export interface ApiObserverOptions {
  /** Where counts go; the runtime's meter by default (created on first use, inside the worker). */
  metrics?: () => LonghaulMetrics;
  clock?: Clock;
}

export function apiObserver(api: string, opts: ApiObserverOptions = {}): ApiObserver {
  const metrics = opts.metrics ?? longhaulMetrics;
  const clock = opts.clock ?? Date.now;
  let reopen: NodeJS.Timeout | undefined;

  /** The gauge is 1 until the gate's end, then 0 again (a timer, as nothing else happens at that moment). */
  const gateClosedUntil = (untilMs: number) => {
    const left = untilMs - clock();
    if (left <= 0) return;
    metrics().gateClosed.set(1, { api });
    if (reopen) clearTimeout(reopen);
    reopen = setTimeout(() => metrics().gateClosed.set(0, { api }), left);
    reopen.unref();
  };

  return {
    observe(o: ApiObservation): void {
      if (o.kind === 'admitted') return;
      const route = `${o.method} ${routeTemplate(o.path)}`;
      if (o.kind === 'not-sent') {
        metrics().limitWaitMs.add(Math.round(o.waitMs), { api });
        activityLog('info', 'rate-limit-wait', `${api} ${route}: not sent, rate limited for another ${Math.ceil(o.waitMs / 1000)} s`, { api, route, waitMs: Math.round(o.waitMs), reason: 'gate-closed' });
        return;
      }
      const status = o.kind === 'answer' ? String(o.status) : 'network-error';
      metrics().apiRequests.add(1, { api, route, status });
      if (o.kind === 'answer' && o.gateClosedUntilMs !== undefined) gateClosedUntil(o.gateClosedUntilMs);
      const d = o.decision;
      if (d.kind === 'success') return;
      const kind = limitKind(d);
      if (kind) metrics().limitedAnswers.add(1, { api, kind });
      const fields = { api, route, status: d.status, type: d.type, reason: d.reason, attempt: o.attempt };
      if (d.kind === 'permanent') {
        activityLog('error', 'permanent-failure', `${api} ${route} → ${d.status || status}: ${d.message}`, fields);
        return;
      }
      if (kind) metrics().limitWaitMs.add(Math.round(d.delayMs), { api });
      activityLog(kind ? 'warn' : 'info', kind ? 'rate-limit-wait' : 'retry', `${api} ${route} → ${d.status ?? status}: retry in ${Math.ceil(d.delayMs / 1000)} s (${d.message})`, {
        ...fields,
        waitMs: Math.round(d.delayMs),
      });
    },
  };
}
