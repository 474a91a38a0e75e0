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
/**
 * What one run of a long-lived workflow may do before it continues as new: the one policy every such workflow
 * names its limits in (`mustContinueAsNew` in the workflow kit decides). Each workflow keeps its own thresholds:
 * a run that continued as new at another point than its recorded history did would not replay.
 */
export interface RunBudget {
  /** History events a run may reach (never more than `MAX_EVENTS_PER_RUN`). */
  events?: number;
  /** Units of work (polls served, messages handled) a run does. */
  units?: number;
}

/** What the decision reads of the run: its history so far, the server's suggestion, the work it did. */
export interface RunFacts {
  historyLength: number;
  continueAsNewSuggested: boolean;
  done?: number;
}

/** Whether a run of `budget` must continue as new: the server suggests it, or the events or the work are spent. */
export function runBudgetSpent(budget: RunBudget, facts: RunFacts): boolean {
  if (facts.continueAsNewSuggested) return true;
  if (budget.events !== undefined && facts.historyLength >= Math.min(budget.events, MAX_EVENTS_PER_RUN)) return true;
  return budget.units !== undefined && (facts.done ?? 0) >= budget.units;
}

/** The smallest accepted budget (tests use tiny ones to exercise continue-as-new). */
export const MIN_EVENTS_PER_RUN = 50;

/** An input's per-run event budget (`eventsPerRun`). */
export const EventBudgetSchema = v.optional(wholeBetween(MIN_EVENTS_PER_RUN, MAX_EVENTS_PER_RUN, `must be an integer between ${MIN_EVENTS_PER_RUN} and ${MAX_EVENTS_PER_RUN}`));
