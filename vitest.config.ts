import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The emulator workspace package as its source: its `main` picks the source only under tsx's loader.
  resolve: { alias: { '@longhaul/emulator': join(__dirname, 'packages', 'emulator', 'src', 'index.ts') } },
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // One real Temporal dev server per run, shared by every test file (started in global setup),
    // plus one workflow bundle built once.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Three forks on two cores: integration files mostly wait on timers, servers and processes. With two forks the
    // whole suite kept 0.62 of a core busy on average (user + sys 521 s over 842 s of wall time).
    maxWorkers: 3,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
