/**
 * The worker process's telemetry, installed once before any connection: Temporal's Prometheus exporter (the
 * SDK's own worker metrics plus longhaul's `longhaul_…` metrics, see `metrics.ts`, the release in
 * `longhaul_build_info`) and the log format of every line the worker, its activities and its workflows write.
 *
 *   LONGHAUL_METRICS_ADDRESS   host:port of GET /metrics (default 127.0.0.1:9464; `off` disables it)
 *   LONGHAUL_LOG_FORMAT        `text` (default) or `json` (one JSON object per line, for log pipelines)
 *   LONGHAUL_LOG_LEVEL         TRACE, DEBUG, INFO (default), WARN or ERROR
 */
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';
import { recordBuildInfo } from './metrics';
import { setting } from '../settings';

export const DEFAULT_METRICS_ADDRESS = '127.0.0.1:9464';
const LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

export class TelemetryConfigError extends Error {
  override readonly name = 'TelemetryConfigError';
}

export interface TelemetrySettings {
  /** `host:port`, or undefined when metrics are off. */
  metricsAddress?: string;
  logFormat: 'text' | 'json';
  logLevel: LogLevel;
}

export function telemetrySettings(env: NodeJS.ProcessEnv = process.env, defaults: Partial<TelemetrySettings> = {}): TelemetrySettings {
  const address = setting('LONGHAUL_METRICS_ADDRESS', env) ?? defaults.metricsAddress ?? DEFAULT_METRICS_ADDRESS;
  if (address !== 'off' && !/^[^:\s]+:\d{1,5}$/.test(address) && !/^\[[0-9a-f:]+\]:\d{1,5}$/i.test(address)) {
    throw new TelemetryConfigError(`LONGHAUL_METRICS_ADDRESS must be host:port or "off", got ${JSON.stringify(address)}`);
  }
  const format = setting('LONGHAUL_LOG_FORMAT', env) ?? defaults.logFormat ?? 'text';
  if (format !== 'text' && format !== 'json') throw new TelemetryConfigError(`LONGHAUL_LOG_FORMAT must be "text" or "json", got ${JSON.stringify(format)}`);
  const level = (setting('LONGHAUL_LOG_LEVEL', env) ?? defaults.logLevel ?? 'INFO').toUpperCase() as LogLevel;
  if (!LEVELS.includes(level)) throw new TelemetryConfigError(`LONGHAUL_LOG_LEVEL must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(setting('LONGHAUL_LOG_LEVEL', env))}`);
  return { metricsAddress: address === 'off' ? undefined : address, logFormat: format, logLevel: level };
}

/** One log line: `json` for pipelines, otherwise the SDK's readable format. Written to stderr, never stdout. */
export function formatLogEntry(entry: LogEntry, format: 'text' | 'json'): string {
  const at = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  if (format === 'json') {
    return JSON.stringify({ time: at, level: entry.level.toLowerCase(), msg: entry.message, ...entry.meta }, (_k, v: unknown) =>
      typeof v === 'bigint' ? v.toString() : v instanceof Error ? { name: v.name, message: v.message } : v,
    );
  }
  const meta = entry.meta && Object.keys(entry.meta).length > 0 ? ` ${JSON.stringify(entry.meta, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}` : '';
  return `${at} [${entry.level}] ${entry.message}${meta}`;
}

/**
 * Installs the runtime (once per process). Returns the metrics URL when the exporter runs. A metrics port
 * already taken (a second worker on the same host with the default address) costs the metrics, not the worker.
 *
 * The port is claimed by binding, not by probing first: two workers started in the same instant would both find
 * it free, and the loser's exporter would fail. The SDK binds the exporter synchronously inside
 * `Runtime.install`, and a failed install leaves no runtime behind, so the second install, without metrics,
 * is a clean one.
 */
export function installTelemetry(settings: TelemetrySettings): string | undefined {
  const logger = new DefaultLogger(settings.logLevel, (entry) => {
    process.stderr.write(`${formatLogEntry(entry, settings.logFormat)}\n`);
  });
  if (settings.metricsAddress) {
    try {
      Runtime.install({ logger, telemetryOptions: { metrics: { prometheus: { bindAddress: settings.metricsAddress } } } });
      recordBuildInfo(Runtime.instance().metricMeter);
      return `http://${settings.metricsAddress}/metrics`;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (!/metrics exporter/i.test(reason)) throw err;
      process.stderr.write(
        `warning: this process serves no metrics: ${settings.metricsAddress} could not be bound (${reason}); set LONGHAUL_METRICS_ADDRESS to a free host:port\n`,
      );
    }
  }
  Runtime.install({ logger });
  return undefined;
}
