/**
 * `npm run bench:polls` — what waiting costs at the default poll schedules: for each process, the polls and
 * the requests counted against the rate limit for a 10-minute and a 60-minute wait, and the detection delay
 * (how late the end is noticed) against the promise max(10 % of the elapsed wait, 30 s).
 *
 *   npm run bench:polls                 # computed from the schedule, then confirmed by real runs
 *   npm run bench:polls -- --computed   # the computed table only
 *   npm run bench:polls -- --fraction 15 --runs import   # another share of the wait (`--poll-fraction`)
 *
 * Computed: from the kit's schedule function, the one the workflows run. Confirmed: the real workflows on a
 * real worker against the emulator, on the Temporal time-skipping test server (an hour of timers passes in
 * seconds). The emulator's clock is the workflows' time: every activity attempt moves it to the server's time
 * as it starts, so the emulated export, import and DNS change end exactly W minutes into the wait.
 * The emulator counts every status poll and those it answered 304 (not counted against the primary limit);
 * each run's history shows what the waiting cost Temporal (events, workflow tasks).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, DefaultLogger } from '@temporalio/worker';
import { startEmulator, type Emulator } from '@longhaul/emulator';
import { writeWorkflowBundle } from '../src/bundle';
import { ensureTestServer } from '../test/servers/test-server';
import { createGithubClient } from '../src/http/github';
import { createGoogleClients } from '../src/http/google';
import { createLonghaulWorker, type LonghaulWorker } from '../src/worker';
import { ALL_SEARCH_ATTRIBUTES } from '../src/common/search-attributes';
import { DEFAULT_POLL } from '../src/processes/org-migration/model';
import type { ProcessName } from '../src/common/processes';
import { Process as MigrationProcess } from '../src/processes/org-migration/names';
import { Process as ImportProcess } from '../src/processes/source-import/names';
import { Process as GoogleProcess } from '../src/processes/google-operation/names';
import { DEFAULT_IMPORT_POLL } from '../src/processes/source-import/model';
import { DEFAULT_OPERATION_POLL } from '../src/processes/google-operation/model';
import { detectionDelayBoundMs, detectionDelays, HONEST_POLL_SHAPE, pollScheduleMs, pollsToObserve, type ResolvedPollBounds } from '../src/common/poll-schedule';
import { percentOfWait } from '../src/cli/kit/arguments';

const MINUTE = 60_000;
const WAITS_MIN = [10, 60];

interface PolledProcess {
  process: ProcessName;
  name: string;
  bounds: ResolvedPollBounds;
  /** Whether the status poll is conditional (GitHub ETags): unchanged answers are 304s, not counted. */
  etags: boolean;
}

const DEFAULT_PROCESSES: PolledProcess[] = [
  { process: MigrationProcess.OrgMigration, name: 'org-migration export', bounds: DEFAULT_POLL, etags: true },
  { process: ImportProcess.SourceImport, name: 'source import', bounds: DEFAULT_IMPORT_POLL, etags: true },
  { process: GoogleProcess.ApiKeyDelete, name: 'API-key delete', bounds: DEFAULT_OPERATION_POLL, etags: false },
  { process: GoogleProcess.LogBucketCreate, name: 'log-bucket create', bounds: DEFAULT_OPERATION_POLL, etags: false },
  { process: GoogleProcess.LogBucketUpdate, name: 'log-bucket update', bounds: DEFAULT_OPERATION_POLL, etags: false },
  { process: GoogleProcess.DnsChange, name: 'DNS change', bounds: DEFAULT_OPERATION_POLL, etags: false },
];

const s = (ms: number) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;

/** The share of the wait the schedules grow to: the defaults' 10 %, or `--fraction`. */
let fraction: number = HONEST_POLL_SHAPE.elapsedFraction;
let PROCESSES = DEFAULT_PROCESSES;

/** The worst detection delay over finishing instants up to `waitMs`, relative to the promise at that instant. */
function worstDelay(bounds: ResolvedPollBounds, waitMs: number): { finishedAtMs: number; delayMs: number; boundMs: number } {
  const worst = detectionDelays(bounds, waitMs)
    .map((d) => ({ ...d, boundMs: detectionDelayBoundMs(d.finishedAtMs, fraction) }))
    .reduce((a, b) => (b.delayMs / b.boundMs > a.delayMs / a.boundMs ? b : a));
  return worst;
}

/** Polls a GitHub migration's answers change on: the first, pending → exporting (at 20 %, the emulator's split), exported. */
function migrationCounted(bounds: ResolvedPollBounds, waitMs: number): number {
  let last = '';
  let counted = 0;
  for (const t of pollScheduleMs(bounds, waitMs)) {
    const state = t >= waitMs ? 'exported' : t >= 0.2 * waitMs ? 'exporting' : 'pending';
    if (state !== last) counted++;
    last = state;
  }
  return counted;
}

function printComputed(): void {
  const pct = `${fraction * 100} %`;
  const defaults = fraction === HONEST_POLL_SHAPE.elapsedFraction;
  console.log(`Computed from the schedule (the kit's pollScheduleMs / pollsToObserve) ${defaults ? 'at the defaults' : `with --poll-fraction ${fraction * 100}`}:`);
  console.log(`  shape: first poll after 30 s, every 30 s until ${pct} of the wait is longer, then ${pct} of the elapsed wait (×${1 + fraction}), ≤ 10 min`);
  for (const p of PROCESSES) {
    for (const w of WAITS_MIN) {
      const waitMs = w * MINUTE;
      const polls = pollsToObserve(waitMs, p.bounds);
      const seenAt = pollScheduleMs(p.bounds, waitMs).at(-1)!;
      const worst = worstDelay(p.bounds, waitMs);
      const counted = p.etags
        ? p.process === MigrationProcess.OrgMigration
          ? `${migrationCounted(p.bounds, waitMs)} (the other ${polls - migrationCounted(p.bounds, waitMs)} are 304s)`
          : 'one per poll that sees the body changed (304s are not counted): measured below'
        : `${polls} (operations carry no ETag)`;
      console.log(
        `  ${p.name.padEnd(22)} ${String(w).padStart(2)}-min wait: ${String(polls).padStart(2)} polls, counted ${counted}; ` +
          `end seen ${s(seenAt - waitMs)} late (bound ${s(detectionDelayBoundMs(waitMs, fraction))}); ` +
          `worst delay ${s(worst.delayMs)} for a finish ${s(worst.finishedAtMs)} into the wait (bound ${s(worst.boundMs)})`,
      );
    }
  }
}

/** What the interceptor saw of one workflow's activities: name and the server's (virtual) time. */
const seen = new Map<string, { type: string; atMs: number }[]>();
let virtualNowMs = 0;

/** The test server's clock (set once the environment exists). */
let serverTimeMs: () => Promise<number> = async () => Date.now();

/**
 * Moves the emulator's clock to the server's time as each activity attempt starts (skipped or not). Read from
 * the server: a retried attempt's `currentAttemptScheduledTimestampMs` is, on the test server, when the retry
 * was scheduled (the previous attempt's failure), one poll interval behind for a quiet poll's attempts.
 */
const clockFromServer: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      const info = Context.current().info;
      const atMs = await serverTimeMs();
      virtualNowMs = Math.max(virtualNowMs, atMs);
      const workflowId = info.workflowExecution?.workflowId ?? '';
      const list = seen.get(workflowId) ?? [];
      list.push({ type: info.activityType, atMs });
      seen.set(workflowId, list);
      return next(input);
    },
  },
});

interface RealRun {
  process: string;
  waitMin: number;
  workflowId: string;
  start: string;
  poll: string;
  route: string;
  emulator: Emulator;
}

async function confirm(waits: number[], only: string[]): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const path = await ensureTestServer((m) => console.log(`[test server] ${m}`));
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-bench-polls-'));
  const emulators: Emulator[] = [];
  const workers: { worker: LonghaulWorker; running: Promise<void> }[] = [];
  try {
    const indexed: Record<string, number> = { TEXT: 1, KEYWORD: 2, INT: 3, DOUBLE: 4, BOOL: 5, DATETIME: 6, KEYWORD_LIST: 7 };
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: Object.fromEntries(ALL_SEARCH_ATTRIBUTES.map((key) => [key.name, indexed[key.type]])),
    });
    serverTimeMs = () => env.currentTimeMs();
    virtualNowMs = await env.currentTimeMs();
    const bundlePath = await writeWorkflowBundle(join(dataDir, 'workflow-bundle.js'));
    const runs: RealRun[] = [];
    // One at a time: the Java test server stalls a workflow task completion when several workflows wait on
    // skipped timers at once (seen here: `respond_workflow_task_completed` timing out), and alone each takes ~2 s.
    const queued: (() => Promise<unknown>)[] = [];
    for (const w of waits) {
      const totalMs = w * MINUTE;
      // One emulator per wait length (the export, import and DNS change take exactly W minutes there).
      const emulator = await startEmulator({
        clock: () => virtualNowMs,
        rateLimit: { limit: 1_000_000 },
        migrations: { exportMs: totalMs, pendingFraction: 0.2, archiveBytes: 4_096 },
        imports: { detectingMs: totalMs * 0.05, importingMs: totalMs * 0.6, mappingMs: totalMs * 0.15, pushingMs: totalMs * 0.2 },
        google: { dns: { changeMs: totalMs } },
      });
      emulators.push(emulator);
      const taskQueue = `bench-polls-${w}`;
      const worker = await createLonghaulWorker({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue,
        deps: {
          github: createGithubClient({ baseUrl: emulator.apiUrl, token: () => 'bench-token' }),
          google: createGoogleClients(
            { apikeys: emulator.serviceUrl('google-apikeys'), logging: emulator.serviceUrl('google-logging'), dns: emulator.serviceUrl('google-dns') },
            { token: () => 'bench-token' },
          ),
          dataDir,
          clock: () => virtualNowMs,
        },
        workflowBundle: { codePath: bundlePath },
        workerOptions: { interceptors: { activity: [clockFromServer] } },
      });
      workers.push({ worker, running: worker.run() });
      const id = (name: string) => `bench-polls-${name}-${w}min`;
      // The workflows' own defaults, or the share of the wait `--fraction` chose (what `--poll-fraction` sends).
      const poll = fraction === HONEST_POLL_SHAPE.elapsedFraction ? {} : { poll: { elapsedFraction: fraction } };
      const execute = (type: string, workflowId: string, input: object) =>
        queued.push(() => env.client.workflow.execute(type, { taskQueue, workflowId, args: [{ ...input, ...poll }] }));
      if (only.includes('migration')) execute('orgMigration', id('migration'), { org: 'octo-org', repositories: ['alpha'], downloadDir: `archives-${w}` });
      if (only.includes('migration')) runs.push({ process: 'org-migration export', waitMin: w, workflowId: id('migration'), start: 'startMigration', poll: 'getMigration', route: 'GET /orgs/:org/migrations/:id', emulator });
      if (only.includes('import')) execute('sourceImport', id('import'), { owner: 'octo-org', repo: 'alpha', vcsUrl: 'https://svn.example.test/repos/happy' });
      if (only.includes('import')) runs.push({ process: 'source import', waitMin: w, workflowId: id('import'), start: 'startImport', poll: 'getImport', route: 'GET /repos/:owner/:repo/import', emulator });
      if (only.includes('dns')) {
        execute('dnsChange', id('dns'), {
          project: 'demo-project',
          zone: 'demo-zone',
          additions: [{ name: `bench-${w}.demo.example.com.`, type: 'A', ttl: 300, rrdatas: ['192.0.2.10'] }],
        });
      }
      if (only.includes('dns')) runs.push({ process: 'DNS change', waitMin: w, workflowId: id('dns'), start: 'createDnsChange', poll: 'getDnsChange', route: 'GET /dns/v1/projects/:project/managedZones/:zone/changes/:changeId', emulator });
    }
    const wallStart = Date.now();
    for (const run of queued) await run();
    console.log(`\nConfirmed by real runs (time-skipping test server, emulator on the workflows' clock; ${s(Date.now() - wallStart)} of wall time):`);
    for (const r of runs) {
      const acts = seen.get(r.workflowId) ?? [];
      const startAt = acts.find((a) => a.type === r.start)?.atMs;
      // A plain poll is an activity of its own; a quiet poll is one attempt of a `quietGet…` activity.
      const quietPoll = `quiet${r.poll[0].toUpperCase()}${r.poll.slice(1)}`;
      const polls = acts.filter((a) => a.type === r.poll || a.type === quietPoll);
      const events = (await env.client.workflow.getHandle(r.workflowId).fetchHistory()).events ?? [];
      const workflowTasks = events.filter((e) => e.workflowTaskCompletedEventAttributes).length;
      const keys = Object.keys(r.emulator.stats.byRoute);
      const routeKey = keys.find((k) => k === r.route) ?? keys.find((k) => k.startsWith('GET ') && k.endsWith(r.route.slice('GET '.length)));
      const requests = routeKey ? r.emulator.stats.byRoute[routeKey] : 0;
      const notModified = routeKey ? (r.emulator.stats.notCountedByRoute[routeKey] ?? 0) : 0;
      const lateMs = startAt === undefined || polls.length === 0 ? NaN : polls.at(-1)!.atMs - (startAt + r.waitMin * MINUTE);
      console.log(
        `  ${r.process.padEnd(22)} ${String(r.waitMin).padStart(2)}-min wait: ${String(polls.length).padStart(2)} polls ` +
          `(emulator: ${requests} status requests, ${requests - notModified} counted, ${notModified} answered 304); ` +
          `end seen ${s(lateMs)} late (bound ${s(detectionDelayBoundMs(r.waitMin * MINUTE, fraction))}); ` +
          `history ${events.length} events, ${workflowTasks} workflow tasks`,
      );
    }
  } finally {
    for (const { worker } of workers) worker.shutdown();
    await Promise.allSettled(workers.map((w) => w.running));
    await env.teardown();
    for (const e of emulators) await e.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const o = new Command()
    .option('--computed', 'print the computed table only')
    .option('--waits <minutes>', 'waits of the real runs, comma-separated', '10,60')
    .option('--runs <names>', 'processes of the real runs: migration, import, dns', 'migration,import,dns')
    .option('--fraction <percent>', 'share of the wait the schedules grow to, as `--poll-fraction` (default 10)', percentOfWait)
    .parse()
    .opts<{ computed?: boolean; waits: string; runs: string; fraction?: number }>();
  if (o.fraction !== undefined) {
    fraction = o.fraction;
    PROCESSES = DEFAULT_PROCESSES.map((p) => ({ ...p, bounds: { ...p.bounds, elapsedFraction: o.fraction } }));
  }
  printComputed();
  if (!o.computed) await confirm(o.waits.split(',').map(Number), o.runs.split(','));
}

main().catch((err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
