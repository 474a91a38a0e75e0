/**
 * Prints, after vitest's own summary:
 *   - the largest history of any workflow run the suite started on the shared dev server (every user namespace),
 *     e.g. `largest history: 1234 events (orgMigration migrate-…; 812 runs looked at)`; a run over 10,000 events
 *     counts as one failed test (and says which);
 *   - the plain closing line CI reads: `N passed, N failed` (counts of tests).
 * Runs before global teardown, while the dev server is still up.
 */
import { Client, Connection } from '@temporalio/client';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { describeHistorySizes, historySizeReport } from '../src/temporal/history-stats';

export default class SummaryReporter implements Reporter {
  private vitest?: Vitest;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
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
