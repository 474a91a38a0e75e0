/**
 * History sizes across a server: the largest event count of any single workflow run, for the test suite's
 * closing report and the benchmarks. Temporal terminates a run at 51,200 events; longhaul keeps every run under
 * 10,000 (continue-as-new), and this is how that is checked on real runs.
 */
import type { Client, WorkflowExecutionStatusName, WorkflowExecutionInfo } from '@temporalio/client';
import { memoTolerant } from './tolerant-client';

/** longhaul's own bound on the events of one run. */
export const EVENT_CAP_PER_RUN = 10_000;

export interface RunHistorySize {
  namespace: string;
  workflowId: string;
  runId: string;
  workflowType: string;
  status: WorkflowExecutionStatusName;
  historyLength: number;
}

export interface HistorySizeReport {
  /** Runs looked at. */
  runs: number;
  largest?: RunHistorySize;
  /** Runs over {@link EVENT_CAP_PER_RUN}, largest first. */
  overLimit: RunHistorySize[];
}

/** User namespaces of the server (the system namespace runs the server's own workflows). */
export async function userNamespaces(client: Client): Promise<string[]> {
  const names: string[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listNamespaces({ pageSize: 100, nextPageToken });
    for (const ns of page.namespaces ?? []) {
      const name = ns.namespaceInfo?.name;
      if (name && name !== 'temporal-system') names.push(name);
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return names;
}

/**
 * The event count of a listed run. Visibility records the length when a run closes; for a run still going,
 * describe gives the current one.
 */
async function historyLengthOf(client: Client, info: WorkflowExecutionInfo): Promise<number> {
  if (info.status.name !== 'RUNNING' && info.historyLength > 0) return info.historyLength;
  const described = await client.workflow.getHandle(info.workflowId, info.runId).describe();
  return described.historyLength;
}

/**
 * Lists every run (all user namespaces, or those given; optionally narrowed by a visibility `query`) and returns
 * the largest history and the runs over the bound.
 */
export async function historySizeReport(client: Client, opts: { namespaces?: string[]; query?: string } = {}): Promise<HistorySizeReport> {
  const namespaces = opts.namespaces ?? (await userNamespaces(client));
  const report: HistorySizeReport = { runs: 0, overLimit: [] };
  for (const namespace of namespaces) {
    // Memos are decoded on the way, and one this client cannot decrypt must not end the report.
    const nsClient = memoTolerant(client, namespace);
    for await (const info of nsClient.workflow.list({ query: opts.query })) {
      const size: RunHistorySize = {
        namespace,
        workflowId: info.workflowId,
        runId: info.runId,
        workflowType: info.type,
        status: info.status.name,
        historyLength: await historyLengthOf(nsClient, info),
      };
      report.runs++;
      if (!report.largest || size.historyLength > report.largest.historyLength) report.largest = size;
      if (size.historyLength > EVENT_CAP_PER_RUN) report.overLimit.push(size);
    }
  }
  report.overLimit.sort((a, b) => b.historyLength - a.historyLength);
  return report;
}

/** One line for logs: `largest history: 1234 events (orgMigration migrate-…, 812 runs looked at)`. */
export function describeHistorySizes(report: HistorySizeReport): string {
  if (!report.largest) return 'largest history: no workflow runs';
  const { largest } = report;
  const where = `${largest.workflowType} ${largest.workflowId}${largest.namespace === 'default' ? '' : ` in ${largest.namespace}`}`;
  let line = `largest history: ${largest.historyLength} events (${where}; ${report.runs} runs looked at)`;
  if (report.overLimit.length > 0) {
    const list = report.overLimit
      .slice(0, 10)
      .map((r) => `${r.workflowType} ${r.workflowId} run ${r.runId}: ${r.historyLength}`)
      .join('; ');
    line += `\nOVER ${EVENT_CAP_PER_RUN} EVENTS in ${report.overLimit.length} run(s): ${list}`;
  }
  return line;
}
