/** When a run has to continue as new (the budget's bounds are in `src/common/run-budget.ts`). */
import { workflowInfo } from '@temporalio/workflow';
import { MAX_EVENTS_PER_RUN } from '../../common/run-budget';

export { EventBudgetSchema, MAX_EVENTS_PER_RUN, MIN_EVENTS_PER_RUN } from '../../common/run-budget';

/** Whether this run should continue as new now: the server suggests it, or the budget is reached. */
export function runBudgetReached(eventsPerRun = MAX_EVENTS_PER_RUN): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= Math.min(eventsPerRun, MAX_EVENTS_PER_RUN);
}
