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

/**
 * Integration files that cannot share a fork, each with its reason. Every other integration file shares one
 * (`isolate: false`); `test/helpers/shared-fork.ts` puts the environment back after each file.
 */
const ISOLATED_INTEGRATION_FILES = [
  // Installs the Temporal runtime itself, with the SDK core's warnings filtered out (its wedged worker fails workflow
  // tasks on purpose): once per process, so in a shared fork either its install throws (a runtime is already there)
  // or it wins and later files lose `quietRuntime`'s record of what was logged (`runtimeLog`).
  'test/integration/namespace-check.test.ts',
];

/** Files of a project that share their forks: the environment put back after each (see ISOLATED_INTEGRATION_FILES). */
const sharedFork = { isolate: false, setupFiles: ['test/helpers/shared-fork.ts'] };

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
      // Integration files share their forks too, but for ISOLATED_INTEGRATION_FILES (issue 36): each isolated file
      // imported @temporalio/worker, the storage SDKs and src/ again in a fresh process. 26 light integration files,
      // `/usr/bin/time npx vitest run --project integration <files>` on the shared 2-core machine: isolated 248 s of
      // CPU (user + sys), 258 s wall, vitest's import 124 s (load 3.6 -> 9.3); shared 183 s, 222 s, 35 s (load
      // 9.2 -> 12.3); 145 of 145 passed both ways.
      {
        resolve,
        test: { ...shared, ...sharedFork, name: 'integration', include: ['test/**/*.test.ts'], exclude: ['test/unit/**', ...ISOLATED_INTEGRATION_FILES] },
      },
      { resolve, test: { ...shared, name: 'integration-isolated', include: [...ISOLATED_INTEGRATION_FILES] } },
      { resolve, test: { ...shared, name: 'unit-isolated', include: [...ISOLATED_UNIT_FILES] } },
      // The GitHub REST API matrix (issue 39): every GitHub-facing file runs under one version, alternated by file
      // (test/helpers/api-version.ts); the conformance suites run under 2022-11-28 above and under 2026-03-10 here.
      // Its own forks (vitest reuses a fork only within its project), so its version never reaches another file.
      { resolve, test: { ...shared, ...sharedFork, name: 'github-2026-03-10', include: matrix.bothVersionFiles, env: { [matrix.env]: '2026-03-10' } } },
    ],
  },
});
