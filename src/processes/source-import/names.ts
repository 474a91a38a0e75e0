/**
 * This process's names: the `LonghaulProcess` values its workflows set (see src/common/processes.ts for all a
 * name is). Running workflows carry them and dashboards select on them, so a name here never changes.
 * Deterministic: its workflows import this.
 */
export const Process = {
  SourceImport: 'source-import',
} as const;
