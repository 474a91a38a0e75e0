/**
 * `npm run bench:backup` — one backup run of an organization of 12,000 repositories (issue 38), against the
 * emulator, into versitygw (S3), with the compiled worker as a process of its own:
 *
 *   npm run bench:backup -- --repos 12000 --per-export 100 --concurrent 4 --export-ms 2000
 *
 * Prints requests per repository (GitHub API requests the emulator answered, and what they were), the run's wall
 * time against its floor (the exports' own time at this concurrency: ceil(exports / concurrent) waves of
 * `--export-ms`, halvings excluded), the worker's peak RSS, and the largest history of the run (the backup's runs
 * and every export's).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import { startEmulator } from '@longhaul/emulator';
import { startDevServer } from '../src/temporal/dev-server';
import { writeWorkflowBundle } from '../src/bundle';
import { startVersitygw } from '../test/servers/object-stores';
import { s3Client } from '../src/archive/object-store/stores/s3';
import { orgBackup } from '../src/processes/org-backup/workflow';
import { buildWorker, rssKb, startWorkerProcess } from './worker-process';

interface Options {
  repos: number;
  perExport: number;
  concurrent: number;
  exportMs: number;
  fail?: string;
}

const program = new Command()
  .option('--repos <n>', 'repositories in the organization', Number, 12_000)
  .option('--per-export <n>', 'repositories per export', Number, 100)
  .option('--concurrent <n>', 'exports at once', Number, 4)
  .option('--export-ms <ms>', 'how long the emulator takes for each export', Number, 2_000)
  .option('--fail <repo>', 'a repository whose exports fail (halving)');

async function largestHistory(client: Client, workflowId: string): Promise<{ events: number; workflowId: string; runs: number }> {
  let best = { events: 0, workflowId, runs: 0 };
  let runs = 0;
  // The backup's own chain (continue-as-new) and each export's (its children).
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowId}' OR RootWorkflowId = '${workflowId}'` })) {
    runs++;
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    const events = history.events?.length ?? 0;
    if (events > best.events) best = { events, workflowId: wf.workflowId, runs: 0 };
  }
  return { ...best, runs };
}

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  const emulator = await startEmulator({
    token: 'bench-token',
    organizations: { 'bench-org': { repositories: o.repos } },
    migrations: { exportMs: o.exportMs, archiveBytes: 4_096, ...(o.fail ? { failRepositories: [o.fail] } : {}) },
    // The bench measures the backup's own requests, not waits for a secondary limit.
    rateLimit: { limit: 1_000_000, secondary: { pointsPerWindow: 1_000_000 } },
  });
  const s3 = await startVersitygw();
  await s3Client(s3.env).send(new CreateBucketCommand({ Bucket: 'bench-backups' }));
  const server = await startDevServer({ port: 0, uiPort: false, log: () => undefined });
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-bench-backup-'));
  const taskQueue = `bench-backup-${Date.now()}`;
  buildWorker();
  const bundlePath = await writeWorkflowBundle(join(dataDir, 'workflow-bundle.js'));
  const worker = await startWorkerProcess(
    {
      ...s3.env,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      GITHUB_API_URL: emulator.apiUrl,
      GITHUB_TOKEN: 'bench-token',
      LONGHAUL_TASK_QUEUE: taskQueue,
      LONGHAUL_DATA_DIR: dataDir,
      LONGHAUL_WORKFLOW_BUNDLE: bundlePath,
      LONGHAUL_METRICS_ADDRESS: 'off',
      LONGHAUL_MUTATION_SPACING_MS: '50',
    },
    { logFile: join(dataDir, 'worker.log') },
  );
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  let peakRss = 0;
  const sampler = setInterval(() => void rssKb(worker.pid).then((kb) => (peakRss = Math.max(peakRss, kb))), 500);
  const before = emulator.stats.requests;
  const workflowId = `bench-backup-${Date.now()}`;
  const started = Date.now();
  const result = await client.workflow.execute(orgBackup, {
    taskQueue,
    workflowId,
    args: [{ org: 'bench-org', archiveTo: 's3://bench-backups/nightly', reposPerExport: o.perExport, concurrentExports: o.concurrent, exportPoll: { initialIntervalMs: 1_000, maxIntervalMs: 5_000 } }],
  });
  const wallMs = Date.now() - started;
  clearInterval(sampler);
  const requests = emulator.stats.requests - before;
  const exports = Math.ceil(o.repos / o.perExport);
  const floorMs = Math.ceil(exports / o.concurrent) * o.exportMs;
  const history = await largestHistory(client, workflowId);
  const byRoute = new Map<string, number>();
  for (const r of emulator.requestLog) {
    const route = `${r.method} ${r.path.replace(/\?.*$/, '').replace(/\/\d+/g, '/{id}').replace(/\/repo-\d+/g, '/{repo}')}`;
    byRoute.set(route, (byRoute.get(route) ?? 0) + 1);
  }
  const row = (k: string, v: string) => console.log(`${k.padEnd(40)} ${v}`);
  console.log(`\nbench:backup — ${o.repos.toLocaleString('en-US')} repositories, ${o.perExport} per export, ${o.concurrent} at once, exports of ${o.exportMs} ms (emulator, versitygw, one worker process)\n`);
  row('repositories backed up / listed', `${result.backedUp} / ${result.listed}${result.failed.length ? ` (failed: ${result.failed.map((f) => f.name).join(', ')})` : ''}`);
  row('exports (halvings)', `${result.exports} (${result.halvings})`);
  row('GitHub requests', `${requests} = ${(requests / o.repos).toFixed(3)} per repository`);
  for (const [route, n] of [...byRoute.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8)) row(`  ${route}`, String(n));
  row('wall time / floor', `${(wallMs / 1000).toFixed(1)} s / ${(floorMs / 1000).toFixed(1)} s = ${(wallMs / floorMs).toFixed(2)}×`);
  row('worker peak RSS', `${Math.round(peakRss / 1024)} MB`);
  row('largest history', `${history.events} events (${history.workflowId}; ${history.runs} runs looked at)`);
  await connection.close();
  await worker.stop();
  await server.stop?.();
  await s3.destroy();
  await emulator.close();
  await rm(dataDir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
