/**
 * An upload's checkpoint, also kept on the worker's disk (issue 40). The heartbeat that carries the checkpoint to
 * the server lags: it is sent once a second at most, and the SDK throttles what reaches the server further. The
 * state after each part is known the moment the store confirmed the part, so this host writes it down then, in
 * `<data dir>/.archive-uploads/`. A later attempt on the same host, in the same boot of the machine, continues
 * from this copy when it belongs to the same upload and is further than the heartbeat's: the parts the store
 * confirms are the resume point (`uploadArchive` asks the store for them, as for any checkpoint, and starts afresh
 * when one is missing). Another host, or this one after a restart, continues from the heartbeat's checkpoint.
 *
 * The file holds what the heartbeat details hold (no credential: an upload id or a session's fingerprint, offsets,
 * the hash state) and the archive's validator at storage. It is written to a temporary name and renamed, so it is
 * whole or absent; the boot id says whether it can be older than the upload's parts it names.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { UploadCheckpoint } from './object-store';
import { sameBoot } from './boot-id';

/** What the file records. */
interface LocalUploadNote {
  bootId?: string;
  validator?: string;
  checkpoint: UploadCheckpoint;
}

export class LocalUploadCheckpoint {
  private writing?: Promise<void>;
  private next?: LocalUploadNote;
  private savedOffset = -1;

  private constructor(readonly path: string) {}

  /** The file for the object `name` under `destination`, in `dataDir`. */
  static in(dataDir: string, destination: string, name: string): LocalUploadCheckpoint {
    const id = createHash('sha256').update(`${destination}\n${name}`).digest('hex').slice(0, 32);
    return new LocalUploadCheckpoint(join(dataDir, '.archive-uploads', `${id}.json`));
  }

  /**
   * The checkpoint to continue from instead of the heartbeat's (`fromHeartbeat`): this host's, written in the boot
   * `bootId`, of the same upload and further; else undefined.
   */
  async further(bootId: string | undefined, fromHeartbeat: UploadCheckpoint | undefined): Promise<{ checkpoint: UploadCheckpoint; validator?: string } | undefined> {
    const note = await readFile(this.path, 'utf8').then((text) => JSON.parse(text) as LocalUploadNote, () => undefined);
    const kept = note?.checkpoint;
    if (!note || !kept || typeof kept.offset !== 'number' || typeof kept.upload !== 'string' || kept.sha256 !== undefined) return undefined;
    if (!sameBoot(note.bootId, bootId)) return undefined;
    if (fromHeartbeat && (fromHeartbeat.url !== kept.url || fromHeartbeat.upload !== kept.upload || fromHeartbeat.offset >= kept.offset || fromHeartbeat.sha256)) return undefined;
    return { checkpoint: kept, validator: note.validator };
  }

  /** Records `checkpoint` when it advanced; writes run one at a time, the newest last. Failures are ignored. */
  save(checkpoint: UploadCheckpoint, validator: string | undefined, bootId: string | undefined): void {
    if (checkpoint.offset <= this.savedOffset || checkpoint.sha256 !== undefined) return;
    this.savedOffset = checkpoint.offset;
    this.next = { ...(bootId !== undefined ? { bootId } : {}), ...(validator !== undefined ? { validator } : {}), checkpoint };
    this.writing ??= this.drain();
  }

  /** Waits for the writes in progress, then removes the file and any temporary a killed attempt left of it. */
  async remove(): Promise<void> {
    this.savedOffset = Number.MAX_SAFE_INTEGER;
    this.next = undefined;
    await this.writing;
    await unlink(this.path).catch(() => undefined);
    const prefix = `${basename(this.path)}.`;
    for (const name of await readdir(dirname(this.path)).catch(() => [] as string[])) {
      if (name.startsWith(prefix)) await unlink(join(dirname(this.path), name)).catch(() => undefined);
    }
  }

  private async drain(): Promise<void> {
    try {
      for (let note = this.next; note; note = this.next) {
        this.next = undefined;
        const tmp = `${this.path}.${randomUUID()}`;
        try {
          await mkdir(dirname(this.path), { recursive: true });
          await writeFile(tmp, JSON.stringify(note));
          await rename(tmp, this.path);
        } catch {
          // A read-only or full data directory: the heartbeat's checkpoint still serves.
          await unlink(tmp).catch(() => undefined);
        }
      }
    } finally {
      this.writing = undefined;
    }
  }
}
