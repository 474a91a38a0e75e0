/**
 * Moved: the org-migration model is `./org-migration.ts`, poll bounds and the growth function are the kit's
 * (`src/workflows/kit/poll-schedule.ts`). Kept only until source import and the Google workflows import
 * from there (they are being moved onto the kit).
 */
import type { ResolvedPollBounds } from '../workflows/kit/poll-schedule';

export * from './org-migration';

/** @deprecated use the kit's `pollDelayMs` (the same growth, by poll number). */
export function nextPollInterval(currentMs: number, bounds: ResolvedPollBounds): number {
  return Math.min(bounds.maxIntervalMs, Math.round(currentMs * bounds.backoffFactor));
}
