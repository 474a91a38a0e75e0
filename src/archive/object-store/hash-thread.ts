/**
 * The SHA-256s of an upload, on a thread of its own: the whole archive's running hash (hash-wasm, whose state a
 * checkpoint carries) and each part's own SHA-256 (OpenSSL, for the store's per-part checksum and the request
 * signature). On the main thread they took most of an upload's CPU (bench:archive-store's profile: 0.9 s of
 * hash-wasm and 0.55 s of OpenSSL per 256 MiB) and stopped the sockets while they ran.
 *
 * Parts backed by a `SharedArrayBuffer` reach the thread without a copy. Updates are applied in the order they
 * are sent. One thread per upload, ended with it.
 */
import { Worker } from 'node:worker_threads';

/** Plain JavaScript, evaluated as the thread's script, so it runs the same under tsx, vitest and `dist/`. */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { createSHA256 } = require(workerData.hashWasm);
const ready = createSHA256().then((h) => {
  if (workerData.state) h.load(workerData.state);
  else h.init();
  return h;
});
let queue = ready;
parentPort.on('message', (m) => {
  queue = queue.then((h) => {
    try {
      if (m.op === 'digest') return parentPort.postMessage({ seq: m.seq, digest: h.digest('hex') });
      h.update(m.bytes);
      const part = m.part ? createHash('sha256').update(m.bytes).digest() : undefined;
      parentPort.postMessage({ seq: m.seq, state: h.save(), part });
    } catch (err) {
      parentPort.postMessage({ seq: m.seq, error: String((err && err.message) || err) });
    }
    return h;
  });
});
`;

interface Reply {
  seq: number;
  state?: Uint8Array;
  part?: Uint8Array;
  digest?: string;
  error?: string;
}

export interface Hashed {
  /** The running hash's state after these bytes (hash-wasm `save()`). */
  state: Uint8Array;
  /** These bytes' own SHA-256, when asked for. */
  part?: Buffer;
}

export class HashThread {
  private readonly worker: Worker;
  private seq = 0;
  private readonly pending = new Map<number, { resolve(reply: Reply): void; reject(err: Error): void }>();

  /** A thread whose running hash starts empty, or from `state` (a checkpoint's). */
  constructor(state?: Uint8Array) {
    // No inherited `execArgv`: the script is plain JavaScript, a loader (tsx) would start in the thread for nothing.
    this.worker = new Worker(THREAD_SOURCE, { eval: true, name: 'longhaul upload hash', execArgv: [], workerData: { hashWasm: require.resolve('hash-wasm'), state } });
    this.worker.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.seq);
      this.pending.delete(reply.seq);
      if (reply.error !== undefined) waiter?.reject(new Error(`hash thread: ${reply.error}`));
      else waiter?.resolve(reply);
    });
    const lost = (err: Error) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`the hash thread failed: ${err.message}`));
      this.pending.clear();
    };
    this.worker.on('error', lost);
    this.worker.on('exit', (code) => lost(new Error(`it exited with code ${code}`)));
  }

  private ask(message: Record<string, unknown>, transfer?: ArrayBuffer[]): Promise<Reply> {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.worker.postMessage({ ...message, seq }, transfer ?? []);
    });
  }

  /** Adds `bytes` to the running hash (after everything sent before); with `part`, also their own SHA-256. */
  async update(bytes: Uint8Array, part = false): Promise<Hashed> {
    let sent = bytes;
    let transfer: ArrayBuffer[] | undefined;
    // A view of an ordinary buffer would be cloned with all of its backing store: send a copy of the view, moved.
    if (!(bytes.buffer instanceof SharedArrayBuffer)) {
      const copy = new Uint8Array(bytes);
      sent = copy;
      transfer = [copy.buffer];
    }
    const reply = await this.ask({ op: 'update', bytes: sent, part }, transfer);
    return { state: reply.state!, part: reply.part && Buffer.from(reply.part.buffer, reply.part.byteOffset, reply.part.byteLength) };
  }

  /** The SHA-256 (hex) of everything added. */
  async digest(): Promise<string> {
    return (await this.ask({ op: 'digest' })).digest!;
  }

  end(): Promise<number> {
    return this.worker.terminate();
  }
}
