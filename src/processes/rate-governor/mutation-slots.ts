/**
 * Mutation slots of the fleet rate governor (`model.ts`): instants (epoch ms, the governor's clock —
 * the Temporal server's) at which one mutation on the credential may reach the API.
 *
 * A worker sends at its slot, or up to `MUTATION_SLOT_TOLERANCE_MS` later; one that gets its answer later
 * than that lets the slot go and asks again, because the next slot (granted to anyone) may lie only
 * `spacing + tolerance + MUTATION_SEND_MARGIN_MS` after it, so a later send could reach the server closer than the configured
 * spacing to the next mutation. Workers' clocks are assumed NTP-synchronised.
 *
 * The answer to an `acquire` Update is dated by the governor's workflow task (its start), and reaches the
 * worker only after that task completed and the server relayed it: on a loaded machine that is easily
 * longer than a fixed lead plus the tolerance. A slot further out is re-checked (a gate Query) a fixed
 * time before it, and that Query is as slow. Both made every slot arrive too late: the worker re-asked
 * for ever and mutations starved while reads (no slot) kept flowing. So each worker measures how late its
 * answers arrive, asks for slots at least that far ahead (`leadMs`) and re-checks the gate that early.
 */

/** @format milliseconds — how late after its slot a mutation may still be sent. */
export const MUTATION_SLOT_TOLERANCE_MS = 250;
/**
 * @format milliseconds — added to every slot's spacing beyond the tolerance: between the worker's last check of its
 * slot and the request reaching the server lie the HTTP core's own steps (credentials, dispatch), which a loaded
 * machine stretches. With 50 ms, bench:fleet at load average 10 measured two mutations 999 ms apart.
 */
export const MUTATION_SEND_MARGIN_MS = 150;
/**
 * The least time between a slot and the one granted before it. After another worker's slot, that worker may
 * send up to the tolerance late and its request reach the API up to the send margin later still. After the
 * same worker's own slot only the send margin is needed: that worker releases a mutation no earlier than
 * `chainedReleaseAt` (its previous release plus spacing and margin), so its own lateness never narrows the
 * gap — and in one worker's long queue the tolerance would otherwise cost a quarter of every second.
 */
export function slotSpacingMs(spacingMs: number, sameHolder: boolean): number {
  // The margins only keep a spacing: with none configured (an emulator's benchmark of waiting), none is added.
  if (spacingMs <= 0) return 0;
  return spacingMs + MUTATION_SEND_MARGIN_MS + (sameHolder ? 0 : MUTATION_SLOT_TOLERANCE_MS);
}

/** The earliest a worker may release its next mutation after releasing one at `previousAt` (its own clock). */
export function chainedReleaseAt(previousAt: number, spacingMs: number): number {
  return spacingMs <= 0 ? previousAt : previousAt + spacingMs + MUTATION_SEND_MARGIN_MS;
}

/** @format milliseconds — the least lead: the earliest slot is this far ahead of the governor's clock. */
export const MUTATION_SLOT_LEAD_MS = 250;
/** @format milliseconds — the most lead a worker asks for (its answers arriving later than this is an outage). */
export const MAX_MUTATION_SLOT_LEAD_MS = 10_000;

/** @format milliseconds — the least time before a far slot its holder re-reads the gate (a Query). */
export const GATE_CHECK_AHEAD_MS = 400;

/** When, before its slot, a holder re-reads the gate: early enough for that Query's round trip (as slow as its answers). */
export function gateCheckAheadMs(lead: number): number {
  return Math.max(GATE_CHECK_AHEAD_MS, lead);
}

/** The lead the governor grants with: the asker's, within the least lead and half the longest slot wait. */
export function slotLeadFor(requested: number | undefined, maxSlotWaitMs: number): number {
  if (requested === undefined || !Number.isFinite(requested)) return MUTATION_SLOT_LEAD_MS;
  const most = Math.max(MUTATION_SLOT_LEAD_MS, Math.min(MAX_MUTATION_SLOT_LEAD_MS, maxSlotWaitMs / 2));
  return Math.min(most, Math.max(MUTATION_SLOT_LEAD_MS, Math.round(requested)));
}

/** Whether a mutation sent at `sendAt` (worker's clock) still keeps its slot's spacing (always, when none is configured). */
export function slotStillValid(slotAt: number, sendAt: number, spacingMs?: number): boolean {
  return (spacingMs !== undefined && spacingMs <= 0) || sendAt <= slotAt + MUTATION_SLOT_TOLERANCE_MS;
}

/**
 * The worker's next lead after an answer (or a gate check) that took `delayMs` to arrive: the delay plus
 * the least lead as margin; after a missed slot at least twice the lead that missed, so a worker under
 * growing load catches up in a few asks instead of missing for ever. It decays slowly when answers
 * come fast again, so one quick answer does not bring back the misses.
 */
export function nextSlotLead(lead: number, delayMs: number, missed: boolean): number {
  const needed = Math.max(0, delayMs) + MUTATION_SLOT_LEAD_MS;
  const next = missed ? Math.max(2 * lead, needed) : Math.max(needed, Math.round(lead * 0.8));
  return Math.min(MAX_MUTATION_SLOT_LEAD_MS, Math.max(MUTATION_SLOT_LEAD_MS, next));
}

/**
 * workerId → mutations (and content requests) refused at the worker's last ask, and until when they are
 * expected back. The window's budget is shared with reads, and a busy fleet's reads (feeds polled every
 * few seconds) are refused by the dozen at the budget's end and all return at the reset: they would take
 * the whole next window before the few refused mutations ask again, window after window. Reads leave
 * these mutations their share, so a mutation refused once gets the next budget.
 */
export type MutationsWaiting = Record<string, { count: number; until: number }>;
/** @format milliseconds — a hold outlives its retry time by this (the link's own jitter and a slow answer), then lapses. */
export const MUTATION_HOLD_GRACE_MS = 5_000;

/** Records a worker's refused mutations (`refused`, asking again by `retryAt`), or clears its hold once all were granted. */
export function holdForMutations(waiting: MutationsWaiting, workerId: string, refused: number, retryAt: number): void {
  if (refused > 0) waiting[workerId] = { count: refused, until: retryAt + MUTATION_HOLD_GRACE_MS };
  else delete waiting[workerId];
}

/** Permits reads must leave for refused mutations still expected back (lapsed holds are dropped). */
export function heldForMutations(waiting: MutationsWaiting, now: number): number {
  let held = 0;
  for (const [id, w] of Object.entries(waiting)) {
    if (w.until < now) delete waiting[id];
    else held += w.count;
  }
  return held;
}

/** The earliest time ≥ `at` when one more content-creating request stays within both allowances (`times`: content slots granted). */
export function contentFreeAt(times: number[], perMinute: number, perHour: number, at: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let t = at;
  const inMinute = sorted.filter((x) => x > t - 60_000);
  if (inMinute.length >= perMinute) t = Math.max(t, inMinute[inMinute.length - perMinute] + 60_000);
  const inHour = sorted.filter((x) => x > t - 3_600_000);
  if (inHour.length >= perHour) t = Math.max(t, inHour[inHour.length - perHour] + 3_600_000);
  return t;
}
