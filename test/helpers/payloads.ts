/** Measuring what a workflow's history carries: every payload of every event, by size. */
import type { Client } from '@temporalio/client';

interface PayloadLike {
  metadata?: Record<string, Uint8Array | null | undefined> | null;
  data?: Uint8Array | null;
}

function isPayload(v: unknown): v is PayloadLike {
  return typeof v === 'object' && v !== null && 'data' in v && (v as PayloadLike).data instanceof Uint8Array && 'metadata' in v;
}

/** Bytes of each payload found anywhere in `value` (data plus metadata). */
export function payloadSizes(value: unknown, out: number[] = []): number[] {
  if (isPayload(value)) {
    let n = value.data?.length ?? 0;
    for (const [k, v] of Object.entries(value.metadata ?? {})) n += k.length + (v?.length ?? 0);
    out.push(n);
    return out;
  }
  if (value instanceof Uint8Array || typeof value !== 'object' || value === null) return out;
  for (const v of Array.isArray(value) ? value : Object.values(value)) payloadSizes(v, out);
  return out;
}

/** Every payload of one run's history (the latest run when `runId` is omitted): count, largest, total. */
export async function historyPayloads(client: Client, workflowId: string, runId?: string): Promise<{ events: number; payloads: number; largest: number; total: number }> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const sizes = payloadSizes(history.events ?? []);
  return { events: history.events?.length ?? 0, payloads: sizes.length, largest: Math.max(0, ...sizes), total: sizes.reduce((a, b) => a + b, 0) };
}
