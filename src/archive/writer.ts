/**
 * The archive's blocks written to the `.part` file on a thread of its own, each in 16 KiB pieces, one after
 * the other, in the order they were handed over: what is on disk is always a prefix of the object (a resume
 * trusts the file's length), also after a SIGKILL in the middle of a block.
 *
 * Why not `fs.write` of the whole 1 MiB block from libuv's pool: on the development VM (whose kernel hands
 * free memory in 2 MiB blocks and up back to the host: virtio-balloon free page reporting) the write size
 * decided the cost of copying into the page cache, most likely because a large write fills large page-cache
 * folios from memory the host has to back again. bench:download took 2.1–2.5 s per GiB with 1 MiB writes,
 * 1.8–2.3 s of it system time (`perf`: in `copy_folio_from_iter_atomic`), while 1.1–1.5 GiB were reported to
 * the host during the rounds; curl, writing 4–12 KiB at a time, took 0.9–1.0 s. 128 KiB writes issued at once
 * from the pool came out at 0.5–0.9× curl from run to run (and may land out of order); 16 KiB pieces on this
 * thread: 0.93–1.59 s, the median of a run within 0.9× of curl in four runs of seven (docs/benchmarks.md).
 * Why a thread: written with `writeSync` on the main thread, the pieces would stop the socket reads and every
 * other activity of the worker while they run.
 *
 * Blocks backed by a `SharedArrayBuffer` (the sink's staging buffers) reach the thread without a copy. One
 * thread serves every download of the process; it is started on first use and does not keep the process
 * alive while no write is pending. Whether downloads use it is `writeOnThread`.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** Bytes per `write` call on the thread. */
export const WRITE_PIECE_BYTES = 16 * 1024;

/** Writing a block failed: the file's error (e.g. ENOSPC), or the write thread is gone. */
export class BlockWriteFailed extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'BlockWriteFailed';
  }
}

/** Plain JavaScript: evaluated as the worker's script, so it runs the same under tsx, vitest and `dist/`. */
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { writeSync } = require('node:fs');
// Writers whose write failed: their later blocks are not written (the file stays a prefix of the object).
const failed = new Set();
parentPort.on('message', (m) => {
  if (m.op === 'end') return void failed.delete(m.id);
  if (failed.has(m.id)) return void parentPort.postMessage({ seq: m.seq, error: 'an earlier block could not be written' });
  try {
    for (let at = 0; at < m.bytes.length; ) at += writeSync(m.fd, m.bytes, at, Math.min(${WRITE_PIECE_BYTES}, m.bytes.length - at), m.position + at);
    parentPort.postMessage({ seq: m.seq });
  } catch (err) {
    failed.add(m.id);
    parentPort.postMessage({ seq: m.seq, error: String((err && err.message) || err), code: err && err.code });
  }
});
`;

interface Reply {
  seq: number;
  error?: string;
  code?: string;
}

/** The process's write thread and the answers it owes. */
class WriteThread {
  private worker?: Worker;
  private seq = 0;
  private readonly pending = new Map<number, { resolve(): void; reject(err: Error): void }>();

  write(id: number, bytes: Uint8Array, fd: number, position: number): Promise<void> {
    const worker = this.start();
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      // Pending writes keep the process alive (a download awaits them); an idle thread does not.
      if (this.pending.size === 1) worker.ref();
      if (bytes.buffer instanceof SharedArrayBuffer) return worker.postMessage({ id, seq, bytes, fd, position });
      // A view of an ordinary buffer would be cloned with all of its backing store: send a copy of the view, moved.
      const copy = new Uint8Array(bytes);
      worker.postMessage({ id, seq, bytes: copy, fd, position }, [copy.buffer]);
    });
  }

  end(id: number): void {
    this.worker?.postMessage({ op: 'end', id });
  }

  /** Starts the thread early, so its start-up overlaps the first request of a download. */
  start(): Worker {
    if (this.worker) return this.worker;
    // No inherited `execArgv`: the script is plain JavaScript, and a loader (tsx under tests and benchmarks)
    // would be started in the thread for nothing.
    const worker = new Worker(THREAD_SOURCE, { eval: true, name: 'longhaul archive write', execArgv: [] });
    worker.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.seq);
      this.pending.delete(reply.seq);
      if (this.pending.size === 0) worker.unref();
      if (reply.error !== undefined) waiter?.reject(new BlockWriteFailed(reply.error, reply.code));
      else waiter?.resolve();
    });
    const lost = (err: Error) => {
      if (this.worker !== worker) return;
      // Every write it held is lost: their downloads fail (and resume from what is on disk).
      this.worker = undefined;
      const failure = new BlockWriteFailed(`the write thread failed: ${err.message}`);
      for (const waiter of this.pending.values()) waiter.reject(failure);
      this.pending.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`it exited with code ${code}`)));
    // After the listeners: adding a 'message' listener refs the worker again.
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

const thread = new WriteThread();
let nextId = 0;

/** One download's writes on the write thread. */
export class BlockWriter {
  private readonly id = ++nextId;

  constructor() {
    thread.start();
  }

  /**
   * Writes `bytes` to the open file `fd` at `position`, after every block handed over before (`bytes` stay
   * untouched until it settles). After a failed block, later ones fail too, unwritten.
   */
  write(bytes: Uint8Array, fd: number, position: number): Promise<void> {
    return bytes.length === 0 ? Promise.resolve() : thread.write(this.id, bytes, fd, position);
  }

  /** Forgets this writer's state on the thread. */
  end(): void {
    thread.end(this.id);
  }
}

/**
 * Whether downloads write on the write thread (`BlockWriter`) or with `fs.write` from libuv's pool: on the
 * thread when the process may use more than one core. On one core the thread cannot run beside the socket
 * reads and the hash: it would only add the hand-over to the same serial work.
 */
export function writeOnThread(cores: number = availableParallelism()): boolean {
  return cores > 1;
}
