/**
 * The emulator's data directory: one JSON file (`emulator-state.json`) holding every durable part's
 * snapshot (each module's state, the storage origin's objects), loaded when the emulator is built and
 * rewritten after requests.
 *
 * - A write goes to a temporary file that is then renamed over the old one: a process killed at any moment
 *   (SIGKILL included) leaves either the previous complete file or the new one, never a torn one.
 * - A request that may change state (POST, PUT, PATCH, DELETE) is answered only once a write that includes
 *   its change is on disk. A read (GET) can also move state on (lazy state machines, feed events), so it
 *   schedules a write within `readDelayMs` (100 ms by default): a kill inside that window forgets only what
 *   the emulator's clock will reproduce or what a client would see again as new events.
 * - Writes never overlap: changes made while one is being written are taken by the next, which every waiter
 *   since shares (one write for a burst of requests).
 * - A file that cannot be read back (not JSON, another format, a part that does not restore) is an
 *   `EmulatorStateError` naming the file: the emulator does not start, and nothing is overwritten, rather
 *   than silently starting empty while a workflow expects its migration.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Durable } from './durable';
import { decodeState, encodeState } from './codec';

export const STATE_FILE = 'emulator-state.json';
const FORMAT = 1;

export class EmulatorStateError extends Error {
  override readonly name = 'EmulatorStateError';
}

export interface StateStoreOptions {
  /** How soon a change made by a read reaches the disk. @format milliseconds */
  readDelayMs?: number;
  log?: (message: string) => void;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class StateStore {
  readonly file: string;
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private queued?: Promise<void>;
  private readonly readDelayMs: number;
  private readonly log: (message: string) => void;
  /** Completed writes (tests wait on this). */
  writes = 0;

  constructor(
    readonly dir: string,
    /** Every durable part by name (each module's state, the storage origin), read at each save. */
    readonly parts: () => Record<string, Durable>,
    options: StateStoreOptions = {},
  ) {
    this.file = join(dir, STATE_FILE);
    this.readDelayMs = options.readDelayMs ?? 100;
    this.log = options.log ?? ((m) => console.error(m));
  }

  /** Restores every part saved in the file (parts it does not know are ignored). Returns whether a file was there. */
  load(): boolean {
    if (!existsSync(this.file)) return false;
    const fail = (reason: string): never => {
      throw new EmulatorStateError(`emulator state ${this.file} cannot be restored: ${reason}. Move the file away to start the emulator with fresh state.`);
    };
    let saved: { format?: unknown; parts?: unknown };
    try {
      saved = JSON.parse(readFileSync(this.file, 'utf8')) as typeof saved;
    } catch (err) {
      return fail(`it is not valid JSON (${(err as Error).message})`);
    }
    if (typeof saved !== 'object' || saved === null || saved.format !== FORMAT) return fail(`it is not format ${FORMAT} emulator state`);
    if (typeof saved.parts !== 'object' || saved.parts === null) return fail('it has no parts');
    const parts = this.parts();
    for (const [name, json] of Object.entries(saved.parts as Record<string, unknown>)) {
      const part = parts[name];
      if (!part) continue;
      try {
        part.restore(decodeState(json));
      } catch (err) {
        fail(`part '${name}' does not restore (${(err as Error).message})`);
      }
    }
    return true;
  }

  /** After a request: a possible change is on disk before a mutating request's answer, soon after a read's. */
  async afterRequest(method: string): Promise<void> {
    if (MUTATING.has(method)) await this.flush();
    else this.markDirty();
  }

  /** Schedules a write within the read delay (no-op when one is scheduled). */
  markDirty(): void {
    this.timer ??= setTimeout(() => void this.flush(), this.readDelayMs);
  }

  /** Resolves once a write started after this call finished (shared by every caller until it starts). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.queued ??= this.writing.then(() => {
      this.queued = undefined;
      this.writing = this.write();
      return this.writing;
    });
    return this.queued;
  }

  /** Writes the current snapshot of every part (errors are logged: the emulator keeps serving). */
  private async write(): Promise<void> {
    const temp = `${this.file}.tmp`;
    try {
      const parts: Record<string, unknown> = {};
      for (const [name, part] of Object.entries(this.parts())) parts[name] = encodeState(part.snapshot());
      const text = JSON.stringify({ format: FORMAT, savedAt: new Date().toISOString(), parts });
      await mkdir(this.dir, { recursive: true });
      await writeFile(temp, text);
      await rename(temp, this.file);
      this.writes++;
    } catch (err) {
      this.log(`[emulator] could not save state to ${this.file}: ${(err as Error).message}`);
      await rm(temp, { force: true }).catch(() => undefined);
    }
  }
}
