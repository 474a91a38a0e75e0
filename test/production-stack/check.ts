/**
 * `npm run check:production-stack` (not part of `npm test`): longhaul on a production-shape Temporal outside
 * Docker — the real server binary at the version docker-compose.yml pins, on PostgreSQL from Debian's packages,
 * SQL visibility, the namespace set up by `longhaul setup-namespace` (`test/production-stack/stack.ts`) — and,
 * against it, a chaos run with the compiled worker as separate processes, as the Docker image runs it:
 *
 *   1. stack      build (or find) the server, start PostgreSQL, apply the schemas, start the server, set up the namespace
 *   2. workers    two worker processes on one task queue, an in-process GitHub emulator with slow exports
 *   3. start      `longhaul migrate --repos-file … --lock` starts 20 migrations of 2 repositories and 1 of 30
 *   4. list       `longhaul list --state exporting --running` answers on SQL visibility mid-run
 *   5. status     `longhaul status` of a running migration, by its natural key (--org, --repos)
 *   6. chaos      5 worker SIGKILLs (each restarted), a Temporal server restart, a PostgreSQL restart
 *   7. results    every migration completed, archive downloaded, repositories unlocked; each export started once,
 *                 each repository unlocked once
 *   8. list       `longhaul list --process org-migration --state exported --closed` lists all 21 on SQL visibility,
 *                 the 30-repository one too (its LonghaulTarget within what SQL visibility keeps of a Keyword)
 *   9. status     `longhaul status` of a completed migration
 *  10. doctor     `longhaul doctor` against the stack: connection, namespace, search attributes, the workers' versions
 *  11. upgrade    the upgrade test (test/upgrade) against the stack, as a child `npx vitest run test/upgrade` with
 *                 LONGHAUL_UPGRADE_TEST_ADDRESS / _NAMESPACE: the previous release's processes, its worker
 *                 SIGKILLed, this release deployed by Worker Versioning on the real server; its table
 *
 * Prints one line per step with its figures; exits 1 on any failure, the upgrade test's included.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify, stripVTControlCharacters } from 'node:util';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { COMPOSE_FILE, startProductionStack, type ProductionStack } from './stack';
import { startEmulator, type Emulator } from '@longhaul/emulator';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { migrationWorkflowId, type OrgMigrationResult } from '../../src/processes/org-migration/model';
import { LonghaulTarget } from '../../src/common/search-attributes';
import { buildWorker, startWorkerProcess } from '../../bench/worker-process';

const MIGRATIONS = 20;
const REPOS_PER_MIGRATION = 2;
/**
 * One more migration, of this many repositories: its LonghaulTarget lists them ("wide-repo-00, wide-repo-01, …"),
 * longer than the 255 characters SQL visibility keeps of a Keyword.
 */
const WIDE_MIGRATION_REPOS = 30;
const WORKER_KILLS = 5;
const ORG = 'prod-org';
const TOKEN = 'production-stack-check-token';
const TASK_QUEUE = 'longhaul-production-check';
/** Exports long enough that the chaos happens while they run, and spread so migrations end all through it. */
const EXPORT_MS: [number, number] = [20_000, 150_000];
/** How long PostgreSQL stays down. */
const POSTGRES_DOWN_MS = 5_000;
/** Between two chaos steps, so each one meets work in another state. */
const CHAOS_SPACING_MS = 12_000;

const root = join(__dirname, '..', '..');
const run = promisify(execFile);
const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s`;
const say = (line: string) => console.log(`[${elapsed()}] ${line}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

class CheckFailure extends Error {}
function expect(condition: boolean, what: string): void {
  if (!condition) throw new CheckFailure(what);
}

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `bin/longhaul.js <args>` as a user runs it, against the stack (`env` added). */
function longhaul(stack: ProductionStack, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [join(root, 'bin', 'longhaul.js'), ...args],
      { cwd: root, env: { ...process.env, TEMPORAL_ADDRESS: stack.address, TEMPORAL_NAMESPACE: stack.namespace, LONGHAUL_TASK_QUEUE: TASK_QUEUE, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

interface ListRow {
  workflowId: string;
  workflowStatus: string;
  state?: string;
}

/** `longhaul list … --json`, its rows. */
async function list(stack: ProductionStack, args: string[]): Promise<ListRow[]> {
  const res = await longhaul(stack, ['list', ...args, '--json']);
  expect(res.code === 0, `longhaul list ${args.join(' ')} exited ${res.code}: ${res.stderr.trim()}`);
  return (JSON.parse(res.stdout) as { workflows: ListRow[] }).workflows;
}

/** SQL visibility is written after the fact (the history service's visibility queue): ask until it agrees. */
async function listUntil(stack: ProductionStack, args: string[], done: (rows: ListRow[]) => boolean, timeoutMs = 60_000): Promise<{ rows: ListRow[]; asks: number }> {
  const deadline = Date.now() + timeoutMs;
  for (let asks = 1; ; asks++) {
    const rows = await list(stack, args);
    if (done(rows) || Date.now() > deadline) return { rows, asks };
    await pause(1_000);
  }
}

/**
 * `npx vitest run test/upgrade` against the stack (vitest's global setup still starts its own dev server, which the
 * test leaves alone: LONGHAUL_UPGRADE_TEST_ADDRESS points it at the stack). Its output goes to `logFile`; resolves
 * with its exit code and output.
 */
function upgradeTest(stack: ProductionStack, logFile: string, started: (child: ChildProcess) => void): Promise<{ code: number; output: string }> {
  const child = spawn('npx', ['vitest', 'run', 'test/upgrade'], {
    cwd: root,
    env: { ...process.env, LONGHAUL_UPGRADE_TEST_ADDRESS: stack.address, LONGHAUL_UPGRADE_TEST_NAMESPACE: stack.namespace, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started(child);
  const log = createWriteStream(logFile);
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (d: Buffer) => {
      output += d.toString();
      log.write(d);
    });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => log.end(() => resolve({ code: code ?? (signal ? 128 : 1), output }))));
}

/** The upgrade test's own report: its `[upgrade]` lines, its timeline and table, vitest's totals. */
const upgradeReport = (output: string) =>
  stripVTControlCharacters(output)
    .split('\n')
    .filter((l) => /^\[upgrade\]|^ {2}\d+\.\d s \S|^\||^ *(Test Files|Tests) /.test(l));

interface Worker {
  pid: number;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

async function main(): Promise<void> {
  console.log(`production-stack check: load average ${loadavg().map((l) => l.toFixed(2)).join(' / ')} on ${cpus().length} cores`);
  const dir = await mkdtemp(join(tmpdir(), 'longhaul-production-check-'));
  let stack: ProductionStack | undefined;
  let emulator: Emulator | undefined;
  let connection: Connection | undefined;
  const workers: Worker[] = [];
  let upgrade: ChildProcess | undefined;
  // Ctrl-C: PostgreSQL runs detached (pg_ctl), so stop the stack rather than leave it behind.
  const interrupted = () => {
    console.error(`[${elapsed()}] interrupted: stopping the stack`);
    if (upgrade?.pid && upgrade.exitCode === null) process.kill(-upgrade.pid, 'SIGKILL');
    void Promise.all(workers.map((w) => w.kill()))
      .then(() => stack?.stop())
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    // 1. The stack.
    say('step 1: production-shape Temporal');
    stack = await startProductionStack({ log: (m) => say(`  ${m}`) });
    const t = stack.timings;
    const composePostgres = /image:\s*(postgres:\S+)/.exec(await readFile(COMPOSE_FILE, 'utf8'))?.[1];
    say(`  docker-compose.yml runs temporalio/server:${stack.serverVersion} (this run: the same) and ${composePostgres} (this run: ${stack.postgresVersion})`);
    say(
      `  build ${t.buildMs ? seconds(t.buildMs) : 'cached'} · PostgreSQL init+start ${seconds(t.postgresMs)} · schemas ${seconds(t.schemaMs)} · ` +
        `server start ${seconds(t.serverStartMs)} · setup-namespace ${seconds(t.namespaceMs)} (+ ${seconds(t.attributesMs)} until its attributes are queryable)`,
    );

    // 2. Workers and the emulator.
    say('step 2: compiled worker ×2 (separate processes), GitHub emulator');
    buildWorker();
    // `npm run build:bundle` as the Docker image builds it (its webpack report stays out of this one).
    const bundle = join(dir, 'workflow-bundle.js');
    await run(process.execPath, [join(root, 'dist', 'temporal', 'bundle.js'), bundle]);
    const fixture = defaultGithubFixture();
    fixture.accounts.push({ id: 6000, login: ORG, type: 'Organization' });
    const repos = Array.from({ length: MIGRATIONS * REPOS_PER_MIGRATION }, (_, i) => `repo-${String(i).padStart(2, '0')}`);
    const wide = Array.from({ length: WIDE_MIGRATION_REPOS }, (_, i) => `wide-repo-${String(i).padStart(2, '0')}`);
    const groups = [...Array.from({ length: MIGRATIONS }, (_, m) => repos.slice(m * REPOS_PER_MIGRATION, (m + 1) * REPOS_PER_MIGRATION)), wide];
    const total = groups.length;
    const totalRepos = groups.flat().length;
    groups.flat().forEach((name, i) => fixture.repositories.push({ id: 20_000 + i, name, owner: ORG, private: false, workflowsEnabled: false }));
    emulator = await startEmulator({ token: TOKEN, fixture, migrations: { exportMs: EXPORT_MS, archiveBytes: 64 * 1024 } });
    const env = {
      TEMPORAL_ADDRESS: stack.address,
      TEMPORAL_NAMESPACE: stack.namespace,
      GITHUB_API_URL: emulator.apiUrl,
      GITHUB_TOKEN: TOKEN,
      LONGHAUL_TASK_QUEUE: TASK_QUEUE,
      LONGHAUL_DATA_DIR: join(dir, 'data'),
      LONGHAUL_WORKFLOW_BUNDLE: bundle,
      LONGHAUL_METRICS_ADDRESS: 'off',
    };
    let started = 0;
    const startWorker = async (): Promise<Worker> => {
      const w = await startWorkerProcess(env, { logFile: join(dir, `worker-${++started}.log`) });
      return {
        pid: w.pid,
        stop: w.stop,
        async kill() {
          if (w.child.exitCode !== null || w.child.signalCode !== null) return;
          const exited = new Promise((r) => w.child.once('exit', r));
          w.child.kill('SIGKILL');
          await exited;
        },
      };
    };
    workers.push(...(await Promise.all([startWorker(), startWorker()])));
    say(`  workers pid ${workers.map((w) => w.pid).join(', ')} polling ${TASK_QUEUE}; exports take ${EXPORT_MS[0] / 1000}–${EXPORT_MS[1] / 1000} s`);

    // 3. Twenty migrations, started by the CLI from a repos file.
    say(`step 3: longhaul migrate --repos-file (${MIGRATIONS} migrations × ${REPOS_PER_MIGRATION} repositories and 1 × ${WIDE_MIGRATION_REPOS}, --lock)`);
    const reposFile = join(dir, 'repos.txt');
    await writeFile(reposFile, groups.map((g) => g.join(', ')).join('\n') + '\n');
    const migrate = await longhaul(stack, ['migrate', '--org', ORG, '--repos-file', reposFile, '--lock', '--poll-initial', '2', '--poll-max', '5', '--json']);
    expect(migrate.code === 0, `longhaul migrate exited ${migrate.code}: ${migrate.stderr.trim()}`);
    const ids = groups.map((g) => migrationWorkflowId(ORG, g));
    const startedRows = (JSON.parse(migrate.stdout) as { migrations: { workflowId: string; workflowStatus: string }[] }).migrations;
    expect(startedRows.length === total && startedRows.every((r) => r.workflowStatus === 'RUNNING' && ids.includes(r.workflowId)), `migrate did not start the ${total} migrations: ${migrate.stdout}`);
    say(`  ${startedRows.length} started (${ids[0]} … ${ids[ids.length - 1]})`);

    connection = await Connection.connect({ address: stack.address });
    const client = new Client({ connection, namespace: stack.namespace });
    // Each result is awaited from now on: the client follows the run across the restarts below.
    const outcomes = ids.map((id) =>
      client.workflow
        .getHandle(id)
        .result()
        .then((r: OrgMigrationResult) => ({ id, result: r, endedAt: Date.now() }))
        .catch((err: Error) => ({ id, error: err, endedAt: Date.now() })),
    );
    let completed = 0;
    for (const o of outcomes) void o.then(() => completed++);

    // 4. list --state exporting, mid-run.
    say('step 4: longhaul list --state exporting --running (SQL visibility, mid-run)');
    // Exports begin `pending` (a fifth of their time): ask until half of them are listed, or a minute passed.
    const exporting = await listUntil(stack, ['--process', 'org-migration', '--state', 'exporting', '--running', '--limit', '100'], (rows) => rows.length >= total / 2);
    expect(exporting.rows.length > 0, 'list --state exporting --running never listed a migration');
    expect(exporting.rows.every((r) => r.state === 'exporting' && r.workflowStatus === 'RUNNING' && ids.includes(r.workflowId)), `list --state exporting answered rows of another state: ${JSON.stringify(exporting.rows)}`);
    say(`  ${exporting.rows.length} of ${total} listed as exporting (after ${exporting.asks} ask(s)); ${completed} completed so far`);

    // 5. status of a running migration, by its key.
    say('step 5: longhaul status --org … --repos … (a running migration)');
    const running = exporting.rows[0].workflowId;
    const group = groups[ids.indexOf(running)];
    const st = await longhaul(stack, ['status', '--org', ORG, '--repos', group.join(','), '--json']);
    expect(st.code === 0, `longhaul status exited ${st.code}: ${st.stderr.trim()}`);
    const view = JSON.parse(st.stdout) as { workflowId: string; workflowStatus: string; state?: string; line?: string };
    expect(view.workflowId === running && view.line !== undefined, `status of ${running} answered without its status line: ${st.stdout}`);
    say(`  ${view.workflowId}  ${view.workflowStatus}  state ${view.state}: ${view.line}`);

    // 6. Chaos.
    say(`step 6: chaos — ${WORKER_KILLS} worker SIGKILLs, a Temporal server restart, a PostgreSQL restart, ${CHAOS_SPACING_MS / 1000} s apart`);
    const plan = ['kill', 'kill', 'server', 'kill', 'postgres', 'kill', 'kill'] as const;
    let kills = 0;
    let serverDownMs = 0;
    let postgresDownMs = 0;
    for (const step of plan) {
      await pause(CHAOS_SPACING_MS);
      if (step === 'kill') {
        const victim = workers[kills % workers.length];
        await victim.kill();
        kills++;
        const restarted = Date.now();
        workers[(kills - 1) % workers.length] = await startWorker();
        say(`  SIGKILL #${kills}: worker pid ${victim.pid} killed; pid ${workers[(kills - 1) % workers.length].pid} polling ${seconds(Date.now() - restarted)} later · ${completed}/${total} completed`);
      } else if (step === 'server') {
        serverDownMs = await stack.restartServer();
        say(`  Temporal server restarted (SIGTERM, start): frontend answering again after ${seconds(serverDownMs)} · ${completed}/${total} completed`);
      } else {
        postgresDownMs = await stack.restartPostgres(POSTGRES_DOWN_MS);
        say(`  PostgreSQL restarted (fast shutdown, ${POSTGRES_DOWN_MS / 1000} s down, start): back after ${seconds(postgresDownMs)} · ${completed}/${total} completed`);
      }
    }
    expect(kills === WORKER_KILLS, `${kills} kills, not ${WORKER_KILLS}`);

    // 7. Every migration to its end.
    say('step 7: every migration to its end');
    const results = await Promise.all(outcomes);
    const failed = results.filter((r) => 'error' in r);
    expect(failed.length === 0, `${failed.length} migration(s) failed: ${failed.map((f) => `${f.id}: ${(f as { error: Error }).error.message}`).join('; ')}`);
    const ok = results as { id: string; result: OrgMigrationResult }[];
    for (const { id, result } of ok) {
      const g = groups[ids.indexOf(id)];
      expect(result.state === 'exported' && result.archive.bytes === 64 * 1024, `${id}: archive ${result.archive.bytes} bytes`);
      expect(result.unlockedRepositories.slice().sort().join() === g.join(), `${id}: unlocked ${result.unlockedRepositories.join(', ')}`);
      const archive = await readFile(join(env.LONGHAUL_DATA_DIR, result.archive.path)).catch(() => readFile(result.archive.path));
      expect(archive.length === result.archive.bytes, `${id}: the archive on disk has ${archive.length} bytes`);
    }
    const starts = emulator.stats.byRoute['POST /orgs/:org/migrations'] ?? 0;
    const unlocks = emulator.stats.byRoute['DELETE /orgs/:org/migrations/:id/repos/:repo/lock'] ?? 0;
    say(`  ${ok.length}/${total} migrations completed (archives on disk, ${totalRepos} repositories unlocked) across ${kills} SIGKILLs, 1 server restart, 1 PostgreSQL restart`);
    say(`  the emulator received ${starts} migration starts and ${unlocks} unlocks (each once: ${total} / ${totalRepos}); ${emulator.stats.requests} API requests in all`);
    expect(starts === total, `${starts} migration starts for ${total} migrations`);
    expect(unlocks === totalRepos, `${unlocks} unlocks for ${totalRepos} locked repositories`);

    // 8. list --state exported, closed: a completed migration stays listed under the export's last state.
    say('step 8: longhaul list --process org-migration --org … --state exported --closed (SQL visibility)');
    const done = await listUntil(stack, ['--process', 'org-migration', '--org', ORG, '--state', 'exported', '--closed', '--limit', '100'], (rows) => rows.length >= total);
    const listed = new Set(done.rows.map((r) => r.workflowId));
    const wideId = ids[ids.length - 1];
    const wideTarget = (await client.workflow.getHandle(wideId).describe()).typedSearchAttributes.get(LonghaulTarget) ?? '';
    expect(listed.has(wideId), `the ${WIDE_MIGRATION_REPOS}-repository migration (LonghaulTarget of ${wideTarget.length} characters) is missing from SQL visibility`);
    expect(done.rows.length === total && ids.every((id) => listed.has(id)), `list --state exported --closed listed ${done.rows.length} of ${total}`);
    expect(done.rows.every((r) => r.workflowStatus === 'COMPLETED'), `list --state exported --closed: ${JSON.stringify(done.rows.filter((r) => r.workflowStatus !== 'COMPLETED'))}`);
    const stillExporting = await list(stack, ['--state', 'exporting', '--running']);
    expect(stillExporting.length === 0, `list --state exporting --running still lists ${stillExporting.length}`);
    say(`  ${done.rows.length}/${total} listed as exported, COMPLETED (after ${done.asks} ask(s)), the ${WIDE_MIGRATION_REPOS}-repository one with a LonghaulTarget of ${wideTarget.length} characters; list --state exporting --running: ${stillExporting.length}`);

    // 9. status of a completed migration.
    say('step 9: longhaul status <workflow id> (a completed migration)');
    const st2 = await longhaul(stack, ['status', ids[0]]);
    expect(st2.code === 0 && st2.stdout.includes('COMPLETED'), `status ${ids[0]} exited ${st2.code}: ${st2.stdout}${st2.stderr}`);
    for (const line of st2.stdout.trim().split('\n')) say(`  ${line}`);

    // 10. doctor, with the workers' environment (their credential), while they poll.
    say('step 10: longhaul doctor');
    const doctor = await longhaul(stack, ['doctor'], { GITHUB_API_URL: env.GITHUB_API_URL, GITHUB_TOKEN: TOKEN });
    for (const line of doctor.stdout.trim().split('\n')) say(`  ${line}`);
    expect(doctor.code === 0, `longhaul doctor exited ${doctor.code}: ${doctor.stderr.trim()}`);

    // 11. The upgrade test, against the stack.
    say('step 11: the upgrade test (npx vitest run test/upgrade) against the stack');
    const upgradeLog = join(dir, 'upgrade-test.log');
    const upgraded = await upgradeTest(stack, upgradeLog, (child) => (upgrade = child));
    const report = upgradeReport(upgraded.output);
    for (const line of report) say(`  ${line}`);
    if (upgraded.code !== 0 && report.length < 5) for (const line of upgraded.output.trim().split('\n').slice(-40)) say(`  ${line}`);
    expect(upgraded.code === 0, `the upgrade test exited ${upgraded.code} (its output: ${upgradeLog})`);
    // It ran here, not on vitest's dev server: its deployment is on the stack, its release current.
    const { workerDeployments } = await client.workflowService.listWorkerDeployments({ namespace: stack.namespace });
    const deployed = workerDeployments.filter((d) => d.name?.startsWith('longhaul-upgrade-')).map((d) => `${d.name}.${d.routingConfig?.currentDeploymentVersion?.buildId ?? '(no current version)'}`);
    expect(deployed.length === 1, `the stack has ${deployed.length} upgrade-test deployments: ${deployed.join(', ')}`);
    say(`  on the stack: worker deployment version ${deployed[0]} current (listWorkerDeployments)`);

    say(`PASS: Temporal ${stack.serverVersion} on ${stack.postgresVersion}; load average ${loadavg().map((l) => l.toFixed(2)).join(' / ')}`);
  } catch (err) {
    console.error(`[${elapsed()}] FAIL: ${(err as Error).message}`);
    if (!(err instanceof CheckFailure)) console.error((err as Error).stack);
    // The stack's directory goes with it: keep its server log beside the workers' logs.
    if (stack) await copyFile(stack.serverLog, join(dir, 'temporal-server.log')).catch(() => undefined);
    console.error(`the server's and the workers' logs are kept in ${dir}`);
    process.exitCode = 1;
  } finally {
    await Promise.all(workers.map((w) => w.stop().catch(() => undefined)));
    await connection?.close();
    await emulator?.close();
    await stack?.stop();
    if (!process.exitCode) await rm(dir, { recursive: true, force: true });
  }
}

void main();
