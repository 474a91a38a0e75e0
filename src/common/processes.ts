/**
 * What a process's name is. Each process names itself in its folder (`src/processes/<name>/names.ts`, `Process`),
 * and its descriptor lists its names (`processNames`); `PROCESS_NAMES` (src/processes/index.ts) is all of them. The
 * name is the `LonghaulProcess` search attribute's value (what `longhaul list --process` and the Web UI filter on),
 * the `process` label of the worker's metrics, the prefix of the workflow ids named after it
 * (`rate-governor:<credential>`, `feed-cursor:<feed>`, `dns-change-<zone>-<time>`…; a migration's `migrate-…` and an
 * import's `import-…` ids keep their own prefixes) and, where a command starts the process directly, the CLI
 * command. Running workflows carry these values and dashboards select on them, so a name never changes (the replay
 * test holds every name a recorded run used). Deterministic: workflows import this.
 */
import { LonghaulProcess } from './search-attributes';

/** A process's name (a `LonghaulProcess` value). */
export type ProcessName = string;

/** The visibility query clause of one process's workflows: `LonghaulProcess = 'source-import'`. */
export function processClause(process: ProcessName): string {
  return `${LonghaulProcess.name} = '${process}'`;
}
