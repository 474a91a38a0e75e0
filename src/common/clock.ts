/**
 * The one shape of an injected clock, for every part of longhaul that reads the time outside a workflow (the HTTP
 * core, the rate-limit gate, the governor link, activities, the archive module): a function of no arguments that
 * returns epoch milliseconds. Where something also waits on that clock (an archive upload waiting out a failing
 * store), the wait is a `Sleep` beside it, not a second kind of clock: a test's clock that a time-skipping server
 * cannot skip (it skips no time while an activity runs) is advanced by the wait instead. Workflows read
 * `Date.now()`, which the SDK makes deterministic.
 */
export type Clock = () => number;

/** Resolves after `ms` on its clock; rejects with the signal's reason when `signal` aborts. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** The wall clock. */
export const WALL_CLOCK: Clock = () => Date.now();
