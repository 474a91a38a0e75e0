/**
 * The JSON-lines file sink: one line per event (`{"feed":…,"event":{…}}`), appended in order.
 *
 * Idempotent by event id: before appending, the sink reads the file's tail (far enough back to cover
 * any earlier attempt of the same batch) and skips events already written, and it cuts off a half
 * line left by a crash mid-write. A retried batch therefore never writes an event twice.
 */
import { mkdir, open, stat, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { FeedEvent } from '../../model';

export interface TailIds {
  /** Event ids found in the last complete lines read. */
  ids: Set<string>;
  /** Bytes after the last newline (a line cut short by a crash), 0 when the file ends cleanly. */
  partialBytes: number;
  size: number;
}

/** Reads up to `maxLines` complete lines from the end of `path` and collects their event ids. */
export async function tailEventIds(path: string, maxLines: number, chunkBytes = 64 * 1024): Promise<TailIds> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    return { ids: new Set(), partialBytes: 0, size: 0 };
  }
  const fh = await open(path, 'r');
  let data = Buffer.alloc(0);
  let position = size;
  try {
    let newlines = 0;
    // One newline more than lines wanted: the line before it may start before what was read.
    while (position > 0 && newlines <= maxLines) {
      const length = Math.min(chunkBytes, position);
      position -= length;
      const chunk = Buffer.alloc(length);
      await fh.read(chunk, 0, length, position);
      for (const byte of chunk) if (byte === 0x0a) newlines++;
      data = Buffer.concat([chunk, data]);
    }
  } finally {
    await fh.close();
  }
  const lastNewline = data.lastIndexOf(0x0a);
  const partialBytes = data.length - (lastNewline + 1);
  const lines = lastNewline < 0 ? [] : data.subarray(0, lastNewline).toString('utf8').split('\n');
  // Read from the middle of the file: the first line may be cut.
  if (position > 0) lines.shift();
  const ids = new Set<string>();
  for (const line of lines.slice(-maxLines)) {
    try {
      const id = (JSON.parse(line) as { event?: { id?: unknown } }).event?.id;
      if (id !== undefined) ids.add(String(id));
    } catch {
      // A corrupt line carries no id we could trust.
    }
  }
  return { ids, partialBytes, size };
}

/** Appends the events not yet in the file's tail. */
export async function appendEventsOnce(path: string, feed: string, events: readonly FeedEvent[]): Promise<{ written: number; alreadyPresent: number }> {
  await mkdir(dirname(path), { recursive: true });
  // Any earlier attempt of this batch wrote at most `events.length` lines; other feeds sharing the
  // file may have interleaved theirs, hence the generous window.
  const tail = await tailEventIds(path, Math.max(1000, events.length * 4));
  if (tail.partialBytes > 0) await truncate(path, tail.size - tail.partialBytes);
  const fresh = events.filter((e) => !tail.ids.has(String(e.id)));
  if (fresh.length > 0) {
    const fh = await open(path, 'a');
    try {
      await fh.write(fresh.map((event) => `${JSON.stringify({ feed, event })}\n`).join(''));
      await fh.sync();
    } finally {
      await fh.close();
    }
  }
  return { written: fresh.length, alreadyPresent: events.length - fresh.length };
}
