/**
 * "Waiting on the shared limit of <credential> until <time>": how a request held back by the fleet's rate
 * governor shows up outside the worker.
 *
 * Where it is recorded (chosen so the workflow code and its history stay untouched — the wait happens
 * inside an activity attempt, which the workflow cannot observe until the activity returns):
 * - a short wait (held on the worker): the waiting activity's heartbeat details `{ sharedLimitWait }`, visible
 *   in the UI's pending activity and in `describe()` — only for activities that do not heartbeat for
 *   themselves (no heartbeat timeout), whose details (a download's resume point) must not be overwritten;
 * - a long wait (the attempt fails so Temporal's retry timer waits): the pending activity's last failure,
 *   whose message is this same line and whose next attempt is scheduled at the end of the wait.
 * The CLI's `--follow` line reads both from the workflow's pending activities (`sharedWaitOf`).
 */

export interface SharedLimitWait {
  credential: string;
  /** ISO time the shared gate opens (jitter included). */
  until: string;
  reason: string;
}

export function sharedWaitLine(w: Pick<SharedLimitWait, 'credential' | 'until'>): string {
  return `waiting on the shared limit of ${w.credential} until ${w.until}`;
}

const LINE = /waiting on the shared limit of (\S+) until (\S+)(?: \((.*)\))?/;

/** What a pending activity shows: decoded heartbeat details and last failure message. */
export interface PendingActivityView {
  heartbeat?: unknown;
  lastFailureMessage?: string;
}

/** The first shared-limit wait among a workflow's pending activities, if any is waiting (at `nowMs`). */
export function sharedWaitOf(pending: readonly PendingActivityView[], nowMs: number): SharedLimitWait | undefined {
  for (const p of pending) {
    const hb = (p.heartbeat as { sharedLimitWait?: SharedLimitWait } | undefined)?.sharedLimitWait;
    if (hb && Date.parse(hb.until) > nowMs) return hb;
    const m = p.lastFailureMessage ? LINE.exec(p.lastFailureMessage) : null;
    if (m && Date.parse(m[2]) > nowMs) return { credential: m[1], until: m[2], reason: m[3] ?? '' };
  }
  return undefined;
}
