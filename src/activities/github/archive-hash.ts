/**
 * The archive's SHA-256, computed on the calling thread block by block as the sink hands them over (about
 * 0.6 s of CPU per GiB with SHA-NI on the 2-core machine). The disk writes run on a thread of their own
 * (`archive-writer.ts`). A second thread for the hash made the download about as fast in bench:download
 * (docs/benchmarks.md, "Archive download") for one thread's memory more: RSS growth 44–56 MiB during a 1 GiB
 * download against 35–45 MiB with the hash here.
 */
import { createHash } from 'node:crypto';

/** What the sink and the `.part` re-hash need: bytes in order. */
export interface BlockHash {
  /** Feeds `bytes`; the caller leaves them untouched until the result settles (a promise, or at once). */
  update(bytes: Buffer): unknown;
}

/** A download's running SHA-256. */
export interface ArchiveHash extends BlockHash {
  digest(): Promise<string>;
}

export function archiveHash(): ArchiveHash {
  return new InlineHash();
}

/** The SHA-256 on the calling thread. */
export class InlineHash implements ArchiveHash {
  private readonly hash = createHash('sha256');

  update(bytes: Buffer): void {
    this.hash.update(bytes);
  }

  digest(): Promise<string> {
    return Promise.resolve(this.hash.digest('hex'));
  }
}
