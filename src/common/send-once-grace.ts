/**
 * The send-once grace (pure, shared by the kit's `sendOnce`, the process models' validation and the CLI): after
 * a mutating call whose outcome is unknown, how long the lookups for what it did go on before it is sent again.
 */
import * as v from 'valibot';
import { msBetween } from './schema';

/** The default send-once grace for a call with this start-to-close timeout: twice the call plus the server's cutoff. */
export function defaultSendOnceGraceMs(callTimeoutMs: number): number {
  return 2 * callTimeoutMs + 60_000;
}

/**
 * The send-once grace as every process takes it in its input (`sendOnceGraceMs`), from 1 s to `maxMs`. Inputs
 * written before it had one name gave it under their process's own (`startGraceMs` of org migrations,
 * `recoveryGraceMs` of Google operations): that name is still read with the same schema, `sendOnceGraceMs`
 * first, and an input giving both is refused (`notBoth`).
 */
export function sendOnceGraceSchema(maxMs: number) {
  return v.optional(msBetween(1_000, maxMs, `must be a number of milliseconds between 1000 and ${maxMs}`));
}
