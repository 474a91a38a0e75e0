/**
 * What a download attempt reports of its progress (heartbeat details): read by the migration's status text and
 * `longhaul status`. Types only, so workflow code may name them.
 */
/** Heartbeat details of the archive download (progress for the CLI; the resume point is the `.part` file). */
export interface DownloadProgress {
  /** Bytes on disk, or stored in the object store when the archive goes there. */
  offset: number;
  total?: number;
  /** The object being uploaded (`s3://bucket/key`), when the archive goes to an object store. */
  url?: string;
  /** What this attempt kept from an earlier one and fetched again, when it resumed (issue 40). */
  resume?: ResumeReport;
}

/**
 * How a download attempt resumed: shown by `longhaul status` and kept in the activity's heartbeat details (numbers
 * only: no path, URL or id).
 */
export interface ResumeReport {
  /** @format bytes — where this attempt continued (0: from the start). */
  from: number;
  /**
   * What the resume point rests on: `file` (the `.part` file's length, the same boot of the machine), `synced` (the
   * last synced checkpoint: after a restart, or a checkpoint without a boot id), `store` (the parts the object
   * store confirms), `checkpoint` (the heartbeat's checkpoint).
   */
  basis: 'file' | 'synced' | 'store' | 'checkpoint';
  /**
   * @format bytes — bytes an earlier attempt had already fetched that this one fetches from storage again: a tail
   * dropped after a restart, parts stored past the checkpoint, and the one byte a local resume asks early.
   */
  reRead: number;
  /** @format bytes — bytes read back from the local disk to rebuild the SHA-256 (none for an object store). */
  readBack: number;
}
