/**
 * The feed spool: where a poll's fetched events wait, on the worker's disk, until the sink has them.
 *
 * Events are several KB to tens of KB each and a poll reads up to 300 of them, far more than a
 * Temporal payload may hold (2 MB) and far more than a workflow history should carry. So the activity
 * that fetches a page writes the page's events here and returns only their ids; the delivery activity
 * reads the events back by id. Only ids, counts and cursors cross into history.
 *
 * Layout: `<dataDir>/spool/feeds/<feed>/<pollId>/page-<n>.json`, each page written atomically (temp file
 * and rename), so a retried fetch overwrites its page whole. After delivery the poll's pages are
 * replaced by a `delivered` marker (a retried delivery then knows it is done); the next poll of the
 * feed removes earlier polls' directories.
 *
 * A spool is local to a worker's data directory, and needs no shared volume: a poll's later pages and its
 * delivery are scheduled on the task queue of the worker that fetched its first page (`../../workflow.ts`).
 * A delivery that still finds no pages (the data directory was cleared under a running poll, or a poll
 * recorded before that rule) fails as `FeedSpoolMissing`; the cursor stays where it was, and the next poll
 * fetches the events again.
 */
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { FeedFailure, type FeedEvent } from '../../model';

const DELIVERED_MARKER = 'delivered';

export interface SpoolRef {
  /** Identifies one poll of a feed (made by the workflow; letters, digits and `-`). */
  pollId: string;
}

function feedDir(dataDir: string, feed: string): string {
  return join(dataDir, 'spool', 'feeds', feed.replace(/^\//, '').replace(/[^A-Za-z0-9._-]/g, '_'));
}

function pollDir(dataDir: string, feed: string, pollId: string): string {
  if (!/^[A-Za-z0-9-]{1,100}$/.test(pollId)) throw ApplicationFailure.nonRetryable(`invalid spool poll id ${JSON.stringify(pollId)}`, FeedFailure.InvalidInput);
  return join(feedDir(dataDir, feed), pollId);
}

/** Writes one page's events (feed order). Removes earlier polls of the feed when this is page 1. */
export async function spoolPage(dataDir: string, feed: string, ref: SpoolRef & { page: number }, events: readonly FeedEvent[]): Promise<{ bytes: number }> {
  const dir = pollDir(dataDir, feed, ref.pollId);
  if (ref.page === 1) await removeOtherPolls(dataDir, feed, ref.pollId);
  await mkdir(dir, { recursive: true });
  const body = JSON.stringify(events);
  const file = join(dir, `page-${ref.page}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, body);
  await rename(tmp, file);
  return { bytes: Buffer.byteLength(body) };
}

async function removeOtherPolls(dataDir: string, feed: string, keep: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(feedDir(dataDir, feed));
  } catch {
    return;
  }
  // Polls of one feed are serial (the cursor's mutex): every other directory is a finished poll.
  await Promise.all(entries.filter((e) => e !== keep).map((e) => rm(join(feedDir(dataDir, feed), e), { recursive: true, force: true })));
}

/**
 * The spooled events with the given ids, in the order of `ids`. `done: true` when an earlier attempt
 * already delivered this poll (its marker is there). Throws `FeedSpoolMissing` when an event is not
 * in the spool (another worker fetched it, or the data directory was cleared).
 */
export async function readSpooled(dataDir: string, feed: string, ref: SpoolRef, ids: readonly string[]): Promise<{ events: FeedEvent[]; done: boolean }> {
  const dir = pollDir(dataDir, feed, ref.pollId);
  let files: string[];
  try {
    files = await readdir(dir);
  } catch {
    files = [];
  }
  if (files.includes(DELIVERED_MARKER)) return { events: [], done: true };
  const byId = new Map<string, FeedEvent>();
  for (const f of files.filter((x) => /^page-\d+\.json$/.test(x))) {
    for (const e of JSON.parse(await readFile(join(dir, f), 'utf8')) as FeedEvent[]) byId.set(String(e.id), e);
  }
  const events: FeedEvent[] = [];
  const missing: string[] = [];
  for (const id of ids) {
    const e = byId.get(id);
    if (e) events.push(e);
    else missing.push(id);
  }
  if (missing.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `${missing.length} event(s) of poll ${ref.pollId} of ${feed} are not in this worker's spool (${dir}); the next poll fetches them again`,
      FeedFailure.SpoolMissing,
    );
  }
  return { events, done: false };
}

/** Replaces a delivered poll's pages by the marker (a retried delivery then returns at once). */
export async function markDelivered(dataDir: string, feed: string, ref: SpoolRef): Promise<void> {
  const dir = pollDir(dataDir, feed, ref.pollId);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, DELIVERED_MARKER), '');
  for (const f of await readdir(dir)) if (f !== DELIVERED_MARKER) await rm(join(dir, f), { force: true });
}
