import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import matrix from './test/github-api-matrix.json';

/** What both projects share. */
const shared = {
  pool: 'forks' as const,
  // A guard against a hang, not a budget: a test's time is watched by the per-file budgets in the summary
  // (test/file-budgets.ts). At 120 s, three cli-lifecycle cases ran out of it beside a CPU load (issue 36).
  testTimeout: 600_000,
  hookTimeout: 600_000,
};

/**
 * The emulator workspace package as its source: its `main` picks the source only under tsx's loader. Given to
 * each project (a project written inline does not inherit the root's settings).
 */
const resolve = { alias: { '@longhaul/emulator': join(__dirname, 'packages', 'emulator', 'src', 'index.ts') } };

/** Unit files that touch process-wide state no other file may share (signals). */
const ISOLATED_UNIT_FILES = ['test/unit/stack-interrupt.test.ts'];

export default defineConfig({
  resolve,
  test: {
    // One real Temporal dev server per run, shared by every test file (started in global setup, here at the root so
    // that it starts once for both projects), plus one workflow bundle built once.
    globalSetup: ['test/global-setup.ts'],
    // Three forks on two cores: integration files mostly wait on timers, servers and processes. With two forks the
    // whole suite kept 0.62 of a core busy on average (user + sys 521 s over 842 s of wall time).
    maxWorkers: 3,
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      // Unit files share their fork's module graph (`isolate: false`): importing it again for each of ~90 files
      // was most of their cost. `npx vitest run test/unit` on the loaded 2-core machine: 161 s of CPU (user + sys)
      // isolated, 61 s shared, all 846 tests passing both ways.
      // A file that emits process signals runs isolated: in a shared fork, a signal reaches every listener an
      // earlier file left behind (stack-interrupt failed once on a SIGINT listener count another file had changed).
      { resolve, test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: [...ISOLATED_UNIT_FILES], isolate: false } },
      // Integration files stay isolated: they set process-wide state (environment variables, the Temporal runtime's
      // logger) that a file after them in the same fork would inherit.
      { resolve, test: { ...shared, name: 'integration', include: ['test/**/*.test.ts'], exclude: ['test/unit/**'] } },
      { resolve, test: { ...shared, name: 'unit-isolated', include: [...ISOLATED_UNIT_FILES] } },
      // The GitHub REST API matrix (issue 39): every GitHub-facing file runs under one version, alternated by file
      // (test/helpers/api-version.ts); the conformance suites run under 2022-11-28 above and under 2026-03-10 here.
      { resolve, test: { ...shared, name: 'github-2026-03-10', include: matrix.bothVersionFiles, env: { [matrix.env]: '2026-03-10' } } },
    ],
  },
});
