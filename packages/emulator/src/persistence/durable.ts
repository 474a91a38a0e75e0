/**
 * What of a module's state survives a restart. `snapshot` returns the live state as data (Maps, Sets,
 * arrays, plain objects, Buffers; an object reached twice comes back as one object, see
 * `persistence/codec.ts`), never a function or class instance; `restore` puts a decoded snapshot back
 * (`refill` replaces a container's contents in place). Times are absolute emulator-clock times, so an export
 * that had 3 s left when the emulator stopped is done 3 s after it restarts, or already done.
 */
export interface Durable<Saved = any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  snapshot(): Saved;
  restore(saved: Saved): void;
}
