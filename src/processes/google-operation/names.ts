/**
 * This process's names: the `LonghaulProcess` values its workflows set (see src/common/processes.ts for all a
 * name is). Running workflows carry them and dashboards select on them, so a name here never changes.
 * Deterministic: its workflows import this.
 */
export const Process = {
  ApiKeyDelete: 'apikey-delete',
  LogBucketCreate: 'log-bucket-create',
  LogBucketUpdate: 'log-bucket-update',
  DnsChange: 'dns-change',
} as const;

/**
 * The `process` label of the polls that both log-bucket processes make through one poll activity
 * (`longhaul_polls_total{process="log-bucket"}`): a metric label, not a process of its own.
 */
export const LOG_BUCKET_POLLS = 'log-bucket';
