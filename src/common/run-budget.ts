/**
 * Bounded histories: when a run has to continue as new. Every long wait checks between polls; the state the
 * process carries goes into its input (`resume`). The budget's bounds and its input check, shared by the models
 * and the workflow kit (`runBudgetReached` in `src/workflows/kit/run-budget.ts`).
 */
import * as v from 'valibot';
import { wholeBetween } from './schema';

/**
 * Events one run may reach before it continues as new at the next safe point. The hard cap is 10,000 per run;
 * what comes after the check (the last poll, download, cleanup in batches) stays well under the margin.
 */
export const MAX_EVENTS_PER_RUN = 8_000;
/** The smallest accepted budget (tests use tiny ones to exercise continue-as-new). */
export const MIN_EVENTS_PER_RUN = 50;

/** An input's per-run event budget (`eventsPerRun`). */
export const EventBudgetSchema = v.optional(wholeBetween(MIN_EVENTS_PER_RUN, MAX_EVENTS_PER_RUN, `must be an integer between ${MIN_EVENTS_PER_RUN} and ${MAX_EVENTS_PER_RUN}`));
