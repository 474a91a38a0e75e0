/**
 * Reading Google's `Operation` (google.longrunning) into the small `OperationView` workflows keep, and the
 * little helpers every Google activity shares.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { OperationView } from '../model';
import { FailureType } from '../../../http/retry-policy';
import { answer, optional, required } from '../../../http/answer';

/** `google.longrunning.Operation`. */
export const OPERATION_SHAPE = answer({ name: required('string'), done: optional('boolean'), metadata: optional('object'), error: optional('object'), response: optional('object') });
/** A Google resource (API key, log bucket) as read back: its name identifies it. */
export const RESOURCE_SHAPE = answer({ name: required('string') });

/** A `google.longrunning.Operation` as JSON. */
export interface GoogleOperation {
  name: string;
  done?: boolean;
  metadata?: { '@type'?: string; state?: string; startTime?: string; [k: string]: unknown };
  error?: { code: number; message: string };
  response?: Record<string, unknown>;
}

/**
 * The view of an operation. Logging's `metadata.state` loses its `OPERATION_STATE_` prefix; operations
 * without a state in their metadata (API Keys) report RUNNING until done, then SUCCEEDED or FAILED.
 */
export function operationView(op: GoogleOperation, summarize: (response: Record<string, unknown>) => Record<string, unknown>): OperationView {
  const done = op.done === true;
  const reported = typeof op.metadata?.state === 'string' ? op.metadata.state.replace(/^OPERATION_STATE_/, '') : undefined;
  const state = reported ?? (done ? (op.error ? 'FAILED' : 'SUCCEEDED') : 'RUNNING');
  return {
    name: op.name,
    done,
    state,
    ...(op.error ? { error: { code: op.error.code, message: op.error.message } } : {}),
    ...(done && op.response ? { response: summarize(op.response) } : {}),
  };
}

/** A resource name as a URL path: each segment encoded, the slashes kept. */
export function resourcePath(name: string): string {
  return name
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/%3A/gi, ':'))
    .join('/');
}

/** Whether an activity error is the given failure type (as raised by the HTTP core). */
export function isFailure(err: unknown, type: string): err is ApplicationFailure {
  return err instanceof ApplicationFailure && err.type === type;
}

/** Runs a read, answering `undefined` instead of failing when the resource does not exist. */
export async function unlessNotFound<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isFailure(err, FailureType.NotFound)) return undefined;
    throw err;
  }
}

/** Picks the listed fields that are present. */
export function pick(source: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (source[f] !== undefined) out[f] = source[f];
  return out;
}
