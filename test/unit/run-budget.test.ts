/**
 * The one continue-as-new policy (`runBudgetSpent`, read by the kit's `mustContinueAsNew`): each workflow's own
 * thresholds decide as they did before (the recorded histories in test/replay depend on them).
 */
import { describe, expect, it } from 'vitest';
import { MAX_EVENTS_PER_RUN, runBudgetSpent } from '../../src/common/run-budget';
import { HOOK_RUN_EVENT_BUDGET } from '../../src/processes/hook-repair/model';
import { OPERATION_RUN_BUDGET } from '../../src/processes/google-operation/model';

const run = (historyLength: number, done?: number, continueAsNewSuggested = false) => ({ historyLength, continueAsNewSuggested, done });

describe('the run budget', () => {
  it('continues as new when the server suggests it, whatever the budget', () => {
    expect(runBudgetSpent({ events: 8_000 }, run(10, 0, true))).toBe(true);
    expect(runBudgetSpent({ units: 20 }, run(10, 0, true))).toBe(true);
  });

  it('an event budget: at its length, capped at MAX_EVENTS_PER_RUN (the kit run budget, hook repair)', () => {
    expect(runBudgetSpent({ events: 50 }, run(49))).toBe(false);
    expect(runBudgetSpent({ events: 50 }, run(50))).toBe(true);
    expect(runBudgetSpent({ events: 20_000 }, run(MAX_EVENTS_PER_RUN))).toBe(true);
    expect(runBudgetSpent({ events: HOOK_RUN_EVENT_BUDGET }, run(7_999))).toBe(false);
    expect(runBudgetSpent({ events: HOOK_RUN_EVENT_BUDGET }, run(8_000))).toBe(true);
  });

  it('a budget of work: after that many units (the feed cursor polls, the governor messages), whatever the history', () => {
    expect(runBudgetSpent({ units: 20 }, run(9_999, 19))).toBe(false);
    expect(runBudgetSpent({ units: 20 }, run(1, 20))).toBe(true);
    expect(runBudgetSpent({ units: 400 }, run(1, 400))).toBe(true);
  });

  it("keeps each workflow's threshold", () => {
    expect(HOOK_RUN_EVENT_BUDGET).toBe(8_000);
    expect(OPERATION_RUN_BUDGET.events).toBe(MAX_EVENTS_PER_RUN);
    expect(MAX_EVENTS_PER_RUN).toBe(8_000);
  });
});
