/**
 * longhaul's own metrics, recorded through the Temporal runtime's metric meter so they are served by the same
 * Prometheus endpoint as the SDK's worker metrics. Every name starts with `longhaul_`.
 *
 * Only activities record: they are the worker's work, and inside one the runtime is certainly installed
 * (asking `Runtime.instance()` elsewhere, in the CLI or a unit test, would install a default runtime before
 * the process's own). Outside an activity, and in a runtime without a metrics exporter, recording is a no-op.
 */
import { currentActivity } from '../temporal/current-activity';
import { Runtime } from '@temporalio/worker';
import { noopMetricMeter, type MetricCounter, type MetricGauge, type MetricMeter } from '@temporalio/common';
import { deploymentVersionName, releaseVersion } from '../release';

export interface LonghaulMetrics {
  /** API requests answered, by `api` (github, google-logging…), `route` (method and pattern) and `status`. */
  apiRequests: MetricCounter;
  /** Answers that said "limited", by `api` and `kind` (primary, secondary, quota, spammed). */
  limitedAnswers: MetricCounter;
  /** Milliseconds requests were held back because a limit was known, by `api` (the meter's counters are integers). */
  limitWaitMs: MetricCounter;
  /** 1 while the rate-limit gate of an `api` is closed, else 0. */
  gateClosed: MetricGauge;
  /** Polls of a remote state, by `process`. */
  polls: MetricCounter;
  /** Lookups after a mutating call whose outcome was unknown (the exactly-once guard), by `process`. */
  sendLookups: MetricCounter;
  /** Archive bytes fetched from storage and written to disk. */
  downloadBytes: MetricCounter;
  /** Feed events delivered to a sink, by `sink` kind. */
  eventsDelivered: MetricCounter;
  /** Failed sink deliveries, by `sink` kind. */
  sinkFailures: MetricCounter;
}

let metrics: LonghaulMetrics | undefined;
let noop: LonghaulMetrics | undefined;

function inActivity(): boolean {
  return currentActivity() !== undefined;
}

export function longhaulMetrics(): LonghaulMetrics {
  if (metrics) return metrics;
  if (!inActivity()) return (noop ??= createMetrics(noopMetricMeter));
  metrics = createMetrics(Runtime.instance().metricMeter);
  return metrics;
}

function createMetrics(meter: MetricMeter): LonghaulMetrics {
  return {
    apiRequests: meter.createCounter('longhaul_api_requests_total', '1', 'API requests answered, by api, route and status'),
    limitedAnswers: meter.createCounter('longhaul_rate_limited_answers_total', '1', 'Answers that said the credential is rate limited, by api and kind'),
    limitWaitMs: meter.createCounter('longhaul_rate_limit_wait_milliseconds_total', 'ms', 'Milliseconds requests were held back by a known rate limit, by api'),
    gateClosed: meter.createGauge('longhaul_rate_limit_gate_closed', 'int', '1', '1 while the rate-limit gate of an api is closed'),
    polls: meter.createCounter('longhaul_polls_total', '1', 'Polls of a remote process state, by process'),
    sendLookups: meter.createCounter('longhaul_send_lookups_total', '1', 'Lookups after a mutating call whose outcome was unknown, by process'),
    downloadBytes: meter.createCounter('longhaul_download_bytes_total', 'By', 'Archive bytes fetched from storage and written to disk'),
    eventsDelivered: meter.createCounter('longhaul_feed_events_delivered_total', '1', 'Feed events delivered, by sink'),
    sinkFailures: meter.createCounter('longhaul_sink_failures_total', '1', 'Failed sink deliveries, by sink'),
  };
}

/** One poll of a remote process's state (`process`: its name, org-migration, source-import, feed-poll…, or `log-bucket`). */
export function countPoll(process: string): void {
  longhaulMetrics().polls.add(1, { process });
}

/** One lookup (each attempt) after a mutating call of `process` whose outcome was unknown. */
export function countSendLookup(process: string): void {
  longhaulMetrics().sendLookups.add(1, { process });
}

/**
 * `longhaul_build_info{version="0.2.0",deployment_version="longhaul.0.2.0"} 1`: which release the process runs,
 * the Prometheus way (one series, joined onto others by instance), so a dashboard shows a rollout's progress.
 * Recorded once, by the process that installed the runtime (`installTelemetry`).
 */
export function recordBuildInfo(meter: MetricMeter): void {
  meter
    .createGauge('longhaul_build_info', 'int', '1', 'The longhaul release this process runs (always 1), by version and deployment_version')
    .set(1, { version: releaseVersion(), deployment_version: deploymentVersionName() });
}
