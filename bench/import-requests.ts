/**
 * `npm run bench:imports` — how many API requests one full source import takes: the workflow at its
 * default poll bounds against a fixed 10-second poller, on an import that takes 10 minutes.
 *
 *   npm run bench:imports                       # exact: real time, about 20 minutes
 *   npm run bench:imports -- --scale 0.1        # a quick look (counts drift low, see below)
 *
 * Both runs use the real workflow, a real worker and the emulator. `--scale` multiplies every emulator
 * step and every poll bound (0.1 turns 10 minutes into 1 and a 2 s first poll into 200 ms). The
 * workflow anchors poll times to its schedule, so request latency does not stretch it; but the dev
 * server fires timers with about 1 s of granularity, so scaled runs with sub-second intervals poll
 * less often than the schedule says. The poll count is also computed from the schedule
 * (the kit's `pollScheduleMs`) for comparison.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { startDevServer } from '../src/temporal/dev-server';
import { startEmulator } from '@longhaul/emulator';
import { writeWorkflowBundle } from '../src/bundle';
import { defaultGithubFixture } from '../packages/emulator/src/github/fixture';
import { createGithubClient } from '../src/http/github';
import { activityDepsFromConfig, createLonghaulWorker } from '../src/worker';
import { loadConfig } from '../src/config';
import { DEFAULT_POLL, type PollBounds } from '../src/processes/org-migration/model';
import { pollScheduleMs, type ResolvedPollBounds } from '../src/common/poll-schedule';
import type { SourceImportInput, SourceImportResult } from '../src/processes/source-import/model';
import { sourceImport } from '../src/processes/source-import/workflow';
import { describeHistorySizes, historySizeReport } from '../src/temporal/history-stats';

interface Options {
  minutes: number;
  scale: number;
  fixedSeconds: number;
}

const program = new Command()
  .option('--minutes <n>', 'how long the import takes on the server (unscaled)', Number, 10)
  .option('--scale <f>', 'time scale for the emulator and the poll bounds (1 = real time)', Number, 1)
  .option('--fixed-seconds <n>', 'interval of the fixed poller to compare with (unscaled)', Number, 10);

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  const totalMs = o.minutes * 60_000;
  // Step split of the import: 5 % detecting, 60 % importing, 15 % mapping, 20 % pushing.
  const steps = { detectingMs: totalMs * 0.05, importingMs: totalMs * 0.6, mappingMs: totalMs * 0.15, pushingMs: totalMs * 0.2 };
  const fixture = defaultGithubFixture();
  for (const name of ['bench-default', 'bench-fixed']) fixture.repositories.push({ id: 9000 + fixture.repositories.length, name, owner: 'octo-org', private: false, workflowsEnabled: false });
  const emulator = await startEmulator({ fixture, imports: { ...steps, timeScale: o.scale } });

  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startDevServer({ port: 0, uiPort: false, log: () => undefined });
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-bench-imports-'));
  const bundlePath = await writeWorkflowBundle(join(dataDir, 'workflow-bundle.js'));
  const taskQueue = `bench-imports-${Date.now()}`;
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const worker = await createLonghaulWorker({
    connection: workerConnection,
    namespace: server.namespace,
    taskQueue,
    deps: activityDepsFromConfig(loadConfig({ GITHUB_API_URL: emulator.apiUrl, LONGHAUL_DATA_DIR: dataDir }), {
      github: createGithubClient({ baseUrl: emulator.apiUrl, token: () => 'bench-token' }),
    }),
    workflowBundle: { codePath: bundlePath },
  });
  const running = worker.run();
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });

  const scaled = (b: ResolvedPollBounds): PollBounds => ({
    initialIntervalMs: b.initialIntervalMs * o.scale,
    maxIntervalMs: b.maxIntervalMs * o.scale,
    backoffFactor: b.backoffFactor,
    elapsedFraction: b.elapsedFraction ?? 0,
  });
  const fixed: ResolvedPollBounds = { ...DEFAULT_POLL, elapsedFraction: 0, initialIntervalMs: o.fixedSeconds * 1000, maxIntervalMs: o.fixedSeconds * 1000, backoffFactor: 1 };
  const runs = [
    { label: `default bounds (${DEFAULT_POLL.initialIntervalMs / 1000} s, then ${(DEFAULT_POLL.elapsedFraction ?? 0) * 100} % of the wait, ≤ ${DEFAULT_POLL.maxIntervalMs / 1000} s)`, repo: 'bench-default', bounds: DEFAULT_POLL },
    { label: `fixed ${o.fixedSeconds} s poller`, repo: 'bench-fixed', bounds: fixed },
  ];
  console.log(`bench: one ${o.minutes}-minute import (scenario happy, no vcs so detection runs, 4 authors mapped), time scale ${o.scale}`);
  for (const run of runs) {
    emulator.resetStats();
    const input: SourceImportInput = {
      owner: 'octo-org',
      repo: run.repo,
      vcsUrl: 'https://svn.example.test/repos/happy',
      authors: ['alice', 'bob', 'carol', 'dave'].map((remote) => ({ remote, name: remote.toUpperCase(), email: `${remote}@example.com` })),
      poll: scaled(run.bounds),
    };
    const result = (await client.workflow.execute(sourceImport, { taskQueue, workflowId: `${taskQueue}-${run.repo}`, args: [input] })) as SourceImportResult;
    const computed = pollScheduleMs({ ...run.bounds, timeoutMs: Number.POSITIVE_INFINITY }, totalMs).length;
    const byRoute = emulator.stats.byRoute;
    const gets = byRoute['GET /repos/:owner/:repo/import'] ?? 0;
    console.log(`\n${run.label}`);
    console.log(`  result: ${result.status}, ${result.authorsMapped.length} authors mapped, pushes ${emulator.imports.pushes('octo-org', run.repo).length}`);
    console.log(`  status polls (GET …/import):  measured ${gets}, computed from the schedule ${computed}`);
    console.log(`  API requests in total:        ${emulator.stats.requests}`);
    console.log(`  by route: ${JSON.stringify(byRoute)}`);
  }
  console.log(`\n${describeHistorySizes(await historySizeReport(client))}`);

  worker.shutdown();
  await running;
  await workerConnection.close();
  await connection.close();
  await server.stop();
  await emulator.close();
  await rm(dataDir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
