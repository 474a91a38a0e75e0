/**
 * How much of a body longhaul reads from the network, by what the body is: one table, each cap with its reason
 * (docs/architecture.md, "Bounded reads", shows it). Every read counts the bytes as they arrive and stops at the
 * cap (the stream is destroyed, the rest never read): nothing is buffered first and measured after.
 *
 * Two kinds of body:
 * - bodies that are the answer (an API's JSON, a sink's or a store's answer): past the cap the read fails with a
 *   `BodyTooLarge` error naming the cap, which each caller turns into its typed failure;
 * - bodies read only for a message (error answers, storage error pages): the read keeps the first `cap` bytes
 *   and stops (`truncate`), as the status and headers decide what the answer means.
 */

/** One cap: bytes, and why that many. */
export interface BodyLimit {
  readonly bytes: number;
  /** Why this cap: the largest legitimate body of this kind, and the margin. */
  readonly reason: string;
}

const KiB = 1024;
const MiB = 1024 * KiB;

/** Every cap on a body read from (or, for the emulator, sent to) the network. */
export const BODY_LIMITS = {
  apiAnswer: {
    bytes: 64 * MiB,
    reason:
      "an API's JSON success answer: the largest GitHub sends longhaul is a migration naming 5,000 repositories " +
      '(its repositories in full, about 6 KB each: some 30 MB); a page of 100 feed events or deliveries stays far below',
  },
  apiErrorAnswer: {
    bytes: 64 * KiB,
    reason: "an API's error answer (4xx/5xx): read for its message and retry hints only, which GitHub and Google keep to a few KB",
  },
  sinkAnswer: {
    bytes: 64 * KiB,
    reason: "a feed sink's answer (HTTP sink, Cloud Logging entries:write): only its status and a message matter",
  },
  storageMessage: {
    bytes: 4 * KiB,
    reason: 'what the archive storage answers instead of the archive (an error page, JSON, a redirect body): an excerpt for the failure',
  },
  objectStoreControl: {
    bytes: 64 * KiB,
    reason: "an object store's answer to an upload-session call longhaul makes itself (GCS chunk PUT and DELETE): empty, or a small status",
  },
} as const satisfies Record<string, BodyLimit>;

export type BodyLimitName = keyof typeof BODY_LIMITS;

/** `64 MiB (67108864 bytes)`: a cap as people read it, with the exact figure. */
export function describeCap(bytes: number): string {
  const unit = bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : bytes >= KiB && bytes % KiB === 0 ? `${bytes / KiB} KiB` : `${bytes} bytes`;
  return unit.endsWith('bytes') ? unit : `${unit} (${bytes} bytes)`;
}

/** A body went past its cap: the read stopped there. */
export class BodyTooLarge extends Error {
  override readonly name = 'BodyTooLarge';
  constructor(
    /** Which cap (a key of `BODY_LIMITS`, or the caller's own name for an injected cap). */
    readonly limit: string,
    readonly capBytes: number,
    /** Bytes read before the read stopped (at most the cap plus the chunk that crossed it). */
    readonly bytesRead: number,
  ) {
    super(`the body is larger than ${describeCap(capBytes)}, the cap on ${limit}; the read stopped after ${bytesRead} bytes`);
  }
}

/** A body as a stream of chunks that can be abandoned (undici's, Node's `IncomingMessage`, a web stream's reader adapted). */
export interface ChunkStream extends AsyncIterable<Uint8Array | string> {
  destroy?(error?: Error): unknown;
}

/** What a capped read returns: the bytes kept, how many arrived, and whether the cap cut the body. */
export interface CappedBody {
  bytes: Buffer;
  bytesRead: number;
  truncated: boolean;
}

/**
 * Reads `body` up to `capBytes`, counting as the chunks arrive; at the cap it destroys the stream (nothing more
 * is read). Past the cap: `truncate` keeps the first `capBytes` and says so, otherwise it throws `BodyTooLarge`.
 */
export async function readCapped(body: ChunkStream, limit: BodyLimitName | { name: string; bytes: number }, opts: { truncate?: boolean } = {}): Promise<CappedBody> {
  const [name, cap] = typeof limit === 'string' ? [limit, BODY_LIMITS[limit].bytes] : [limit.name, limit.bytes];
  const chunks: Buffer[] = [];
  let bytesRead = 0;
  let over = false;
  for await (const chunk of body) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    bytesRead += buffer.length;
    if (bytesRead > cap) {
      over = true;
      const room = cap - (bytesRead - buffer.length);
      if (room > 0) chunks.push(buffer.subarray(0, room));
      break;
    }
    chunks.push(buffer);
  }
  if (over) {
    // Leaving the loop early returned the iterator (undici and Node destroy the stream then); made sure here.
    body.destroy?.();
    if (!opts.truncate) throw new BodyTooLarge(name, cap, bytesRead);
  }
  return { bytes: Buffer.concat(chunks), bytesRead, truncated: over };
}

/** `readCapped` as UTF-8 text. */
export async function readCappedText(body: ChunkStream, limit: BodyLimitName | { name: string; bytes: number }, opts: { truncate?: boolean } = {}): Promise<{ text: string; truncated: boolean; bytesRead: number }> {
  const read = await readCapped(body, limit, opts);
  return { text: read.bytes.toString('utf8'), truncated: read.truncated, bytesRead: read.bytesRead };
}
