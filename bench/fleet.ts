/**
 * `npm run bench:fleet` — one token shared by a fleet of worker PROCESSES (the compiled worker, as the
 * Docker image runs it), against an emulator with a primary limit of 60 requests per 10 s:
 * 40 org migrations plus feed polls on Schedules, one worker SIGKILLed and restarted mid-run. Then the
 * same with one worker, and both side by side.
 *
 *   npm run bench:fleet -- --workers 3 --migrations 40
 *
 * Figures (from the emulator, the judge): requests sent while limited (arriving > 250 ms after the first
 * limiting answer of a wait), limited answers per window, budget utilisation while work was queued
 * (requests the server counted ÷ the limit, over the windows before the last migration finished), the
 * smallest gap between two mutations, and the peak of concurrent requests on the token.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import { startDevServer } from '../src/temporal/dev-server';
import { writeWorkflowBundle } from '../src/bundle';
import { defaultGithubFixture } from '../packages/emulator/src/github/fixture';
import { upsertFeedSchedule } from '../src/processes/feed-poll/cli-schedule';
import type { OrgMigrationInput } from '../src/processes/org-migration/model';
import { BUDGET_SPENT, governorWorkflowId, limitsQuery, type GovernorSnapshot } from '../src/processes/rate-governor/model';
import { orgMigration } from '../src/processes/org-migration/workflow';
import { buildWorker, startWorkerProcess } from './worker-process';
import { startEmulatorProcess } from './emulator-process';

interface Options {
  workers: number;
  migrations: number;
  repos: number;
  exportMin: number;
  exportMax: number;
  feeds: number;
  feedEvery: number;
  limit: number;
  window: number;
  killAt: number;
  compare: boolean;
  control: boolean;
  windows?: boolean;
}

const program = new Command()
  .option('--workers <n>', 'worker processes on the one token', Number, 3)
  .option('--migrations <n>', 'concurrent migrations', Number, 40)
  .option('--repos <n>', 'repositories per migration', Number, 2)
  .option('--export-min <s>', 'shortest export (seconds)', Number, 2)
  .option('--export-max <s>', 'longest export (seconds)', Number, 10)
  // 20 feeds every 2 s ask for 10 reads/s against a budget of 6/s: the budget, not mutation pacing, bounds
  // the run, so "utilisation while work was queued" measures the governor and not the workload.
  .option('--feeds <n>', 'feeds polled on Schedules meanwhile', Number, 20)
  .option('--feed-every <s>', 'Schedule interval and X-Poll-Interval of each feed (seconds)', Number, 2)
  .option('--limit <n>', 'primary limit per window', Number, 60)
  .option('--window <s>', 'primary window (seconds)', Number, 10)
  .option('--kill-at <s>', 'SIGKILL one worker (and restart it) this long into the run', Number, 20)
  .option('--windows', 'print every primary window of the governed runs (requests counted, whether work waited on the budget)')
  .option('--no-compare', 'skip the run with one worker')
  .option('--no-control', 'skip the control run of the same fleet with the governor off (LONGHAUL_RATE_GOVERNOR=off)');

interface Figures {
  workers: number;
  governor: boolean;
  completed: number;
  failed: number;
  wallS: number;
  requests: number;
  whileLimited: number;
  inFlightWhenLimited: number;
  limitedAnswers: number;
  maxLimitedPerWindow: number;
  windows: number;
  utilisation: number;
  minUtilisation: number;
  /** Windows in which the governor's gate closed because the budget was spent (work waiting on the limit). */
  boundWindows: number;
  boundUtilisation: number;
  minMutationGapMs: number | null;
  closestMutations?: [string, string];
  peakConcurrent: number;
  /** What the emulator received of each kind of mutation: a SIGKILL must not make the fleet send one twice. */
  starts: number;
  unlocks: number;
  firstFailure?: string;
}

const TOKEN = 'bench-token';
/** The emulator's route key of a migration start (its stats count requests by route). */
const MIGRATION_START = 'POST /orgs/:org/migrations';
const REPOSITORY_UNLOCK = 'DELETE /orgs/:org/migrations/:id/repos/:repo/lock';

async function run(o: Options, workers: number, governorOn: boolean, server: Awaited<ReturnType<typeof startDevServer>>, bundlePath: string, dataDir: string): Promise<Figures> {
  const fixture = defaultGithubFixture();
  fixture.accounts.push({ id: 5000, login: 'bench-org', type: 'Organization' });
  // Feeds poll repo-0…repo-(feeds-1): enough repositories for both.
  for (let i = 0; i < Math.max(o.migrations * o.repos, o.feeds); i++) fixture.repositories.push({ id: 10_000 + i, name: `repo-${i}`, owner: 'bench-org', private: false, workflowsEnabled: false });
  // In a process of its own: its stamps of each request's arrival are not delayed by this driver's work.
  const emulator = await startEmulatorProcess(
    {
      fixture,
      migrations: { exportMs: [o.exportMin * 1000, o.exportMax * 1000], archiveBytes: 64 * 1024 },
      feeds: { eventsPerMinute: 12, initialEvents: 5, pollIntervalSeconds: o.feedEvery },
      rateLimit: { limit: o.limit, windowMs: o.window * 1000 },
    },
    join(dataDir, `emulator-${workers}-${governorOn ? 'on' : 'off'}.json`),
  );
  const taskQueue = `bench-fleet-${workers}-${governorOn ? 'on' : 'off'}-${Date.now()}`;
  const env = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    GITHUB_API_URL: emulator.apiUrl,
    GITHUB_TOKEN: TOKEN,
    LONGHAUL_GITHUB_CREDENTIAL: `bench-${workers}-${Date.now()}`,
    LONGHAUL_TASK_QUEUE: taskQueue,
    LONGHAUL_DATA_DIR: join(dataDir, `w${workers}`),
    LONGHAUL_WORKFLOW_BUNDLE: bundlePath,
    LONGHAUL_RATE_GOVERNOR: governorOn ? 'on' : 'off',
    // Several workers on one host: none needs the metrics endpoint here.
    LONGHAUL_METRICS_ADDRESS: 'off',
  };
  // Whatever happens, no worker process or emulator outlives the run.
  const fleet: Awaited<ReturnType<typeof startWorkerProcess>>[] = [];
  let connection: Connection | undefined;
  try {
    fleet.push(...(await Promise.all(Array.from({ length: workers }, () => startWorkerProcess(env)))));
    const governor = () => client.workflow.getHandle(governorWorkflowId(env.LONGHAUL_GITHUB_CREDENTIAL));
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: server.namespace });

    const feeds = Array.from({ length: o.feeds }, (_, i) => `/repos/bench-org/repo-${i}/events`);
    const scheduleIds: string[] = [];
    for (const feed of feeds) {
      const { scheduleId } = await upsertFeedSchedule(client, { taskQueue, everyMs: o.feedEvery * 1000, input: { feed, sink: { kind: 'file' } } });
      scheduleIds.push(scheduleId);
    }

    console.log(`run: ${workers} worker process(es), governor ${governorOn ? 'on' : 'OFF (control)'}, ${o.migrations} migrations × ${o.repos} repos, ${feeds.length} feeds every ${o.feedEvery} s, limit ${o.limit}/${o.window} s`);
    const started = Date.now();
    const handles = await Promise.all(
      Array.from({ length: o.migrations }, (_, m) => {
        const input: OrgMigrationInput = { org: 'bench-org', repositories: Array.from({ length: o.repos }, (_, r) => `repo-${m * o.repos + r}`), lockRepositories: true, downloadDir: 'archives' };
        return client.workflow.start(orgMigration, { taskQueue, workflowId: `bench-fleet-${taskQueue}-${m}`, args: [input] });
      }),
    );
    const killer = setTimeout(() => {
      void (async () => {
        const victim = fleet[0];
        console.log(`  ${((Date.now() - started) / 1000).toFixed(1)} s: SIGKILL worker pid ${victim.pid}, restarting it`);
        victim.child.kill('SIGKILL');
        await new Promise((r) => victim.child.once('exit', r));
        fleet[0] = await startWorkerProcess(env);
        console.log(`  ${((Date.now() - started) / 1000).toFixed(1)} s: worker restarted as pid ${fleet[0].pid}`);
      })();
    }, o.killAt * 1000);
    // When the governor's gate is closed because the window's budget is spent, work is waiting on the limit.
    const budgetBound: number[] = [];
    const samples: { at: number; snap: GovernorSnapshot }[] = [];
    const sampler = setInterval(() => {
      void governor()
        .query(limitsQuery)
        .then((g) => {
          samples.push({ at: Date.now(), snap: g });
          if (g.reason === BUDGET_SPENT) budgetBound.push(Date.now());
        })
        .catch(() => undefined);
    }, 1000);
    const progress = setInterval(() => {
      void emulator.stats().then((st) => console.log(`  ${((Date.now() - started) / 1000).toFixed(0)} s: ${st.requests} requests, ${st.byRoute[MIGRATION_START] ?? 0} migration starts`));
    }, 30_000);
    const results = await Promise.allSettled(handles.map((h) => h.result()));
    const finishedAt = Date.now();
    clearInterval(progress);
    clearInterval(sampler);
    clearTimeout(killer);

    for (const id of scheduleIds) await client.schedule.getHandle(id).delete().catch(() => undefined);
    const stats = await emulator.stats();
    const caller = stats.fleet[TOKEN];
    // Windows that ended while migrations were still queued (the last, partial one left out).
    const busy = caller.windows.filter((w) => w.endMs <= finishedAt);
    const shares = busy.map((w) => w.used / o.limit);
    const bound = busy.filter((w) => budgetBound.some((t) => t >= w.startMs && t < w.endMs)).map((w) => w.used / o.limit);
    if (o.windows && governorOn) printWindows(busy, o, started, budgetBound, samples);
    const failed = results.filter((r) => r.status === 'rejected');
    const figures: Figures = {
      workers,
      governor: governorOn,
      completed: results.length - failed.length,
      failed: failed.length,
      wallS: (finishedAt - started) / 1000,
      requests: stats.requests,
      whileLimited: stats.requestsWhileLimited,
      inFlightWhenLimited: stats.requestsInFlightWhenLimited,
      limitedAnswers: stats.rateLimited.primary + stats.rateLimited.secondary,
      maxLimitedPerWindow: Math.max(0, ...caller.windows.map((w) => w.limitedAnswers)),
      windows: busy.length,
      utilisation: shares.length ? shares.reduce((a, b) => a + b, 0) / shares.length : 0,
      minUtilisation: shares.length ? Math.min(...shares) : 0,
      boundWindows: bound.length,
      boundUtilisation: bound.length ? bound.reduce((a, b) => a + b, 0) / bound.length : 0,
      minMutationGapMs: caller.minMutationGapMs,
      closestMutations: caller.closestMutations,
      peakConcurrent: caller.peakConcurrent,
      starts: stats.byRoute[MIGRATION_START] ?? 0,
      unlocks: stats.byRoute[REPOSITORY_UNLOCK] ?? 0,
      firstFailure: failed.length ? String((failed[0] as PromiseRejectedResult).reason) : undefined,
    };
    return figures;
  } finally {
    await Promise.all(fleet.map((w) => w.stop()));
    await connection?.close();
    await emulator.stop();
  }
}

/** One line per primary window: what the emulator counted, and what the governor said each second of it. */
function printWindows(
  windows: { startMs: number; endMs: number; used: number; limitedAnswers: number }[],
  o: Options,
  started: number,
  budgetBound: number[],
  samples: { at: number; snap: GovernorSnapshot }[],
): void {
  for (const w of windows) {
    const end = w.endMs;
    const inWindow = samples.filter((s) => s.at >= w.startMs && s.at < end);
    const bound = budgetBound.some((t) => t >= w.startMs && t < end);
    const said = inWindow.map((s) => `${s.snap.budget ?? '?'}${s.snap.queued ? `/q${s.snap.queued}` : ''}`).join(' ');
    console.log(`  window +${((w.startMs - started) / 1000).toFixed(1)} s: ${w.used}/${o.limit}${bound ? ' (budget-bound)' : ''}${w.limitedAnswers ? `, ${w.limitedAnswers} limited` : ''} · governor budget/queued each second: ${said}`);
  }
}

function print(o: Options, all: Figures[]): void {
  const row = (label: string, f: (x: Figures) => string, target = '') =>
    console.log(`  ${label.padEnd(44)} ${all.map((x) => f(x).padEnd(14)).join(' ')} ${target}`);
  console.log(`results (load average ${loadavg().map((l) => l.toFixed(2)).join(' / ')} on ${cpus().length} cores)`);
  row('worker processes', (x) => String(x.workers));
  row('rate governor', (x) => (x.governor ? 'on' : 'off (control)'));
  row('migrations completed / failed', (x) => `${x.completed} / ${x.failed}`);
  row('wall time', (x) => `${x.wallS.toFixed(1)} s`);
  row('API requests', (x) => String(x.requests));
  row('requests sent while limited (> 250 ms)', (x) => String(x.whileLimited), 'target 0');
  row('  in flight when limited (≤ 250 ms)', (x) => String(x.inFlightWhenLimited));
  row('limited answers: total / max per window', (x) => `${x.limitedAnswers} / ${x.maxLimitedPerWindow}`, 'target ≤ 1 per window');
  row('budget utilisation while work was queued', (x) => (x.governor ? `${(x.boundUtilisation * 100).toFixed(1)} %` : '-'), 'target ≥ 90 % (windows where requests waited on the budget)');
  row('  such windows', (x) => String(x.boundWindows));
  row('  utilisation over every window of the run', (x) => `${(x.utilisation * 100).toFixed(1)} %`);
  row('  lowest window / windows of the run', (x) => `${(x.minUtilisation * 100).toFixed(0)} % / ${x.windows}`);
  row('smallest gap between two mutations', (x) => (x.minMutationGapMs === null ? '-' : `${x.minMutationGapMs} ms`), 'target ≥ 1000 ms');
  row('migration starts / unlocks sent', (x) => `${x.starts} / ${x.unlocks}`, `each once: ${o.migrations} / ${o.migrations * o.repos}`);
  row('peak concurrent requests on the token', (x) => String(x.peakConcurrent), 'cap 50');
  for (const x of all) if (x.firstFailure) console.log(`  W=${x.workers} first failure: ${x.firstFailure}`);
  for (const x of all) {
    if (x.closestMutations) console.log(`  W=${x.workers}${x.governor ? '' : ' (control)'} closest mutations: ${x.closestMutations.join(' then ')}`);
  }
}

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  const server = await startDevServer({ port: 0, uiPort: false, log: () => undefined });
  console.log(`load average (1/5/15 min) at the start: ${loadavg().map((l) => l.toFixed(2)).join(' / ')} on ${cpus().length} cores`);
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-bench-fleet-'));
  buildWorker();
  const bundlePath = await writeWorkflowBundle(join(dataDir, 'workflow-bundle.js'));
  const all: Figures[] = [];
  try {
    // Figures are printed after every run (columns so far), so a long session still reports what it measured.
    all.push(await run(o, o.workers, true, server, bundlePath, dataDir));
    print(o, all);
    // What the governor prevents: the same fleet, each process with only its own in-memory gate.
    if (o.control) {
      all.push(await run(o, o.workers, false, server, bundlePath, dataDir));
      print(o, all);
    }
    if (o.compare && o.workers !== 1) {
      all.push(await run(o, 1, true, server, bundlePath, dataDir));
      print(o, all);
    }
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  console.log(`load average (1/5/15 min) at the end: ${loadavg().map((l) => l.toFixed(2)).join(' / ')} on ${cpus().length} cores`);
  process.exitCode = all.some((x) => x.governor && x.failed > 0) ? 1 : 0;
}

main().catch((err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
