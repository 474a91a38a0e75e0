import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // One real Temporal dev server per run, shared by every test file (started in global setup),
    // plus one workflow bundle built once.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: integration files run real workers; more than two forks only adds contention.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
