/**
 * The download's state on disk, which is all a retry needs to resume (on this host or another one sharing
 * the directory):
 *
 * - `<path>.part` — the bytes received so far; its length is the resume point (not a heartbeat, which lags) as long
 *   as the machine has not restarted since they were written (`boot-id.ts`).
 * - `<path>.part.json` — which archive the bytes belong to and the validator (`ETag`/`Last-Modified`) of the
 *   object they came from, written before the first byte, so a resume can ask `If-Range`; and the synced
 *   checkpoint: how many bytes of the `.part` were synced to the disk (`fdatasync`), in which boot. After a
 *   restart (another boot id, or none) the file is cut back to that checkpoint: a tail written but not synced
 *   may be missing or hold blocks that were never filled.
 * - `<path>.lock` — who is writing: created exclusively, refreshed every second; a lock whose process is gone
 *   (same host) or that was not refreshed for `staleAfterMs` (another host) is taken over.
 *
 * The archive appears under its final name only by `rename` at the end, after every check.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir, readFile, rename, stat, truncate, unlink, utimes } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { storageFailure } from './storage/failures';
import type { BlockHash } from './sink';
import { sameBoot } from './boot-id';
import { processAlive } from '../common/process-alive';

/** What `.part.json` records. */
export interface PartMeta {
  /** Identifies the archive (`org/migrationId`): a `.part` of another archive is never resumed. */
  source: string;
  /** `ETag` or `Last-Modified` of the object the bytes came from. */
  validator: string;
  total: number;
  /** The most bytes of this object any answer brought (the download's high-water mark): progress is past it. */
  reached?: number;
  /** Bytes from byte 0 of the `.part` that were synced to the disk before this was written. */
  synced?: number;
  /** The kernel's boot id when this was written (absent: written by 0.4.0, or where the platform has none). */
  bootId?: string;
}

/** Where a download resumes and why (`ResumeReport` without `reRead`, which the download adds). */
export interface ResumePoint {
  offset: number;
  meta?: PartMeta;
  /** `file`: the `.part`'s length (same boot); `synced`: the synced checkpoint (the file was cut back to it). */
  basis: 'file' | 'synced';
  /** Bytes past the resume point that were in the `.part` and were dropped (they are fetched again). */
  dropped: number;
}

export class PartFile {
  readonly partPath: string;
  readonly metaPath: string;

  constructor(readonly path: string) {
    this.partPath = `${path}.part`;
    this.metaPath = `${path}.part.json`;
  }

  /**
   * What can be resumed when the metadata names the same archive (else nothing, and the stale files are cleared
   * so nothing of another object can mix in): in the boot that wrote it (`bootId`), the `.part`'s length; after a
   * restart, or for metadata without a boot id, the synced checkpoint (`synced`, else `checkpoint`: what the
   * last heartbeat of a download by 0.4.0 reported), and the `.part` is cut back to it.
   */
  async resumable(source: string, bootId: string | undefined, checkpoint?: number): Promise<ResumePoint> {
    await this.sweepTemporaries();
    const meta = await readMeta(this.metaPath);
    const size = await fileSize(this.partPath);
    if (!meta || meta.source !== source || size === 0 || size > meta.total) {
      await this.clear();
      return { offset: 0, basis: 'file', dropped: 0 };
    }
    if (sameBoot(meta.bootId, bootId)) return { offset: size, meta, basis: 'file', dropped: 0 };
    // Cut back, the metadata kept: it still names the object, and its high-water mark still counts.
    const synced = Math.min(size, Math.max(0, meta.synced ?? checkpoint ?? 0));
    if (synced < size) await truncate(this.partPath, synced);
    return { offset: synced, meta, basis: 'synced', dropped: size - synced };
  }

  async writeMeta(meta: PartMeta): Promise<void> {
    // Written to a temporary name, synced and renamed: neither a crash nor a power loss leaves half a JSON file
    // (after a power loss the rename may be lost: the checkpoint before it is still a true one).
    const tmp = `${this.metaPath}.${randomUUID()}`;
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(JSON.stringify(meta));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.metaPath);
  }

  /**
   * Removes `.part.json` temporaries a killed process left (one is written every second, see `writeMeta`). Called
   * under the lock: no other writer of this download is alive.
   */
  private async sweepTemporaries(): Promise<void> {
    const prefix = `${basename(this.metaPath)}.`;
    const names = await readdir(dirname(this.metaPath)).catch(() => [] as string[]);
    for (const name of names) if (name.startsWith(prefix)) await unlink(join(dirname(this.metaPath), name)).catch(ignoreMissing);
  }

  /** Feeds `[0, length)` of the `.part` into `hash`; returns its first two bytes (for the gzip magic). */
  async hashPrefix(length: number, hash: BlockHash): Promise<Buffer> {
    let head = Buffer.alloc(0);
    if (length === 0) return head;
    for await (const chunk of createReadStream(this.partPath, { start: 0, end: length - 1, highWaterMark: 4 * 1024 * 1024 })) {
      const buffer = chunk as Buffer;
      if (head.length < 2) head = Buffer.concat([head, buffer.subarray(0, 2 - head.length)]);
      hash.update(buffer);
    }
    return head;
  }

  async clear(): Promise<void> {
    await unlink(this.partPath).catch(ignoreMissing);
    await unlink(this.metaPath).catch(ignoreMissing);
  }

  /** Moves the finished `.part` to the final name and drops its metadata. */
  async complete(): Promise<void> {
    await rename(this.partPath, this.path);
    await unlink(this.metaPath).catch(ignoreMissing);
  }
}

interface LockOwner {
  host: string;
  pid: number;
  token: string;
}

export class DownloadLock {
  private constructor(
    readonly lockPath: string,
    private readonly owner: LockOwner,
  ) {}

  /** Takes the lock, or fails with a retryable `ArchiveDownloadBusy` naming the live holder. */
  static async acquire(path: string, staleAfterMs: number, now: () => number = Date.now): Promise<DownloadLock> {
    const lockPath = `${path}.lock`;
    const owner: LockOwner = { host: hostname(), pid: process.pid, token: randomUUID() };
    for (let tries = 0; tries < 3; tries++) {
      try {
        const handle = await open(lockPath, 'wx');
        await handle.writeFile(JSON.stringify(owner));
        await handle.close();
        return new DownloadLock(lockPath, owner);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = await readLock(lockPath);
      if (!holder) continue; // released meanwhile
      const ageMs = now() - holder.mtimeMs;
      const dead = holder.owner ? holder.owner.host === owner.host && !processAlive(holder.owner.pid) : false;
      if (!dead && ageMs < staleAfterMs) {
        const who = holder.owner ? `process ${holder.owner.pid} on ${holder.owner.host}` : 'another process';
        throw storageFailure('archive', 'Busy', `${path} is being downloaded by ${who} (lock refreshed ${Math.round(ageMs / 1000)} s ago)`);
      }
      // Take over a stale lock by renaming it away: of two processes doing so, only one rename succeeds.
      const aside = `${lockPath}.stale-${owner.token}`;
      try {
        await rename(lockPath, aside);
      } catch {
        continue;
      }
      const moved = await readLock(aside);
      if (moved?.owner?.token !== holder.owner?.token) {
        // Someone else took it over between our read and our rename: give it back.
        await rename(aside, lockPath).catch(() => undefined);
        throw storageFailure('archive', 'Busy', `${path} is being downloaded by another process (its lock was just taken over)`);
      }
      await unlink(aside).catch(ignoreMissing);
    }
    throw storageFailure('archive', 'Busy', `could not take the lock ${lockPath}`);
  }

  /** Marks the lock as alive; false when another process took it over (this one must stop writing). */
  async refresh(): Promise<boolean> {
    if (!(await this.held())) return false;
    const t = new Date();
    await utimes(this.lockPath, t, t).catch(() => undefined);
    return true;
  }

  async held(): Promise<boolean> {
    const current = await readLock(this.lockPath);
    return current?.owner?.token === this.owner.token;
  }

  async release(): Promise<void> {
    if (await this.held()) await unlink(this.lockPath).catch(ignoreMissing);
  }
}

async function readLock(path: string): Promise<{ owner?: LockOwner; mtimeMs: number } | undefined> {
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    let owner: LockOwner | undefined;
    try {
      owner = JSON.parse(text) as LockOwner;
    } catch {
      // A lock file being written, or garbage: judged by its age only.
    }
    return { owner, mtimeMs: info.mtimeMs };
  } catch {
    return undefined;
  }
}

async function readMeta(path: string): Promise<PartMeta | undefined> {
  try {
    const meta = JSON.parse(await readFile(path, 'utf8')) as Partial<PartMeta>;
    if (typeof meta.source === 'string' && typeof meta.validator === 'string' && typeof meta.total === 'number') return meta as PartMeta;
  } catch {
    // Missing or unreadable: nothing to resume.
  }
  return undefined;
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

function ignoreMissing(err: NodeJS.ErrnoException): void {
  if (err.code !== 'ENOENT') throw err;
}
