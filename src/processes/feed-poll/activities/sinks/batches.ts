/**
 * Splitting a poll's events into sink requests: at most `maxCount` events and about `maxBytes` of JSON
 * each (real events reach tens of KB; 100 of them would make a request receivers and Cloud Logging's
 * 10 MB cap may refuse). Deterministic: the same events always give the same batches, so a retried
 * delivery re-sends the same bytes.
 */
import type { FeedEvent } from '../../model';

export const DEFAULT_BATCH = { maxCount: 100, maxBytes: 1024 * 1024 } as const;

export function eventBatches(events: readonly FeedEvent[], maxCount: number = DEFAULT_BATCH.maxCount, maxBytes: number = DEFAULT_BATCH.maxBytes): FeedEvent[][] {
  const batches: FeedEvent[][] = [];
  let current: FeedEvent[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = Buffer.byteLength(JSON.stringify(event));
    // An event larger than the byte bound goes alone.
    if (current.length > 0 && (current.length >= maxCount || bytes + size > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
