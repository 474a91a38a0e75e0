/**
 * Reading workflow histories in tests: fetch one, count its events, find its largest payload, and follow a
 * continue-as-new chain run by run.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

export type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export async function fetchHistory(client: Client, workflowId: string, runId?: string): Promise<History> {
  return client.workflow.getHandle(workflowId, runId).fetchHistory();
}

export async function countEvents(client: Client, workflowId: string, runId?: string): Promise<number> {
  return (await fetchHistory(client, workflowId, runId)).events?.length ?? 0;
}

function eventTypeName(event: HistoryEvent): string {
  // The proto field is set on every event; its attributes field names the type in camelCase.
  const attributes = Object.keys(event).find((key) => key.endsWith('EventAttributes') && (event as Record<string, unknown>)[key] != null);
  return attributes ? attributes.replace(/EventAttributes$/, '') : String(event.eventType);
}

export interface LargestPayload {
  bytes: number;
  eventId: number;
  eventType: string;
}

function isPayload(value: unknown): value is { data?: Uint8Array | null; metadata?: Record<string, Uint8Array> | null } {
  return typeof value === 'object' && value !== null && 'data' in value && 'metadata' in value && (value as { data: unknown }).data instanceof Uint8Array;
}

/** Sizes of every payload in the value (data plus metadata bytes, as the server counts them). */
function payloadSizes(value: unknown, out: number[], depth = 0): void {
  if (depth > 12 || typeof value !== 'object' || value === null || value instanceof Uint8Array) return;
  if (isPayload(value)) {
    const metadataBytes = Object.entries(value.metadata ?? {}).reduce((sum, [k, v]) => sum + k.length + (v?.length ?? 0), 0);
    out.push((value.data?.length ?? 0) + metadataBytes);
    return;
  }
  for (const child of Object.values(value)) payloadSizes(child, out, depth + 1);
}

/** The largest single payload (activity input or result, workflow input, signal/update argument…) in a history. */
export function largestPayload(history: History): LargestPayload | undefined {
  let largest: LargestPayload | undefined;
  for (const event of history.events ?? []) {
    const sizes: number[] = [];
    payloadSizes(event, sizes);
    for (const bytes of sizes) {
      if (!largest || bytes > largest.bytes) largest = { bytes, eventId: Number(event.eventId), eventType: eventTypeName(event) };
    }
  }
  return largest;
}

export interface RunOfChain {
  runId: string;
  events: number;
  /** How the run ended, e.g. `workflowExecutionContinuedAsNew`, `workflowExecutionFailed`; undefined while running. */
  closedBy?: string;
}

const CLOSING = [
  'workflowExecutionCompleted',
  'workflowExecutionFailed',
  'workflowExecutionTimedOut',
  'workflowExecutionCanceled',
  'workflowExecutionTerminated',
  'workflowExecutionContinuedAsNew',
];

/**
 * Every run of a workflow id, oldest first: from the latest run back through each run's
 * `continuedExecutionRunId` (the run it continued from). Histories are not kept (a day-long chain has dozens).
 */
export async function followContinueAsNew(client: Client, workflowId: string): Promise<RunOfChain[]> {
  const runs: RunOfChain[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history = await fetchHistory(client, workflowId, runId);
    const events = history.events ?? [];
    const last = events.at(-1);
    const lastType = last ? eventTypeName(last) : undefined;
    runs.unshift({ runId, events: events.length, closedBy: lastType && CLOSING.includes(lastType) ? lastType : undefined });
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs;
}
