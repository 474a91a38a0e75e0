/**
 * Structured log lines from activity code. Inside an activity the SDK's activity logger is used, so each
 * line carries the workflow and activity ids and goes through the runtime's logger (JSON when
 * `LONGHAUL_LOG_FORMAT=json`). Outside an activity (CLI, unit tests) nothing is logged: there is no
 * process to attribute the line to, and the CLI keeps stderr for its own progress.
 *
 * Field names are stable (log pipelines filter on them): `event` always, then as they apply `api`,
 * `route`, `method`, `status`, `waitMs`, `reason`, `type`, `attempt`.
 */
import { currentActivity } from '../temporal/current-activity';

export type LogEvent =
  | 'rate-limit-wait'
  | 'governor-wait'
  | 'limit-learned'
  | 'retry'
  | 'permanent-failure'
  | 'sink-failure'
  | 'storage-ignores-range'
  | 'credential-reference-dropped';

export interface LogFields {
  [key: string]: string | number | boolean | undefined;
}

export function activityLog(level: 'info' | 'warn' | 'error', event: LogEvent, message: string, fields: LogFields = {}): void {
  const context = currentActivity();
  if (!context) return;
  const meta: Record<string, unknown> = { event };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) meta[key] = value;
  context.log[level](message, meta);
}
