/**
 * Reading workflow histories in tests: fetch one, count its events, measure its payloads (the largest; count and
 * total), read the waits it took (durable timers, retries a failure asked for), and follow a continue-as-new
 * chain run by run.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
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

/** How many events of each type a history has, by the name of the event's attributes (`workflowTaskCompleted`, `activityTaskScheduled`…). */
export function eventTypeCounts(history: History): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of history.events ?? []) {
    const name = eventTypeName(event);
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
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
function payloadSizes(value: unknown, out: number[] = [], depth = 0): number[] {
  if (depth > 12 || typeof value !== 'object' || value === null || value instanceof Uint8Array) return out;
  if (isPayload(value)) {
    const metadataBytes = Object.entries(value.metadata ?? {}).reduce((sum, [k, v]) => sum + k.length + (v?.length ?? 0), 0);
    out.push((value.data?.length ?? 0) + metadataBytes);
    return out;
  }
  for (const child of Object.values(value)) payloadSizes(child, out, depth + 1);
  return out;
}

/** Every payload of one run's history (the latest run when `runId` is omitted): count, largest, total. */
export async function historyPayloads(client: Client, workflowId: string, runId?: string): Promise<{ events: number; payloads: number; largest: number; total: number }> {
  const history = await fetchHistory(client, workflowId, runId);
  const sizes = payloadSizes(history.events ?? []);
  return { events: history.events?.length ?? 0, payloads: sizes.length, largest: Math.max(0, ...sizes), total: sizes.reduce((a, b) => a + b, 0) };
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
  /** Server time of the run's first and last event (epoch ms): on the time-skipping server, workflow time. */
  startedAtMs?: number;
  lastEventAtMs?: number;
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
    runs.unshift({
      runId,
      events: events.length,
      closedBy: lastType && CLOSING.includes(lastType) ? lastType : undefined,
      startedAtMs: optionalTsToMs(events[0]?.eventTime),
      lastEventAtMs: optionalTsToMs(last?.eventTime),
    });
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs;
}

/** Durable timers the workflow started, in milliseconds. */
export async function timersStarted(handle: WorkflowHandle): Promise<number[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const ms = optionalTsToMs(e.timerStartedEventAttributes?.startToFireTimeout);
    return ms === undefined ? [] : [ms];
  });
}

/** A wait a failure asked for (`nextRetryDelay`): the failure's type and the wait. */
export interface DemandedWait {
  type: string;
  /** @format milliseconds */
  requestedMs: number;
}

/**
 * Waits failures asked for in the workflows' histories: each retry Temporal scheduled (the retry's started event
 * carries the previous attempt's failure) and, with `failedAttempts`, each failed activity the workflow itself
 * calls again after a durable timer (e.g. a start call, or a quiet poll's failed poll).
 */
export async function demandedWaits(handles: WorkflowHandle[], { failedAttempts = false } = {}): Promise<DemandedWait[]> {
  const waits: DemandedWait[] = [];
  for (const handle of handles) {
    const { events } = await handle.fetchHistory();
    for (const event of events ?? []) {
      const retried = event.activityTaskStartedEventAttributes?.lastFailure?.applicationFailureInfo;
      // A quiet poll's failed poll arrives wrapped (`QuietPollEnded`): the wait is its cause's.
      const failure = event.activityTaskFailedEventAttributes?.failure;
      const failed = failedAttempts ? (failure?.applicationFailureInfo?.type === 'QuietPollEnded' ? failure.cause : failure)?.applicationFailureInfo : undefined;
      for (const info of [retried, failed]) {
        if (info?.type && info.nextRetryDelay) waits.push({ type: info.type, requestedMs: optionalTsToMs(info.nextRetryDelay) ?? 0 });
      }
    }
  }
  return waits;
}

/** The results of the activities of `activityType` that completed, in the order they completed (decoded JSON). */
export async function activityResults<T>(handle: WorkflowHandle, activityType: string): Promise<T[]> {
  const { events } = await handle.fetchHistory();
  const types = new Map<string, string>();
  const results: T[] = [];
  for (const event of events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) types.set(String(event.eventId), scheduled.activityType?.name ?? '');
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && types.get(String(completed.scheduledEventId)) === activityType) {
      const payload = completed.result?.payloads?.[0];
      if (payload) results.push(defaultPayloadConverter.fromPayload<T>(payload));
    }
  }
  return results;
}
