/**
 * `npm run bench:chaos` — what crashes cost in requests (issue 31): org migrations on a fleet of worker
 * PROCESSES (the compiled worker, as the Docker image runs it) against an emulator in a process of its own with
 * random faults and a server clock behind the workers'. The chaos run SIGKILLs workers (each restarted at once)
 * and restarts the Temporal dev server (state in its SQLite file) during the start phase; the calm run has no
 * kills and no restart, and more faults. Both side by side.
 *
 *   npm run bench:chaos -- --migrations 40 --workers 2 --kills 10
 *
 * Each start POST is held 1.5 s by the emulator (half of them after the migration was created), so a SIGKILL
 * or the server restart during the start phase interrupts the starts in flight: their outcome is unknown to
 * the workflow (the activity times out), and the exactly-once lookup (`GET /orgs/{org}/migrations`) decides
 * between adopting and sending again. Figures come from the emulator (requests) and from the workflows'
 * histories (interrupted starts: a `startMigration` activity that timed out; lookups: `findMigration`
 * activities).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { freePort, startDevServer, type RunningDevServer } from '../src/temporal/dev-server';
import { writeWorkflowBundle } from '../src/bundle';
import { defaultGithubFixture } from '../packages/emulator/src/github/fixture';
import type { FaultRule } from '../packages/emulator/src/faults';
import type { OrgMigrationInput } from '../src/processes/org-migration/model';
import { orgMigration } from '../src/processes/org-migration/workflow';
import { buildWorker, startWorkerProcess } from './worker-process';
import { startEmulatorProcess } from './emulator-process';

interface Options {
  migrations: number;
  workers: number;
  repos: number;
  kills: number;
  /** @format seconds */
  killEvery: number;
  restart: boolean;
  faults: number;
  calmFaults: number;
  /** @format seconds (negative: the server is behind) */
  skew: number;
  /** @format seconds */
  callTimeout: number;
  calm: boolean;
}

const program = new Command()
  .option('--migrations <n>', 'concurrent migrations', Number, 40)
  .option('--workers <n>', 'worker processes', Number, 2)
  .option('--repos <n>', 'repositories per migration', Number, 2)
  .option('--kills <n>', 'SIGKILLs during the start phase (workers in turn, each restarted at once)', Number, 10)
  .option('--kill-every <s>', 'seconds between two SIGKILLs (the first one after this long)', Number, 3)
  .option('--no-restart', 'no Temporal server restart in the chaos run')
  .option('--faults <share>', 'share of requests answered with a fault in the chaos run', Number, 0.08)
  .option('--calm-faults <share>', 'share of faults in the calm run (no kills, no restart)', Number, 0.3)
  .option('--skew <s>', "the server clock's offset from the workers' (negative: behind)", Number, -20)
  .option('--call-timeout <s>', "each API call's start-to-close timeout (apiCallTimeoutMs): how long an interrupted start stays unknown", Number, 20)
  .option('--no-calm', 'skip the calm run');

const TOKEN = 'bench-token';
const LIST_ROUTE = 'GET /orgs/:org/migrations';
const START_ROUTE = 'POST /orgs/:org/migrations';
/** How long the emulator holds each start POST: long enough for a SIGKILL to land while starts are in flight. */
const START_HOLD_MS = 1_500;

interface Figures {
  label: string;
  completed: number;
  failed: number;
  wallS: number;
  requests: number;
  starts: number;
  listRequests: number;
  lookups: number;
  interruptedStarts: number;
  interruptedMigrations: number;
  /** Lookups of the migrations whose start was interrupted, in all. */
  interruptedLookups: number;
  /** The most lookups one migration whose start was interrupted made. */
  maxInterruptedLookups: number;
  /** The most lookups that followed one start attempt (one unknown outcome) before the next attempt or the end. */
  maxAfterAttempt: number;
  faultsInjected: number;
  firstFailure?: string;
}

/** Faults on every API route, `share` in all: half a 502 before processing, half a reset after it. */
function faultRules(share: number): FaultRule[] {
  const half = share / 2;
  return [
    { kind: 'status', status: 502, probability: half },
    // Drawn only when the first did not fire: half of the share overall.
    { kind: 'reset', afterProcessing: true, probability: half / (1 - half) },
    { method: 'POST', path: '/orgs/:org/migrations', kind: 'slow', delayMs: START_HOLD_MS, afterProcessing: true, probability: 0.5 },
    { method: 'POST', path: '/orgs/:org/migrations', kind: 'slow', delayMs: START_HOLD_MS },
  ];
}

/** Retries a call to the Temporal server while it is restarting. */
async function patiently<T>(call: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await call();
    } catch (err) {
      const unavailable = /UNAVAILABLE|ECONNREFUSED|No connection established|Connection dropped|deadline/i.test(String(err));
      if (!unavailable || tries >= 60) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/**
 * Lookups and interrupted starts of one migration, from its first run's history: `afterAttempt` is the most
 * lookups between one start attempt and the next (or the end), what one unknown outcome cost.
 */
function startFacts(events: temporal.api.history.v1.IHistoryEvent[]): { lookups: number; interrupted: number; afterAttempt: number } {
  const typeOf = new Map<string, string>();
  let lookups = 0;
  let interrupted = 0;
  let sinceAttempt = 0;
  let afterAttempt = 0;
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const name = scheduled.activityType?.name ?? '';
      typeOf.set(String(e.eventId), name);
      if (name === 'startMigration') sinceAttempt = 0;
      if (name === 'findMigration') {
        lookups++;
        afterAttempt = Math.max(afterAttempt, ++sinceAttempt);
      }
    }
    const timedOut = e.activityTaskTimedOutEventAttributes;
    if (timedOut && typeOf.get(String(timedOut.scheduledEventId)) === 'startMigration') interrupted++;
  }
  return { lookups, interrupted, afterAttempt };
}

async function run(o: Options, chaos: boolean, bundlePath: string, dataDir: string): Promise<Figures> {
  const label = chaos ? 'chaos' : 'calm';
  const fixture = defaultGithubFixture();
  fixture.accounts.push({ id: 5000, login: 'bench-org', type: 'Organization' });
  for (let i = 0; i < o.migrations * o.repos; i++) fixture.repositories.push({ id: 10_000 + i, name: `repo-${i}`, owner: 'bench-org', private: false, workflowsEnabled: false });
  const emulator = await startEmulatorProcess(
    {
      fixture,
      migrations: { exportMs: [2_000, 10_000], archiveBytes: 64 * 1024 },
      faults: faultRules(chaos ? o.faults : o.calmFaults),
      clockOffsetMs: o.skew * 1000,
    },
    join(dataDir, `emulator-${label}.json`),
  );
  // A server of its own per run, its state in a file, so it can be restarted on the same port.
  const serverDir = join(dataDir, `temporal-${label}`);
  const port = await freePort();
  const startServer = () => startDevServer({ port, uiPort: false, dataDir: serverDir, log: () => undefined });
  let server: RunningDevServer = await startServer();
  const taskQueue = `bench-chaos-${label}-${Date.now()}`;
  const env = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    GITHUB_API_URL: emulator.apiUrl,
    GITHUB_TOKEN: TOKEN,
    LONGHAUL_GITHUB_CREDENTIAL: `bench-chaos-${label}-${Date.now()}`,
    LONGHAUL_TASK_QUEUE: taskQueue,
    LONGHAUL_DATA_DIR: join(dataDir, `w-${label}`),
    LONGHAUL_WORKFLOW_BUNDLE: bundlePath,
    LONGHAUL_METRICS_ADDRESS: 'off',
  };
  const fleet: Awaited<ReturnType<typeof startWorkerProcess>>[] = [];
  let stopping = false;
  // A worker that exits on its own (say, while the server restarts) is started again, as a supervisor would.
  const keep = async (slot: number) => {
    const worker = await startWorkerProcess(env);
    fleet[slot] = worker;
    worker.child.once('exit', (code, signal) => {
      if (stopping || signal === 'SIGKILL') return;
      console.log(`  worker pid ${worker.pid} exited (${code ?? signal}); starting another`);
      void keep(slot);
    });
  };
  let connection: Connection | undefined;
  try {
    await Promise.all(Array.from({ length: o.workers }, (_, slot) => keep(slot)));
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: server.namespace });
    console.log(
      `${label} run: ${o.migrations} migrations × ${o.repos} repos, ${o.workers} worker processes, ${(100 * (chaos ? o.faults : o.calmFaults)).toFixed(0)} % faults, server clock ${o.skew} s` +
        (chaos ? `, ${o.kills} SIGKILLs every ${o.killEvery} s${o.restart ? ', one Temporal server restart' : ''}` : ', no kills, no restart'),
    );
    const started = Date.now();
    const at = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
    const handles = await Promise.all(
      Array.from({ length: o.migrations }, (_, m) => {
        const input: OrgMigrationInput = {
          org: 'bench-org',
          repositories: Array.from({ length: o.repos }, (_, r) => `repo-${m * o.repos + r}`),
          lockRepositories: true,
          downloadDir: 'archives',
          apiCallTimeoutMs: o.callTimeout * 1000,
        };
        return client.workflow.start(orgMigration, { taskQueue, workflowId: `${taskQueue}-${m}`, args: [input] });
      }),
    );
    const chaosDone = (async () => {
      if (!chaos) return;
      for (let k = 0; k < o.kills; k++) {
        await new Promise((r) => setTimeout(r, o.killEvery * 1000));
        const slot = k % fleet.length;
        const victim = fleet[slot];
        victim.child.kill('SIGKILL');
        await new Promise((r) => victim.child.once('exit', r));
        console.log(`  ${at()}: SIGKILL worker pid ${victim.pid} (${k + 1}/${o.kills})`);
        await keep(slot);
        // The server restart in the middle of the kills.
        if (o.restart && k === Math.floor(o.kills / 2) - 1) {
          await server.stop();
          console.log(`  ${at()}: Temporal server stopped`);
          server = await startServer();
          console.log(`  ${at()}: Temporal server started again`);
        }
      }
    })();
    const progress = setInterval(() => {
      void emulator
        .stats()
        .then((st) => console.log(`  ${at()}: ${st.requests} requests, ${st.byRoute[START_ROUTE] ?? 0} starts, ${st.byRoute[LIST_ROUTE] ?? 0} lookups`))
        .catch(() => undefined);
    }, 30_000);
    const results = await Promise.allSettled(handles.map((h) => patiently(() => h.result())));
    const wallS = (Date.now() - started) / 1000;
    clearInterval(progress);
    await chaosDone;

    const stats = await emulator.stats();
    let lookups = 0;
    let interruptedStarts = 0;
    let interruptedMigrations = 0;
    let interruptedLookups = 0;
    let maxInterruptedLookups = 0;
    let maxAfterAttempt = 0;
    for (const h of handles) {
      const first = client.workflow.getHandle(h.workflowId, h.firstExecutionRunId);
      const { events } = await patiently(() => first.fetchHistory());
      const facts = startFacts(events ?? []);
      lookups += facts.lookups;
      interruptedStarts += facts.interrupted;
      maxAfterAttempt = Math.max(maxAfterAttempt, facts.afterAttempt);
      if (facts.interrupted > 0) {
        interruptedMigrations++;
        interruptedLookups += facts.lookups;
        maxInterruptedLookups = Math.max(maxInterruptedLookups, facts.lookups);
      }
    }
    const failed = results.filter((r) => r.status === 'rejected');
    return {
      label,
      completed: results.length - failed.length,
      failed: failed.length,
      wallS,
      requests: stats.requests,
      starts: stats.byRoute[START_ROUTE] ?? 0,
      listRequests: stats.byRoute[LIST_ROUTE] ?? 0,
      lookups,
      interruptedStarts,
      interruptedMigrations,
      interruptedLookups,
      maxInterruptedLookups,
      maxAfterAttempt,
      faultsInjected: stats.faultsInjected,
      firstFailure: failed.length ? String((failed[0] as PromiseRejectedResult).reason) : undefined,
    };
  } finally {
    stopping = true;
    await Promise.all(fleet.map((w) => w.stop()));
    await connection?.close();
    await server.stop();
    await emulator.stop();
  }
}

function print(o: Options, all: Figures[]): void {
  const row = (label: string, f: (x: Figures) => string, target = '') => console.log(`  ${label.padEnd(46)} ${all.map((x) => f(x).padEnd(12)).join(' ')} ${target}`);
  const perMigration = (x: Figures) => x.requests / o.migrations;
  const calm = all.find((x) => x.label === 'calm');
  console.log(`results (load average ${loadavg().map((l) => l.toFixed(2)).join(' / ')} on ${cpus().length} cores)`);
  row('run', (x) => x.label);
  row('migrations completed / failed', (x) => `${x.completed} / ${x.failed}`);
  row('wall time', (x) => `${x.wallS.toFixed(1)} s`);
  row('API requests / faults injected', (x) => `${x.requests} / ${x.faultsInjected}`);
  row('requests per migration', (x) => perMigration(x).toFixed(1), calm ? `target: chaos ≤ 1.5 × calm = ${(1.5 * perMigration(calm)).toFixed(1)}` : '');
  row('start POSTs sent', (x) => String(x.starts));
  row('starts interrupted (timed out) / migrations', (x) => `${x.interruptedStarts} / ${x.interruptedMigrations}`);
  row('lookups in all: requests / activities', (x) => `${x.listRequests} / ${x.lookups}`);
  row('lookups of interrupted migrations: mean / worst', (x) => (x.interruptedMigrations ? `${(x.interruptedLookups / x.interruptedMigrations).toFixed(1)} / ${x.maxInterruptedLookups}` : '-'), 'target ≤ 2 per interrupted start');
  row('lookups after one start attempt (worst)', (x) => String(x.maxAfterAttempt), 'target ≤ 2 (one unknown outcome, whatever its cause)');
  for (const x of all) if (x.firstFailure) console.log(`  ${x.label} first failure: ${x.firstFailure}`);
}

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  console.log(`load average (1/5/15 min) at the start: ${loadavg().map((l) => l.toFixed(2)).join(' / ')} on ${cpus().length} cores`);
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-bench-chaos-'));
  buildWorker();
  const bundlePath = await writeWorkflowBundle(join(dataDir, 'workflow-bundle.js'));
  const all: Figures[] = [];
  try {
    all.push(await run(o, true, bundlePath, dataDir));
    print(o, all);
    if (o.calm) {
      all.push(await run(o, false, bundlePath, dataDir));
      print(o, all);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  process.exitCode = all.some((x) => x.failed > 0) ? 1 : 0;
}

main().catch((err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
