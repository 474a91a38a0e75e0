/**
 * Bounded histories: when a run has to continue as new. Every long wait checks between polls; the state the
 * process carries goes into its input (`resume`). The budget's bounds and its input check, shared by the models
 * and the workflow kit (`runBudgetReached` in `src/workflows/kit/run-budget.ts`).
 */
/**
 * Events one run may reach before it continues as new at the next safe point. The hard cap is 10,000 per run;
 * what comes after the check (the last poll, download, cleanup in batches) stays well under the margin.
 */
export const MAX_EVENTS_PER_RUN = 8_000;
/** The smallest accepted budget (tests use tiny ones to exercise continue-as-new). */
export const MIN_EVENTS_PER_RUN = 50;

/** Problems with an input's per-run event budget. */
export function eventBudgetProblems(value: unknown, name = 'eventsPerRun'): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_EVENTS_PER_RUN || value > MAX_EVENTS_PER_RUN) {
    return [`${name} must be an integer between ${MIN_EVENTS_PER_RUN} and ${MAX_EVENTS_PER_RUN}`];
  }
  return [];
}
