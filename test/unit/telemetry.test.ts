import { describe, expect, it } from 'vitest';
import type { LogEntry } from '@temporalio/worker';
import { DEFAULT_METRICS_ADDRESS, formatLogEntry, telemetrySettings, TelemetryConfigError } from '../../src/telemetry/runtime';

const entry = (meta?: Record<string, unknown>): LogEntry => ({
  level: 'WARN',
  message: 'rate limited: waiting',
  timestampNanos: 1_795_000_000_000n * 1_000_000n,
  meta,
});

describe('worker telemetry settings', () => {
  it('serves metrics on loopback by default, and "off" turns them off', () => {
    expect(telemetrySettings({})).toEqual({ metricsAddress: DEFAULT_METRICS_ADDRESS, logFormat: 'text', logLevel: 'INFO' });
    expect(telemetrySettings({ LONGHAUL_METRICS_ADDRESS: 'off' }).metricsAddress).toBeUndefined();
    expect(telemetrySettings({ LONGHAUL_METRICS_ADDRESS: '0.0.0.0:9100', LONGHAUL_LOG_FORMAT: 'json', LONGHAUL_LOG_LEVEL: 'debug' })).toEqual({
      metricsAddress: '0.0.0.0:9100',
      logFormat: 'json',
      logLevel: 'DEBUG',
    });
  });

  it.each([
    [{ LONGHAUL_METRICS_ADDRESS: '9464' }, /host:port or "off"/],
    [{ LONGHAUL_LOG_FORMAT: 'xml' }, /"text" or "json"/],
    [{ LONGHAUL_LOG_LEVEL: 'loud' }, /one of TRACE, DEBUG, INFO, WARN, ERROR/],
  ])('refuses %o with a message naming the variable', (env, message) => {
    expect(() => telemetrySettings(env)).toThrow(TelemetryConfigError);
    expect(() => telemetrySettings(env)).toThrow(message);
  });
});

describe('log lines', () => {
  it('are one JSON object per line in json format, metadata included', () => {
    const line = formatLogEntry(entry({ workflowId: 'migrate-x', waitMs: 1200, attempt: 3n }), 'json');
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toEqual({ time: '2026-11-18T11:06:40.000Z', level: 'warn', msg: 'rate limited: waiting', workflowId: 'migrate-x', waitMs: 1200, attempt: '3' });
  });

  it('are readable text otherwise', () => {
    expect(formatLogEntry(entry({ waitMs: 5 }), 'text')).toBe('2026-11-18T11:06:40.000Z [WARN] rate limited: waiting {"waitMs":5}');
  });
});
