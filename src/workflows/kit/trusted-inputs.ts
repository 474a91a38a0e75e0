/**
 * Refusing what an input may no longer carry (an `env:`/`file:` credential reference, a sink's `secretEnv`, a
 * path outside the data directory) without breaking the runs that carry it already. A run started by an earlier
 * release replays its first workflow task, which scheduled work with that input; failing there instead would be a
 * non-determinism error that wedges the run. So the refusal is behind one `patched()` id: new runs refuse at
 * their first task, before any activity, and runs started before it go on, and meet the same rule in the activity
 * that would read or write (which refuses typed, never resolves).
 */
import { patched } from '@temporalio/workflow';

/** `patched()` id of the refusals at validation (every workflow type that has one uses it). */
export const TRUSTED_INPUTS_PATCH = 'trusted-inputs';

/**
 * Throws `refusal` when it is given and this run is new enough to refuse at validation. Call before the input's
 * validation, only when the input carries something to refuse (the marker is recorded only then).
 */
export function refuseUntrusted(refusal: Error | undefined): void {
  if (refusal !== undefined && patched(TRUSTED_INPUTS_PATCH)) throw refusal;
}
