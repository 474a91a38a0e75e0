/**
 * Prints, after vitest's own summary:
 *   - the ten slowest test files with their wall time (from the file being queued to its end, imports and
 *     hooks included), so the suite's cost stays visible, then a warning for each file over its budget
 *     (`test/file-budgets.ts`: 60 s unless a file has a reason for more);
 *   - the largest history of any workflow run the suite started on the shared dev server (every user namespace),
 *     e.g. `largest history: 1234 events (orgMigration migrate-…; 812 runs looked at)`; a run over 10,000 events
 *     counts as one failed test (and says which);
 *   - the plain closing line CI reads: `N passed, N failed` (counts of tests).
 * Runs before global teardown, while the dev server is still up.
 */
import { relative } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { describeHistorySizes, historySizeReport } from '../src/temporal/history-stats';
import { budgetWarnings, filesOverBudget } from './file-budgets';

/** How many of the slowest files the summary lists. */
const SLOWEST_FILES = 10;

export default class SummaryReporter implements Reporter {
  private vitest?: Vitest;
  /** Per file: when it was queued (epoch ms), then its wall time (ms) once it ended. */
  private readonly queuedAt = new Map<string, number>();
  private readonly wallMs = new Map<string, number>();

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestModuleQueued(module: TestModule): void {
    this.queuedAt.set(module.moduleId, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const queued = this.queuedAt.get(module.moduleId);
    if (queued !== undefined) this.wallMs.set(module.moduleId, Date.now() - queued);
  }

  /** `slowest files (wall time):` and up to ten lines of `  123.4 s  test/…`. */
  private slowestFiles(): string {
    const root = this.vitest?.config.root ?? process.cwd();
    const slowest = [...this.wallMs].sort(([, a], [, b]) => b - a).slice(0, SLOWEST_FILES);
    if (slowest.length === 0) return '';
    const lines = slowest.map(([id, ms]) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(root, id)}`);
    return `\nslowest files (wall time):\n${lines.join('\n')}\n`;
  }

  /** A `warning:` line for each file that took longer than its budget. */
  private budgetWarnings(): string {
    const root = this.vitest?.config.root ?? process.cwd();
    return budgetWarnings(filesOverBudget([...this.wallMs].map(([id, wallMs]) => ({ file: relative(root, id), wallMs }))));
  }

  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file that failed to load has no tests but must count as a failure.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    process.stdout.write(this.slowestFiles());
    process.stdout.write(this.budgetWarnings());
    if (!(await this.historiesWithinBound())) {
      failed++;
      process.exitCode = 1;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }

  /** False when some run exceeded the bound; a server that cannot be asked is reported, not failed on. */
  private async historiesWithinBound(): Promise<boolean> {
    const address = this.vitest?.getProvidedContext().temporalAddress;
    if (!address) return true;
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ address, connectTimeout: '5s' });
      const report = await historySizeReport(new Client({ connection }));
      process.stdout.write(`\n${describeHistorySizes(report)}\n`);
      return report.overLimit.length === 0;
    } catch (err) {
      process.stdout.write(`\nlargest history: could not list the suite's workflow runs (${(err as Error).message})\n`);
      return true;
    } finally {
      await connection?.close();
    }
  }
}
