/**
 * The archive's SHA-256, computed on a thread of its own.
 *
 * Why a thread: on the main thread the download is one serial chain per block, socket reads (0.3–0.4 s of
 * CPU per GiB) then the hash (0.68 s per GiB with SHA-NI on the 2-core machine), and that chain alone took
 * about as long as `curl -o` takes for the whole transfer. The cores were not both busy (download + origin
 * used about 1.6 of 2), so the hash running beside the reads shortens the critical path instead of merely
 * moving CPU. Blocks backed by a `SharedArrayBuffer` reach the thread without a copy (the sink's staging
 * buffers are); any other bytes are copied by `postMessage`.
 *
 * One thread serves every download of the process (each hash has an id); it is started on first use, and
 * does not keep the process alive while no hash is pending. Whether downloads use it is `hashOnThread`.
 */
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** What the sink and the `.part` re-hash need: bytes in order. */
export interface BlockHash {
  /** Feeds `bytes`; the caller leaves them untouched until the result settles (a promise, or at once). */
  update(bytes: Buffer): unknown;
}

/** The hash thread failed or is gone: the download fails retryable and resumes from disk (re-hashing it). */
export class HashFailed extends Error {
  constructor(message: string) {
    super(`the SHA-256 thread failed: ${message}`);
    this.name = 'HashFailed';
  }
}

/** Plain JavaScript: evaluated as the worker's script, so it runs the same under tsx, vitest and `dist/`. */
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', (m) => {
  try {
    if (m.op === 'drop') return void hashes.delete(m.id);
    let hash = hashes.get(m.id);
    if (!hash) hashes.set(m.id, (hash = createHash('sha256')));
    if (m.op === 'update') {
      hash.update(m.bytes);
      return void parentPort.postMessage({ seq: m.seq });
    }
    hashes.delete(m.id);
    parentPort.postMessage({ seq: m.seq, hex: hash.digest('hex') });
  } catch (err) {
    parentPort.postMessage({ seq: m.seq, error: String((err && err.message) || err) });
  }
});
`;

interface Reply {
  seq: number;
  hex?: string;
  error?: string;
}

/** The process's hash thread and the answers it owes. */
class HashThread {
  private worker?: Worker;
  private seq = 0;
  private readonly pending = new Map<number, { resolve(hex: string | undefined): void; reject(err: Error): void }>();

  ask(message: { op: 'update' | 'digest'; id: number; bytes?: Uint8Array }): Promise<string | undefined> {
    const worker = this.start();
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      // Pending answers keep the process alive (a download awaits them); an idle thread does not.
      if (this.pending.size === 1) worker.ref();
      const bytes = message.bytes;
      if (!bytes || bytes.buffer instanceof SharedArrayBuffer) return worker.postMessage({ ...message, seq });
      // A view of an ordinary buffer would be cloned with all of its backing store: send a copy of the view, moved.
      const copy = new Uint8Array(bytes);
      worker.postMessage({ ...message, bytes: copy, seq }, [copy.buffer]);
    });
  }

  drop(id: number): void {
    this.worker?.postMessage({ op: 'drop', id });
  }

  /** Starts the thread early, so its start-up overlaps the first request of a download. */
  start(): Worker {
    if (this.worker) return this.worker;
    // No inherited `execArgv`: the script is plain JavaScript, and a loader (tsx under tests and benchmarks)
    // would be started in the thread for nothing.
    const worker = new Worker(THREAD_SOURCE, { eval: true, name: 'longhaul archive hash', execArgv: [] });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.seq);
      this.pending.delete(reply.seq);
      if (this.pending.size === 0) worker.unref();
      if (reply.error !== undefined) waiter?.reject(new HashFailed(reply.error));
      else waiter?.resolve(reply.hex);
    });
    const lost = (err: Error) => {
      const failure = new HashFailed(err.message);
      if (this.worker !== worker) return;
      // Every hash it held is gone: their downloads fail (and resume from disk, re-hashing the prefix).
      this.worker = undefined;
      for (const waiter of this.pending.values()) waiter.reject(failure);
      this.pending.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`it exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }
}

const thread = new HashThread();
let nextId = 0;

/** A download's running SHA-256. */
export interface ArchiveHash extends BlockHash {
  digest(): Promise<string>;
  discard(): void;
}

/**
 * Whether downloads hash on the hash thread (`ThreadHash`) or on the calling thread (`InlineHash`): on the
 * thread when the process may use more than one core. With the sink's 1 MiB staging buffers, bench:download's
 * best runs at load average under 1.5 were 0.82–0.95× curl with the thread, against 0.75–0.79× without (at up
 * to 2.2), and the RSS growth stayed under 50 MB (40–45 MiB; with 4 MiB buffers the thread's ~10 MiB took it
 * to 57 MiB). See docs/benchmarks.md, "Archive download", round 7. On one core the thread cannot run beside
 * the socket reads: it would only add the hand-over to the same serial work.
 */
export function hashOnThread(cores: number = availableParallelism()): boolean {
  return cores > 1;
}

export function archiveHash(): ArchiveHash {
  return hashOnThread() ? new ThreadHash() : new InlineHash();
}

/** The SHA-256 on the calling thread, block by block as the sink hands them over. */
export class InlineHash implements ArchiveHash {
  private readonly hash = createHash('sha256');

  update(bytes: Buffer): void {
    this.hash.update(bytes);
  }

  digest(): Promise<string> {
    return Promise.resolve(this.hash.digest('hex'));
  }

  discard(): void {}
}

/** A SHA-256 computed on the hash thread; `digest` ends it. */
export class ThreadHash implements ArchiveHash {
  private readonly id = ++nextId;

  constructor() {
    thread.start();
  }

  /** Resolves once the thread has hashed `bytes` (until then they must not change). */
  async update(bytes: Buffer): Promise<void> {
    if (bytes.length > 0) await thread.ask({ op: 'update', id: this.id, bytes });
  }

  /** The hex digest of everything fed; the hash is finished afterwards. */
  async digest(): Promise<string> {
    return (await thread.ask({ op: 'digest', id: this.id }))!;
  }

  /** Forgets the state (the download restarts, or gave up). */
  discard(): void {
    thread.drop(this.id);
  }
}
