/**
 * Waiting on a condition instead of a fixed sleep: probe, check, try again a little later, and fail with what was
 * last seen once a generous deadline has passed (the machine may be loaded; a test never judges by speed).
 */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * @format milliseconds — a deadline that only stops a hang: for waits on work whose pace is the machine's (scheduled
 * runs, a restarted worker's first tasks), which a loaded machine stretches far beyond a quiet one's seconds.
 */
export const HANG_GUARD_MS = 300_000;

/** Waits until `predicate` holds for what `probe` returns, checking every `everyMs`; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T> | T, predicate: (v: T) => boolean, timeoutMs = 60_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (predicate(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last value: ${JSON.stringify(v)?.slice(0, 500)})`);
    await sleep(everyMs);
  }
}

/**
 * Polls `probe` until it returns a value (not undefined; a throw counts as not yet, e.g. a workflow not queryable
 * before its first task), or fails after `timeoutMs`.
 */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const value = await waitFor(
    what,
    async () => {
      try {
        return await probe();
      } catch {
        return undefined;
      }
    },
    (v) => v !== undefined,
    timeoutMs,
    everyMs,
  );
  return value as T;
}
