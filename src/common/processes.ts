/**
 * Every process longhaul runs, each by its one name. The name is the `LonghaulProcess` search attribute's value
 * (what `longhaul list --process` and the Web UI filter on), the `process` label of the worker's metrics, the
 * prefix of the workflow ids named after it (`rate-governor:<credential>`, `feed-cursor:<feed>`,
 * `dns-change-<zone>-<time>`…; a migration's `migrate-…` and an import's `import-…` ids keep their own prefixes)
 * and, where a command starts the process directly, the CLI command. Running workflows carry these values and
 * dashboards select on them, so a name here never changes. Deterministic: workflows import this.
 */
import { LonghaulProcess } from './search-attributes';

export const Process = {
  OrgMigration: 'org-migration',
  SourceImport: 'source-import',
  ApiKeyDelete: 'apikey-delete',
  LogBucketCreate: 'log-bucket-create',
  LogBucketUpdate: 'log-bucket-update',
  DnsChange: 'dns-change',
  FeedPoll: 'feed-poll',
  FeedCursor: 'feed-cursor',
  HookRepair: 'hook-repair',
  HookPing: 'hook-ping',
  RateGovernor: 'rate-governor',
  Backup: 'backup',
} as const;

export type ProcessName = (typeof Process)[keyof typeof Process];

/** Every process name, in the registry's order (the `list --process` choices). */
export const PROCESS_NAMES: readonly ProcessName[] = Object.values(Process);

/**
 * The `process` label of the polls that both log-bucket processes make through one poll activity
 * (`longhaul_polls_total{process="log-bucket"}`): a metric label, not a process of its own.
 */
export const LOG_BUCKET_POLLS = 'log-bucket';

/** The `process` label of the worker's process metrics. */
export type MetricProcess = ProcessName | typeof LOG_BUCKET_POLLS;

/** The visibility query clause of one process's workflows: `LonghaulProcess = 'source-import'`. */
export function processClause(process: ProcessName): string {
  return `${LonghaulProcess.name} = '${process}'`;
}
