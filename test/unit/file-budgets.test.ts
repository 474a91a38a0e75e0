import { describe, expect, it } from 'vitest';
import { budgetWarnings, DEFAULT_FILE_BUDGET_S, filesOverBudget } from '../file-budgets';

describe('per-file time budgets in the suite summary', () => {
  it('warns about each file over its budget, slowest first, with the figure and the budget', () => {
    const times = [
      { file: 'test/integration/a.test.ts', wallMs: 59_999 },
      { file: 'test/integration/b.test.ts', wallMs: 61_000 },
      { file: 'test/integration/c.test.ts', wallMs: 95_400 },
      { file: 'test/upgrade/upgrade.test.ts', wallMs: 110_000 },
    ];
    const budgets = { 'test/upgrade/upgrade.test.ts': { seconds: 120, why: 'starts the previous release' } };
    const over = filesOverBudget(times, budgets);
    expect(over.map((o) => [o.file, o.budgetS])).toEqual([
      ['test/integration/c.test.ts', DEFAULT_FILE_BUDGET_S],
      ['test/integration/b.test.ts', DEFAULT_FILE_BUDGET_S],
    ]);
    expect(budgetWarnings(over)).toBe(
      '\nwarning: test/integration/c.test.ts took 95.4 s, over its budget of 60 s\n' +
        'warning: test/integration/b.test.ts took 61.0 s, over its budget of 60 s\n' +
        '(budgets: test/file-budgets.ts)\n',
    );
  });

  it('says nothing when every file is within its budget', () => {
    expect(budgetWarnings(filesOverBudget([{ file: 'test/unit/x.test.ts', wallMs: 1_200 }]))).toBe('');
  });
});
