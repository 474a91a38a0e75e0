import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // One real Temporal dev server per run, shared by every test file (started in global setup),
    // plus one workflow bundle built once.
    globalSetup: ['test/global-setup.ts'],
    // A guard against a hang, not a budget: a test's time is watched by the per-file budgets in the summary
    // (test/file-budgets.ts). At 120 s, three cli-lifecycle cases ran out of it beside a CPU load (issue 36).
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Three forks on two cores: integration files mostly wait on timers, servers and processes. With two forks the
    // whole suite kept 0.62 of a core busy on average (user + sys 521 s over 842 s of wall time).
    maxWorkers: 3,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
