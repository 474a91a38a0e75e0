/** When a run has to continue as new (the budget's policy and bounds are in `src/common/run-budget.ts`). */
import { workflowInfo } from '@temporalio/workflow';
import { MAX_EVENTS_PER_RUN, runBudgetSpent, type RunBudget } from '../../common/run-budget';

export { EventBudgetSchema, MAX_EVENTS_PER_RUN, MIN_EVENTS_PER_RUN, type RunBudget } from '../../common/run-budget';

/**
 * The one continue-as-new policy of every long-lived workflow: whether this run should continue as new now, given
 * its budget (`done`: the units of work it did). The workflow picks the safe point; this says when.
 */
export function mustContinueAsNew(budget: RunBudget, done?: number): boolean {
  const info = workflowInfo();
  return runBudgetSpent(budget, { historyLength: info.historyLength, continueAsNewSuggested: info.continueAsNewSuggested, done });
}

/** Whether this run should continue as new now: the server suggests it, or the event budget is reached. */
export function runBudgetReached(eventsPerRun = MAX_EVENTS_PER_RUN): boolean {
  return mustContinueAsNew({ events: eventsPerRun });
}
