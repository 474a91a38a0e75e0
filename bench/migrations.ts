/**
 * `npm run bench:migrations` — N concurrent organization migrations against the emulator.
 *
 *   npm run bench:migrations -- --migrations 200 --repos 3 --export-min 2 --export-max 10
 *
 * Runs its own in-memory Temporal dev server, the emulator in this process, and the worker as a
 * separate process (so its RSS is the worker's own). Prints wall time against the ideal (slowest export
 * plus one archive download), API requests per migration, rate-limit rejections, requests sent while
 * limited, and the worker's peak RSS, next to the targets.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import { startDevServer } from '../src/temporal/dev-server';
import { startEmulator } from '@longhaul/emulator';
import { writeWorkflowBundle } from '../src/bundle';
import { defaultGithubFixture } from '../packages/emulator/src/github/fixture';
import type { OrgMigrationInput, OrgMigrationResult } from '../src/processes/org-migration/model';
import { orgMigration } from '../src/processes/org-migration/workflow';
import { buildWorker, cpuSeconds, rssKb, startWorkerProcess } from './worker-process';
import { describeHistorySizes, historySizeReport } from '../src/temporal/history-stats';
import { DEFAULT_POLL } from '../src/processes/org-migration/model';
import { pollScheduleMs } from '../src/common/poll-schedule';
import { describeMutationArrivals, recordMutations } from './mutation-arrivals';

interface Options {
  migrations: number;
  repos: number;
  exportMin: number;
  exportMax: number;
  archiveKb: number;
  pointsPerMinute: number;
}

const program = new Command()
  .option('--migrations <n>', 'concurrent migrations', Number, 200)
  .option('--repos <n>', 'repositories per migration', Number, 3)
  .option('--export-min <s>', 'shortest export (seconds)', Number, 2)
  .option('--export-max <s>', 'longest export (seconds)', Number, 10)
  .option('--archive-kb <n>', 'archive size in KiB', Number, 256)
  .option(
    '--points-per-minute <n>',
    'emulator secondary-limit points per endpoint per minute (spec: 900, which caps migration starts at 180/min; the default leaves room so the run measures orchestration, not pacing)',
    Number,
    5000,
  );

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  const fixture = defaultGithubFixture();
  fixture.accounts.push({ id: 5000, login: 'bench-org', type: 'Organization' });
  for (let i = 0; i < o.migrations * o.repos; i++) {
    fixture.repositories.push({ id: 10_000 + i, name: `repo-${i}`, owner: 'bench-org', private: false, workflowsEnabled: false });
  }
  const emulator = await startEmulator({
    fixture,
    migrations: { exportMs: [o.exportMin * 1000, o.exportMax * 1000], archiveBytes: o.archiveKb * 1024 },
    rateLimit: { secondary: { pointsPerWindow: o.pointsPerMinute } },
  });
  const server = await startDevServer({ port: 0, uiPort: false, log: () => undefined });
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-bench-'));
  const taskQueue = `bench-${Date.now()}`;
  // Bundle once here, as a production deployment would at build time, so the worker's RSS is its steady state.
  buildWorker();
  const bundlePath = await writeWorkflowBundle(join(dataDir, 'workflow-bundle.js'));

  const worker = await startWorkerProcess({
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    GITHUB_API_URL: emulator.apiUrl,
    GITHUB_TOKEN: 'bench-token',
    LONGHAUL_TASK_QUEUE: taskQueue,
    LONGHAUL_DATA_DIR: dataDir,
    LONGHAUL_WORKFLOW_BUNDLE: bundlePath,
  });

  // The worker's own log (governor waits, slots given up), kept when asked for: the breakdown of lost time.
  if (process.env.LONGHAUL_BENCH_WORKER_LOG) {
    const log = createWriteStream(process.env.LONGHAUL_BENCH_WORKER_LOG);
    worker.child.stdout!.pipe(log);
  }
  // Every mutation's arrival at the emulator, for the gap breakdown and the count of repeated requests.
  const arrivals = recordMutations(emulator.rateLimiter);

  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });

  const exportTimes: number[] = [];
  let peakRss = 0;
  const sampler = setInterval(() => void rssKb(worker.pid).then((kb) => (peakRss = Math.max(peakRss, kb))), 250);
  const cpuBefore = await cpuSeconds(worker.pid);
  const serverCpuBefore = server.pid ? await cpuSeconds(server.pid) : 0;
  const benchCpuBefore = process.cpuUsage();

  console.log(`bench: ${o.migrations} migrations × ${o.repos} repositories, exports ${o.exportMin}-${o.exportMax} s, archives ${o.archiveKb} KiB`);
  const started = Date.now();
  const handles = await Promise.all(
    Array.from({ length: o.migrations }, (_, m) => {
      const input: OrgMigrationInput = {
        org: 'bench-org',
        repositories: Array.from({ length: o.repos }, (_, r) => `repo-${m * o.repos + r}`),
        lockRepositories: true,
        downloadDir: 'archives',
      };
      return client.workflow.start(orgMigration, { taskQueue, workflowId: `bench-migration-${taskQueue}-${m}`, args: [input] });
    }),
  );
  const allStartedMs = Date.now() - started;
  const finishedAt: number[] = [];
  const results = await Promise.allSettled(
    handles.map((h) =>
      (h.result() as Promise<OrgMigrationResult>).then((r) => {
        finishedAt.push(Date.now() - started);
        return r;
      }),
    ),
  );
  const wallMs = Date.now() - started;
  clearInterval(sampler);
  const cpuAfter = await cpuSeconds(worker.pid);
  const serverCpu = server.pid ? (await cpuSeconds(server.pid)) - serverCpuBefore : 0;
  const benchCpu = process.cpuUsage(benchCpuBefore);

  for (const m of emulator.migrations.all()) exportTimes.push(m.exportMs);
  // The ideal: the slowest export plus one archive download at this machine's speed (timed now, alone).
  const slowest = emulator.migrations.all().sort((a, b) => b.exportMs - a.exportMs)[0];
  const downloadStart = Date.now();
  const archive = await fetch(emulator.migrations.archiveUrl(slowest.id)!);
  await archive.arrayBuffer();
  const downloadMs = Date.now() - downloadStart;
  // Two floors no implementation can beat, whichever is higher: the default poll schedule sees the slowest
  // export at its first poll after the export ended (then one download); and mutations on the one token go
  // out at least the governor's spacing apart (GitHub's "one second between mutations").
  const firstPollAfter = (ms: number) => pollScheduleMs(DEFAULT_POLL, ms).find((t) => t >= ms) ?? ms;
  const detectedMs = Math.max(...exportTimes.map(firstPollAfter)) + downloadMs;
  const mutations = Object.entries(emulator.stats.byRoute)
    .filter(([route]) => !route.startsWith('GET ') && !route.startsWith('HEAD '))
    .reduce((n, [, count]) => n + count, 0);
  const spacingMs = Number(process.env.LONGHAUL_MUTATION_SPACING_MS ?? 1000);
  const pacedMs = mutations * spacingMs;
  const idealMs = Math.max(Math.max(...exportTimes) + downloadMs, detectedMs, pacedMs);
  const failed = results.filter((r) => r.status === 'rejected');
  const stats = emulator.stats;
  const perMigration = stats.requests / o.migrations;

  const row = (label: string, value: string, target = '') => console.log(`  ${label.padEnd(34)} ${value.padEnd(16)} ${target}`);
  console.log('results');
  row('completed / failed', `${results.length - failed.length} / ${failed.length}`);
  row('wall time', `${(wallMs / 1000).toFixed(1)} s`);
  row('slowest export + download', `${((Math.max(...exportTimes) + downloadMs) / 1000).toFixed(1)} s`);
  row('  seen at the default schedule\'s poll', `${(detectedMs / 1000).toFixed(1)} s`);
  row(`  ${mutations} mutations ${spacingMs} ms apart`, `${(pacedMs / 1000).toFixed(1)} s`);
  row('ideal (the highest of these)', `${(idealMs / 1000).toFixed(1)} s`);
  row('wall / ideal', `${(wallMs / idealMs).toFixed(2)}×`, 'target ≤ 1.25×');
  row('API requests per migration', perMigration.toFixed(2), 'target ≤ 12');
  row('rate-limit rejections', String(stats.rateLimited.primary + stats.rateLimited.secondary));
  row('requests sent while limited', String(stats.requestsWhileLimited), 'target 0');
  row('already in flight when limited', String(stats.requestsInFlightWhenLimited));
  const gap = emulator.rateLimiter.fleetStats()['bench-token']?.minMutationGapMs;
  row('smallest gap between two mutations', gap == null ? '-' : `${gap} ms`, `target ≥ ${spacingMs} ms`);
  row('worker peak RSS', `${(peakRss / 1024).toFixed(0)} MB`, 'target < 300 MB');
  finishedAt.sort((a, b) => a - b);
  row('all workflows started after', `${(allStartedMs / 1000).toFixed(1)} s`);
  row('finished: median / p90 / last', `${(finishedAt[Math.floor(finishedAt.length / 2)] / 1000).toFixed(1)} / ${(finishedAt[Math.floor(finishedAt.length * 0.9)] / 1000).toFixed(1)} / ${(finishedAt[finishedAt.length - 1] / 1000).toFixed(1)} s`);
  row('worker CPU', `${(cpuAfter - cpuBefore).toFixed(1)} s`);
  row('Temporal dev server CPU', `${serverCpu.toFixed(1)} s`);
  row('emulator + bench driver CPU', `${((benchCpu.user + benchCpu.system) / 1e6).toFixed(1)} s`);
  row('storage bytes served', `${(stats.storage.bytesServed / 1024 / 1024).toFixed(1)} MiB`);
  console.log(`  requests by route: ${JSON.stringify(stats.byRoute)}`);
  console.log(`  answers by status: ${JSON.stringify(stats.byStatus)}`);
  for (const line of describeMutationArrivals(arrivals, started, started + wallMs, spacingMs)) console.log(`  ${line}`);
  if (process.env.LONGHAUL_BENCH_ARRIVALS) await writeFile(process.env.LONGHAUL_BENCH_ARRIVALS, JSON.stringify({ started, arrivals }));
  if (failed.length) {
    // WorkflowFailedError says only "Workflow execution failed": the workflow's own failure is its cause.
    const reason = (failed[0] as PromiseRejectedResult).reason as Error & { cause?: Error };
    console.log(`  first failure: ${reason}${reason.cause ? `: ${reason.cause.message}` : ''}`);
  }
  console.log(`  ${describeHistorySizes(await historySizeReport(client))}`);

  await worker.stop();
  await connection.close();
  await server.stop();
  await emulator.close();
  await rm(dataDir, { recursive: true, force: true });
  process.exitCode = failed.length ? 1 : 0;
}

main().catch((err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
