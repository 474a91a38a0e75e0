/**
 * `npm run bench:long-wait` — the cost of WAITING: thousands of organization migrations whose exports take
 * minutes, on one worker process, against the emulator.
 *
 *   npm run bench:long-wait -- --migrations 2000 --export-min 300 --export-max 600
 *
 * The waiting window runs from the moment the emulator holds every migration (all started) until the first
 * export ends: in it every migration only waits, so the worker's and the Temporal dev server's CPU seconds in
 * that window, divided by the migration-hours waited in it (migrations × window length), are what one
 * migration-hour of waiting costs. Also printed: the worker's peak RSS, polls per migration (whole run) and
 * per migration-hour (window), and the commit measured, so the figures can be compared after a poller change.
 *
 * Pacing is not what this measures: the worker gets LONGHAUL_MUTATION_SPACING_MS=0 (`--spacing-ms`) and the
 * emulator no effective rate limit, so 2,000 starts take a minute or two instead of 33 (GitHub's 1 s rule).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import { startDevServer } from '../src/temporal/dev-server';
import { startEmulator } from '@longhaul/emulator';
import { writeWorkflowBundle } from '../src/bundle';
import { defaultGithubFixture } from '../packages/emulator/src/github/fixture';
import type { OrgMigrationInput } from '../src/processes/org-migration/model';
import { orgMigration } from '../src/processes/org-migration/workflow';
import { buildWorker, cpuSeconds, rssKb, startWorkerProcess } from './worker-process';

interface Options {
  migrations: number;
  exportMin: number;
  exportMax: number;
  archiveKb: number;
  spacingMs: number;
  startBatch: number;
}

const program = new Command()
  .option('--migrations <n>', 'concurrent migrations (one repository each)', Number, 2000)
  .option('--export-min <s>', 'shortest export (seconds)', Number, 300)
  .option('--export-max <s>', 'longest export (seconds)', Number, 600)
  .option('--archive-kb <n>', 'archive size in KiB', Number, 16)
  .option('--spacing-ms <n>', "the worker's LONGHAUL_MUTATION_SPACING_MS (GitHub's rule is 1000; waiting is measured, not pacing)", Number, 0)
  .option('--start-batch <n>', 'workflow starts sent at once by the driver', Number, 100);

/** The commit measured (`+dirty` with uncommitted changes), so a rerun after a poller change can be compared. */
function commitLine(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
    return `${head}${dirty ? '+dirty' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** Status polls of a migration (`GET …/migrations/:id`), by route, out of the emulator's counts. */
function migrationPolls(byRoute: Record<string, number>): number {
  return Object.entries(byRoute)
    .filter(([route]) => /^GET .*migrations\/:[a-z_]+$/i.test(route))
    .reduce((n, [, count]) => n + count, 0);
}

/** Stopped on a failure too: a crashed driver must not leave its worker process polling a dead server. */
const stopOnExit: (() => Promise<void>)[] = [];

const until = (cond: () => boolean, everyMs = 250) =>
  new Promise<void>((resolve) => {
    const t = setInterval(() => {
      if (cond()) {
        clearInterval(t);
        resolve();
      }
    }, everyMs);
  });

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  const fixture = defaultGithubFixture();
  fixture.accounts.push({ id: 5000, login: 'bench-org', type: 'Organization' });
  for (let i = 0; i < o.migrations; i++) {
    fixture.repositories.push({ id: 10_000 + i, name: `repo-${i}`, owner: 'bench-org', private: false, workflowsEnabled: false });
  }
  const unlimited = 1_000_000_000;
  const emulator = await startEmulator({
    fixture,
    migrations: { exportMs: [o.exportMin * 1000, o.exportMax * 1000], archiveBytes: o.archiveKb * 1024 },
    rateLimit: { limit: unlimited, secondary: { pointsPerWindow: unlimited } },
  });
  const server = await startDevServer({ port: 0, uiPort: false, log: () => undefined });
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-long-wait-'));
  const taskQueue = `long-wait-${Date.now()}`;
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
    LONGHAUL_MUTATION_SPACING_MS: String(o.spacingMs),
  });
  stopOnExit.push(() => worker.stop(), () => server.stop());
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });

  let peakRss = 0;
  let windowPeakRss = 0;
  let inWindow = false;
  const sampler = setInterval(
    () =>
      void rssKb(worker.pid).then((kb) => {
        peakRss = Math.max(peakRss, kb);
        if (inWindow) windowPeakRss = Math.max(windowPeakRss, kb);
      }),
    250,
  );
  const serverPid = server.pid ?? 0;
  const cpu = async () => ({ worker: await cpuSeconds(worker.pid), server: serverPid ? await cpuSeconds(serverPid) : 0, bench: process.cpuUsage() });
  const cpuStart = await cpu();

  console.log(`bench:long-wait at ${commitLine()}: ${o.migrations} migrations × 1 repository, exports ${o.exportMin}-${o.exportMax} s, archives ${o.archiveKb} KiB`);
  console.log(`  the worker runs with LONGHAUL_MUTATION_SPACING_MS=${o.spacingMs} (GitHub's rule: 1000) and the emulator with no effective rate limit: waiting is measured, not pacing`);
  console.log(`  load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const started = Date.now();
  // No `result()` per workflow: 2,000 long-polls exceed the dev server's concurrent poller limit (RESOURCE_EXHAUSTED).
  for (let first = 0; first < o.migrations; first += o.startBatch) {
    const batch = Array.from({ length: Math.min(o.startBatch, o.migrations - first) }, (_, k) => first + k);
    await Promise.all(
      batch.map((m) => {
        const input: OrgMigrationInput = { org: 'bench-org', repositories: [`repo-${m}`], lockRepositories: false, downloadDir: 'archives' };
        return client.workflow.start(orgMigration, { taskQueue, workflowId: `long-wait-${taskQueue}-${m}`, args: [input] });
      }),
    );
  }
  const workflowsStartedS = (Date.now() - started) / 1000;

  // The window opens once the emulator holds every migration, and closes when the first export ends.
  await until(() => emulator.migrations.all().length >= o.migrations);
  const windowStart = Date.now();
  const firstExportEnd = Math.min(...emulator.migrations.all().map((m) => m.createdAt + m.exportMs));
  const allExportsStartedS = (windowStart - started) / 1000;
  if (firstExportEnd <= windowStart) {
    throw new Error(`no waiting window: the first export ended ${((windowStart - firstExportEnd) / 1000).toFixed(1)} s before the last migration started; start fewer or make exports longer`);
  }
  inWindow = true;
  const cpuWindowStart = await cpu();
  const pollsWindowStart = migrationPolls(emulator.stats.byRoute);
  const requestsWindowStart = emulator.stats.requests;
  await new Promise((r) => setTimeout(r, firstExportEnd - Date.now()));
  const cpuWindowEnd = await cpu();
  const windowEnd = Date.now();
  inWindow = false;
  const pollsInWindow = migrationPolls(emulator.stats.byRoute) - pollsWindowStart;
  const requestsInWindow = emulator.stats.requests - requestsWindowStart;

  // After the window, the end is read from visibility every few seconds (cheap next to 2,000 long-polls).
  const count = async (status: string) => Number((await client.workflow.count(`WorkflowType = "orgMigration" AND ExecutionStatus ${status}`)).count);
  for (;;) {
    if ((await count('= "Running"')) === 0) break;
    await new Promise((r) => setTimeout(r, 5_000));
  }
  const wallS = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const cpuEnd = await cpu();
  const completed = await count('= "Completed"');
  const failed = await count('!= "Completed"');

  const windowS = (windowEnd - windowStart) / 1000;
  const migrationHours = (o.migrations * windowS) / 3600;
  const perMh = (x: number) => (x / migrationHours).toFixed(3);
  const workerWindowCpu = cpuWindowEnd.worker - cpuWindowStart.worker;
  const serverWindowCpu = cpuWindowEnd.server - cpuWindowStart.server;
  const benchWindowCpu = (cpuWindowEnd.bench.user + cpuWindowEnd.bench.system - cpuWindowStart.bench.user - cpuWindowStart.bench.system) / 1e6;
  const polls = migrationPolls(emulator.stats.byRoute);

  const row = (label: string, value: string, note = '') => console.log(`  ${label.padEnd(44)} ${value.padEnd(18)} ${note}`);
  console.log('results');
  row('completed / not completed', `${completed} / ${failed}`);
  row('wall time', `${wallS.toFixed(1)} s`);
  row('all workflows started after', `${workflowsStartedS.toFixed(1)} s`);
  row('all exports started after', `${allExportsStartedS.toFixed(1)} s`);
  row('waiting window', `${windowS.toFixed(1)} s`, `${o.migrations} migrations waiting → ${migrationHours.toFixed(2)} migration-hours`);
  row('worker CPU in the window', `${workerWindowCpu.toFixed(2)} s`, `${perMh(workerWindowCpu)} s per migration-hour`);
  row('Temporal dev server CPU in the window', `${serverWindowCpu.toFixed(2)} s`, `${perMh(serverWindowCpu)} s per migration-hour`);
  row('emulator + bench driver CPU in the window', `${benchWindowCpu.toFixed(2)} s`, `${perMh(benchWindowCpu)} s per migration-hour`);
  row('migration polls in the window', String(pollsInWindow), `${perMh(pollsInWindow)} per migration-hour`);
  row('API requests in the window', String(requestsInWindow));
  row('worker peak RSS (window / whole run)', `${(windowPeakRss / 1024).toFixed(0)} / ${(peakRss / 1024).toFixed(0)} MB`);
  row('polls per migration (whole run)', (polls / o.migrations).toFixed(2), `${polls} status polls`);
  row('API requests per migration (whole run)', (emulator.stats.requests / o.migrations).toFixed(2));
  row('worker CPU (whole run)', `${(cpuEnd.worker - cpuStart.worker).toFixed(1)} s`);
  row('Temporal dev server CPU (whole run)', `${(cpuEnd.server - cpuStart.server).toFixed(1)} s`);
  row('emulator + bench driver CPU (whole run)', `${((cpuEnd.bench.user + cpuEnd.bench.system - cpuStart.bench.user - cpuStart.bench.system) / 1e6).toFixed(1)} s`);
  console.log(`  load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`  requests by route: ${JSON.stringify(emulator.stats.byRoute)}`);

  await worker.stop();
  await connection.close();
  await server.stop();
  await emulator.close();
  await rm(dataDir, { recursive: true, force: true });
  process.exitCode = failed || completed !== o.migrations ? 1 : 0;
}

main().catch(async (err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  for (const stop of stopOnExit) await stop().catch(() => undefined);
  process.exit(1);
});
