/** Helpers for the Google operation workflow tests (the stack is `useStack`): waits seen in history, request counts. */
import type { WorkflowHandle } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import type { Emulator } from '../../src/emulator/emulator';

/** Polls `probe` until it returns a value (not undefined; a throw counts as not yet), or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let value: T | undefined;
    try {
      value = await probe();
    } catch {
      // Not ready yet (e.g. the workflow is not queryable before its first task).
    }
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Requests the emulator received on routes whose `METHOD pattern` key contains `fragment`. */
export function requestsTo(emulator: Emulator, method: string, fragment: string): number {
  return Object.entries(emulator.stats.byRoute)
    .filter(([key]) => key.startsWith(`${method} `) && key.includes(fragment))
    .reduce((sum, [, n]) => sum + n, 0);
}

/** Durable timers the workflow started, in milliseconds. */
export async function timersStarted(handle: WorkflowHandle): Promise<number[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const ms = optionalTsToMs(e.timerStartedEventAttributes?.startToFireTimeout);
    return ms === undefined ? [] : [ms];
  });
}

/** Activity retries Temporal scheduled after a failure that asked for a wait: `{ type, requestedMs }`. */
export async function serverDemandedRetries(handle: WorkflowHandle): Promise<{ type: string; requestedMs: number }[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const info = e.activityTaskStartedEventAttributes?.lastFailure?.applicationFailureInfo;
    return info?.type && info.nextRetryDelay ? [{ type: info.type, requestedMs: optionalTsToMs(info.nextRetryDelay) ?? 0 }] : [];
  });
}
