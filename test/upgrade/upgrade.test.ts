/**
 * The upgrade test: the previous release (checked out of git history into the cache, `previous-release.ts`)
 * starts every long-running process with its own CLI and worker, as real processes against the shared dev
 * server (or the server LONGHAUL_UPGRADE_TEST_ADDRESS names) and the emulator. Its worker is SIGKILLed with all
 * of them in flight; this release is deployed by the documented procedure (docs/operations.md, "Upgrading"): a
 * versioned worker, then its version made current. Every workflow must end as it would have without the upgrade:
 * no failed workflow task (non-determinism), none left running that should have ended, nothing locked, nothing
 * sent twice. Prints one row per process type.
 *
 * The emulator's clock runs at wall speed while the old release works, so every process is caught mid-way
 * (exports, imports and Google operations take 10 emulated minutes); once the new release runs, it runs 40
 * times faster, so they end within seconds.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { inject } from 'vitest';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import type { Emulator } from '@longhaul/emulator';
import { feedCursorWorkflowId, feedScheduleId } from '../../src/processes/feed-poll/model';
import { hookRepairScheduleId } from '../../src/processes/hook-repair/model';
import { governorWorkflowId } from '../../src/processes/rate-governor/model';
import { cachedCliPath } from '../../src/temporal/cli-binary';
import { releaseVersion } from '../../src/release';
import { requestsTo, startTestEmulator, TEST_TOKEN } from '../helpers/emulator';
import { previousRelease, type PreviousRelease } from '../helpers/previous-release';
import { scheduleRuns, triggerAndWait, cleanUp } from '../helpers/schedules';
import { testClient, type TemporalServer } from '../helpers/temporal';
import { eventually, sleep, waitFor } from '../helpers/wait';
import { applicationFailureOf } from '../helpers/failures';
import { importCredentialsUpdate } from '../../src/processes/source-import/workflow';
import { startWorkerProcess, stopWorkerProcesses, WORKER_START_GUARD_MS } from '../helpers/worker-process';
import { everySendRecorded, sendsWhileKnown, sentRequests, waitsAnswered } from '../helpers/fleet-news';

const EventType = temporal.api.enums.v1.EventType;
const MIN = 60_000;
const SPEED_AFTER_UPGRADE = 40;
/** The limited credential's window: the governor holds its wait this long. */
const GOVERNED_WINDOW_MS = 40_000;
/**
 * @format milliseconds — how long the emulator holds the answer to the redelivery the crash is to lose: past the kill
 * (nothing is asserted on it; it ends within the test, about when the lost attempt times out).
 */
const HELD_ANSWER_MS = 60_000;
/** Requests in the governed credential's window: the start and the first poll spend it. */
const GOVERNED_LIMIT = 2;

/** Wall time until the test holds or speeds it up; never goes backwards. */
const emulatorClock = {
  anchorWall: Date.now(),
  anchorEmulated: Date.now(),
  speed: 1,
  now(): number {
    return this.anchorEmulated + (Date.now() - this.anchorWall) * this.speed;
  },
  setSpeed(speed: number): void {
    this.anchorEmulated = this.now();
    this.anchorWall = Date.now();
    this.speed = speed;
  },
};

const id = randomUUID().slice(0, 8);
const TASK_QUEUE = `upgrade-${id}`;
const DEPLOYMENT = `longhaul-upgrade-${id}`;
// Credentials (and so governors) of this test alone: governors are per namespace, shared with other files.
const GITHUB = `up${id}`;
const GOOGLE = `upg${id}`;
const GOVERNED = `gov${id}`;
const FEED = '/repos/octo-org/upgrade-feed/events';
const HOOK = { owner: 'octo-org', repo: 'upgrade-hooks' };
const KEY = 'projects/demo-project/locations/global/keys/demo-key-1';
/**
 * An import the old release starts with an `env:` reference (wrong credentials, so it waits for new ones): the new
 * release never resolves a reference, not even to a variable that now holds the right ones; a configured name ends it.
 */
const SVN_USER = 'svn-upgrade';
const SVN_PASSWORD = 'right-pw-7c1e';
const OLD_REFERENCE = 'UPGRADE_OLD_SVN';
let hookId = 0;

/**
 * The Temporal server the test runs against: the suite's dev server, or the one LONGHAUL_UPGRADE_TEST_ADDRESS
 * (and LONGHAUL_UPGRADE_TEST_NAMESPACE, `default` when unset) names: `npm run check:production-stack` runs this
 * test against its production-shape server.
 */
const server: TemporalServer = process.env.LONGHAUL_UPGRADE_TEST_ADDRESS
  ? { address: process.env.LONGHAUL_UPGRADE_TEST_ADDRESS, namespace: process.env.LONGHAUL_UPGRADE_TEST_NAMESPACE || 'default' }
  : { address: inject('temporalAddress'), namespace: inject('temporalNamespace') };

interface Row {
  process: string;
  workflow: string;
  startedOn: string;
  endedOn: string;
  how: string;
}

describe('upgrading from the previous release while every long-running process is in flight', () => {
  let release: PreviousRelease;
  let e: Emulator;
  /** Its own emulator with a tight rate limit, for the governor's wait. */
  let governed: Emulator;
  let client: Client;
  let dataDir: string;
  const oldProcesses: ChildProcess[] = [];

  beforeAll(async () => {
    release = await previousRelease((m) => console.log(`[upgrade] ${m}`));
    const fixture = defaultGithubFixture();
    for (const [i, name] of ['upgrade-m1', 'upgrade-m2', 'upgrade-import', 'upgrade-feed', 'upgrade-hooks', 'upgrade-import-auth'].entries()) {
      fixture.repositories.push({ id: 8100 + i, name, owner: 'octo-org', private: false, workflowsEnabled: false });
    }
    e = await startTestEmulator({
      fixture,
      clock: () => emulatorClock.now(),
      migrations: { exportMs: 10 * MIN, pendingFraction: 0, archiveBytes: 10_000 },
      imports: { detectingMs: 1_000, importingMs: 10 * MIN, mappingMs: 5 * MIN, pushingMs: MIN, requiredCredentials: { username: SVN_USER, password: SVN_PASSWORD } },
      google: { apikeys: { deleteOperationMs: 10 * MIN } },
      feeds: { eventsPerMinute: 1, initialEvents: 5, pollIntervalSeconds: 1 },
    });
    const governedFixture = defaultGithubFixture();
    governedFixture.repositories.push({ id: 8200, name: 'upgrade-governed', owner: 'octo-org', private: false, workflowsEnabled: false });
    governed = await startTestEmulator({ fixture: governedFixture, migrations: { exportMs: 1_000, archiveBytes: 4_096 }, rateLimit: { limit: GOVERNED_LIMIT, windowMs: GOVERNED_WINDOW_MS } });
    client = await testClient(server);
    dataDir = await mkdtemp(join(tmpdir(), 'longhaul-upgrade-'));
  }, 900_000);

  afterAll(async () => {
    for (const p of oldProcesses) if (p.exitCode === null && p.signalCode === null) process.kill(-p.pid!, 'SIGKILL');
    await stopWorkerProcesses();
    await cleanUp(client, [feedScheduleId(FEED), hookRepairScheduleId(HOOK, hookId)], [feedCursorWorkflowId(FEED), governorWorkflowId(GITHUB), governorWorkflowId(GOOGLE), governorWorkflowId(GOVERNED)]);
    await client?.connection.close();
    await e?.close();
    await governed?.close();
  });

  /** What both releases' workers and CLIs are given: the same server, task queue, APIs, data directory. */
  const env = (): Record<string, string> => ({
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    LONGHAUL_TASK_QUEUE: TASK_QUEUE,
    LONGHAUL_DATA_DIR: dataDir,
    LONGHAUL_METRICS_ADDRESS: 'off',
    LONGHAUL_LOG_LEVEL: 'WARN',
    GITHUB_API_URL: e.apiUrl,
    GITHUB_TOKEN: TEST_TOKEN,
    LONGHAUL_GITHUB_CREDENTIAL: GITHUB,
    LONGHAUL_GITHUB_CREDENTIALS: GOVERNED,
    [`GITHUB_${GOVERNED.toUpperCase()}_API_URL`]: governed.apiUrl,
    [`GITHUB_${GOVERNED.toUpperCase()}_TOKEN`]: TEST_TOKEN,
    LONGHAUL_RATE_RESERVE: '0',
    GOOGLE_APIKEYS_URL: e.serviceUrl('google-apikeys'),
    GOOGLE_LOGGING_URL: e.serviceUrl('google-logging'),
    GOOGLE_DNS_URL: e.serviceUrl('google-dns'),
    GOOGLE_ACCESS_TOKEN: TEST_TOKEN,
    LONGHAUL_GOOGLE_CREDENTIAL: GOOGLE,
  });

  /** The old release's `longhaul` command, run from its checkout. */
  async function oldCli(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await promisify(execFile)(process.execPath, [join(release.dir, 'bin', 'longhaul.js'), ...args, '--json'], { cwd: release.dir, env: { ...process.env, ...env() }, timeout: 120_000 }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`old release: longhaul ${args.join(' ')} failed: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  /**
   * The old release's worker as its users start it (`longhaul worker`), in a process group of its own to SIGKILL;
   * with `sent-requests.cjs` preloaded through `NODE_OPTIONS` (its code is not ours to change): what it sent, and
   * what its answers told it, in its output.
   */
  async function startOldWorker(): Promise<{ child: ChildProcess; output: () => string; killOnOutput: (seen: (output: string) => boolean) => Promise<void> }> {
    const preload = `--require ${join(__dirname, '..', 'helpers', 'sent-requests.cjs')}`;
    const child = spawn(process.execPath, [join(release.dir, 'bin', 'longhaul.js'), 'worker'], {
      cwd: release.dir,
      env: {
        ...process.env,
        ...env(),
        NODE_OPTIONS: [process.env.NODE_OPTIONS, preload].filter(Boolean).join(' '),
        LONGHAUL_WORKFLOW_BUNDLE: release.bundlePath,
        [OLD_REFERENCE]: `${SVN_USER}:a-wrong-password`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    oldProcesses.push(child);
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await waitFor('the old release\u2019s worker to poll', () => (child.exitCode === null ? output : `exited: ${output}`), (o) => o.includes('polling task queue') || o.startsWith('exited'), WORKER_START_GUARD_MS, 100);
    if (child.exitCode !== null) throw new Error(`the old release's worker exited:\n${output}`);
    /**
     * SIGKILLs the process group in the same callback that reads the output `seen` is waiting for (no timer, no
     * await in between: nothing the worker does after writing it reaches the test before the kill); resolves once
     * it has exited.
     */
    const killOnOutput = (seen: (output: string) => boolean) =>
      new Promise<void>((resolve) => {
        const exited = () => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()));
        const check = () => {
          if (!seen(output)) return;
          child.stdout!.off('data', check);
          child.stderr!.off('data', check);
          process.kill(-child.pid!, 'SIGKILL');
          exited();
        };
        child.stdout!.on('data', check);
        child.stderr!.on('data', check);
        check();
      });
    return { child, output: () => output, killOnOutput };
  }

  /** The documented rollout, step 2: make the new build current (`temporal worker deployment set-current-version`). */
  async function setCurrentVersion(buildId: string): Promise<string> {
    const cli = cachedCliPath();
    const args = ['worker', 'deployment', 'set-current-version', '--address', server.address, '--namespace', server.namespace, '--deployment-name', DEPLOYMENT, '--build-id', buildId, '--yes'];
    // The version exists once its worker's first poll reached the server.
    return eventually(() => promisify(execFile)(cli, args).then((r) => r.stdout, () => undefined), 'the new version to be made current', 30_000, 500);
  }

  it('ends every workflow the previous release started, on the new release, as it would have ended without the upgrade', async () => {
    const timeline: string[] = [];
    onTestFailed(() => console.log(timeline.join('\n')));
    const mark = (what: string) => timeline.push(`${((Date.now() - started) / 1000).toFixed(1)} s ${what}`);
    const started = Date.now();
    expect(release.version).not.toBe(releaseVersion());

    // 1. The previous release: its worker, and every long-running process started by its CLI.
    const { output: oldOutput, killOnOutput } = await startOldWorker();
    mark(`old release ${release.version} worker polling`);
    hookId = e.hooks.create(HOOK, { url: 'https://receiver.example.test/hook', secret: 'x' }).id;
    const now = Date.now();
    for (let i = 0; i < 20; i++) e.hooks.addDelivery(hookId, { at: now - 3 * 3_600_000 + i * 1000, statusCode: 200 });
    const failedGuids = Array.from({ length: 14 }, (_, i) => e.hooks.addDelivery(hookId, { at: now - 2 * 3_600_000 + i * 1000, statusCode: 502 }).guid);
    e.feeds.ensure(FEED);

    const fast = ['--poll-initial', '1', '--poll-max', '2'];
    // The feed's first poll and the hook repair's run follow their schedules' creation, beside the other commands.
    const [migration, imported, keyDeletion, [feedSchedule, firstPoll], [hookSchedule, hookRunId], importedAuth] = await Promise.all([
      oldCli('migrate', '--org', 'octo-org', '--repo', 'upgrade-m1', '--repo', 'upgrade-m2', '--lock', ...fast),
      oldCli('import', '--owner', 'octo-org', '--repo', 'upgrade-import', '--vcs-url', 'https://svn.example.test/repos/happy', ...fast),
      oldCli('apikey-delete', '--name', KEY, ...fast, '--poll-timeout', '600'),
      oldCli('feed-schedule', '--feed', FEED, '--every', '1h', '--paused', '--sink', 'file:upgrade/feed.jsonl').then(async (created) => [created, await oldCli('feed-poll', '--feed', FEED, '--wait')] as const),
      oldCli('hook-repair-schedule', '--repo', `${HOOK.owner}/${HOOK.repo}`, '--hook-id', String(hookId), '--every', '1h', '--paused').then(async (created) => {
        await client.schedule.getHandle(hookRepairScheduleId(HOOK, hookId)).trigger();
        return [created, await eventually(async () => (await scheduleRuns(client, hookRepairScheduleId(HOOK, hookId)))[0], 'the hook repair run')] as const;
      }),
      oldCli('import', '--owner', 'octo-org', '--repo', 'upgrade-import-auth', '--vcs-url', 'https://svn.example.test/repos/needs-auth', '--credentials', `env:${OLD_REFERENCE}`, ...fast),
    ]);
    expect(feedSchedule).toMatchObject({ scheduleId: feedScheduleId(FEED), created: true });
    expect(hookSchedule).toMatchObject({ scheduleId: hookRepairScheduleId(HOOK, hookId) });
    expect(firstPoll).toMatchObject({ kind: 'delivered', workflowStatus: 'COMPLETED' });
    const deliveredBefore = firstPoll.delivered as number;
    expect(deliveredBefore).toBeGreaterThanOrEqual(5);
    mark(`old CLI started 4 processes and 2 schedules; feed cursor delivered ${deliveredBefore} events; hook repair run started`);

    // The new release's worker starts now, versioned and not yet current (the documented procedure's first step:
    // it takes no task of the unversioned runs until its version is made current, after the crash below), so its
    // start overlaps the old release's work instead of following the crash. The new workers hold the import
    // credential by name, and (to show it is never read) the old reference's variable with the right credentials.
    const newWorkerStarted = startWorkerProcess({
      ...env(),
      LONGHAUL_WORKER_VERSIONING: 'on',
      LONGHAUL_WORKER_DEPLOYMENT: DEPLOYMENT,
      [OLD_REFERENCE]: `${SVN_USER}:${SVN_PASSWORD}`,
      LONGHAUL_IMPORT_CREDENTIALS: SVN_USER,
      LONGHAUL_IMPORT_SVN_UPGRADE_USERNAME: SVN_USER,
      LONGHAUL_IMPORT_SVN_UPGRADE_PASSWORD: SVN_PASSWORD,
    }, { recordSends: true });
    newWorkerStarted.catch(() => undefined);

    // Caught mid-way: a hook repair run part way through its redeliveries, the export polled while exporting, the
    // import importing with carol's mapping waiting for her to turn up, the Google operation polled while pending;
    // last, the governed credential's window spent (the governor holding the wait).
    // The hook repair first: the held redelivery's attempt is lost with the killed worker and retried once its
    // start-to-close timeout (the old release's 60 s) has passed, counted from its start, not from the kill.
    await waitFor('a few redeliveries to be made', () => e.hooks.redeliveries().length, (n) => n >= 3, 60_000, 50);
    // The next redelivery is made, and its answer held until the worker is dead (whatever comes before the kill
    // takes): the crash loses an answer.
    e.setFaults([{ method: 'POST', path: '/attempts', kind: 'slow', afterProcessing: true, delayMs: HELD_ANSWER_MS, times: 1 }]);
    const redeliveredBeforeKill = await waitFor('a redelivery whose answer is held', () => e.hooks.redeliveries().length, (n) => n >= 4, 60_000, 50);
    expect(redeliveredBeforeKill, 'the hook repair run is mid-run').toBeLessThan(failedGuids.length);
    const handle = (w: unknown) => client.workflow.getHandle((w as { workflowId: string }).workflowId);
    const exportId = await eventually(() => e.migrations.all().find((m) => m.repositories.some((r) => r.name === 'upgrade-m1'))?.id, 'the export to start');
    await waitFor('the export to be polled while exporting', () => e.requestLog.filter((r) => r.method === 'GET' && r.path.endsWith(`/migrations/${exportId}`)).length, (n) => n >= 2, 60_000);
    expect(e.migrations.stateOf(exportId)).toBe('exporting');
    await waitFor('the import to be importing', () => e.requestLog.filter((r) => r.method === 'GET' && r.path.endsWith('/upgrade-import/import')).length, (n) => n >= 2, 60_000);
    const mapping = await oldCli('import-map-author', '--owner', 'octo-org', '--repo', 'upgrade-import', '--remote', 'carol', '--name', 'Carol Danvers', '--email', 'carol@example.com');
    expect(mapping).toMatchObject({ accepted: true, result: { waitingForAuthors: true } });
    await waitFor('the import with an env: reference to wait for credentials', () => e.imports.status('octo-org', 'upgrade-import-auth'), (st) => st === 'detection_needs_auth', 60_000);
    const wrongDigest = e.imports.get('octo-org', 'upgrade-import-auth')!.credentials?.passwordSha256;
    expect(wrongDigest, 'the old release sent what its reference named').toBeDefined();
    await waitFor('the key deletion to be polled while pending', () => e.requestLog.filter((r) => r.method === 'GET' && r.path.includes('/operations/')).length, (n) => n >= 1, 60_000);
    const window = () => Object.values(governed.rateLimiter.fleetStats())[0]?.windows ?? [];
    mark(`mid-way: export ${e.migrations.stateOf(exportId)}, carol's mapping pending, key deletion pending, hook repair ${redeliveredBeforeKill}/${failedGuids.length} redelivered`);

    // 2. The old worker dies as in a crash (no shutdown, nothing handed back) while the governor holds a wait: a
    // migration on the governed credential is started last, and the worker is killed on the line that says it
    // read the answer that spent the window (`sent-requests.cjs`), in the callback that reads it. Which comes
    // first is an order, not a race with a clock: the worker could send again only after the window's reset
    // (40 s), and the kill does not wait for anything.
    const governedOrigin = new URL(governed.apiUrl).origin;
    const toldToWait = (output: string) => output.includes(governedOrigin) && waitsAnswered({ output: () => output }, governedOrigin).length > 0;
    const crashed = killOnOutput(toldToWait);
    const governedMigration = await oldCli('migrate', '--org', 'octo-org', '--repo', 'upgrade-governed', '--credential', GOVERNED, ...fast);
    await crashed;
    e.setFaults([]);
    const killedAt = Date.now();
    mark(`old worker SIGKILLed once told to wait on the governed credential (window ${window()[0]?.used ?? 0}/${GOVERNED_LIMIT} spent)`);

    // 3. The new release, by the documented procedure: its versioned worker (started above), its version made current.
    const newWorker = await newWorkerStarted;
    expect(newWorker.output()).toContain(`versioned as ${DEPLOYMENT}.${releaseVersion()}`);
    mark(`new release ${releaseVersion()} worker polling (versioned, not yet current)`);
    const currentFrom = Date.now();
    expect(await setCurrentVersion(releaseVersion())).toContain('Successfully set the current worker deployment version');
    mark(`${DEPLOYMENT}.${releaseVersion()} made current`);

    // The import the old release started with an env: reference: the reference is refused (typed, nothing sent),
    // the configured name is sent.
    const authImport = handle(importedAuth);
    const refusedReference = applicationFailureOf(await authImport.executeUpdate(importCredentialsUpdate, { args: [{ credentials: `env:${OLD_REFERENCE}` }] }).catch((err: unknown) => err));
    expect(refusedReference.type).toBe('CredentialReferenceRefused');
    expect(e.imports.get('octo-org', 'upgrade-import-auth')!.credentials?.passwordSha256, 'nothing sent for the reference').toBe(wrongDigest);
    expect(await authImport.executeUpdate(importCredentialsUpdate, { args: [{ credentials: SVN_USER }] })).toMatchObject({ credentials: SVN_USER });
    mark('the old import with an env: reference refused it on the new release and took a configured name');

    // 4. Every process ends: the ones on wall time (the hook repair, the governed migration) and, with the emulator
    // 40 times faster meanwhile, the export, the import and the key deletion, whose ends are the emulator's.
    emulatorClock.setSpeed(SPEED_AFTER_UPGRADE);
    const hookRun = client.workflow.getHandle(hookRunId);
    const endOf = (h: WorkflowHandle, what: string) => ended(h).then((result) => (mark(`${what} ended`), result));
    const [hookResult, governedResult, migrationResult, importResult, keyResult, authImportResult] = (await Promise.all([
      endOf(hookRun, 'hook repair run'),
      endOf(handle(governedMigration), 'governed migration'),
      endOf(handle(migration), 'export'),
      endOf(handle(imported), 'import'),
      endOf(handle(keyDeletion), 'key deletion'),
      endOf(authImport, 'import with an env: reference'),
    ])) as [
      { allAccepted: boolean; redeliveredGuids: string[]; counts: { redelivered: number } },
      { archive?: { path: string } },
      { archive: { path: string; sha256: string }; unlockedRepositories: string[] },
      { status: string; authorsMapped: { remoteId: string; name: string }[] },
      { name: string; deleteTime?: string },
      { status: string },
    ];
    // The feed, with the emulator's clock held so the events it shows stay put: the cursor remembered what
    // the old release delivered; the next scheduled run delivers only what came since.
    emulatorClock.setSpeed(0);
    const feedResult = await triggerAndWait<{ kind: string; delivered: number }>(client, feedScheduleId(FEED));
    mark('feed run ended');

    // Nothing sent twice, nothing left undone or locked.
    const produced = e.feeds.produced(FEED).map((ev) => String(ev.id));
    const sinkIds = (await readFile(join(dataDir, 'upgrade', 'feed.jsonl'), 'utf8')).trim().split('\n').map((line) => String((JSON.parse(line) as { event: { id: string } }).event.id));
    expect(new Set(sinkIds).size).toBe(sinkIds.length);
    expect([...sinkIds].sort()).toEqual([...produced].sort());
    expect(feedResult).toMatchObject({ kind: 'delivered', delivered: produced.length - deliveredBefore });
    expect(hookResult.allAccepted).toBe(true);
    expect([...hookResult.redeliveredGuids].sort()).toEqual([...failedGuids].sort());
    expect(e.hooks.redeliveries().map((r) => r.guid).sort()).toEqual([...failedGuids].sort());
    expect(e.migrations.all().filter((m) => m.repositories.some((r) => r.name === 'upgrade-m1'))).toHaveLength(1);
    expect(['upgrade-m1', 'upgrade-m2'].filter((repo) => e.migrations.isLocked('octo-org', repo))).toEqual([]);
    expect(migrationResult.unlockedRepositories.sort()).toEqual(['upgrade-m1', 'upgrade-m2']);
    expect(importResult.status).toBe('complete');
    expect(importResult.authorsMapped.map((a) => [a.remoteId, a.name])).toContainEqual(['carol', 'Carol Danvers']);
    expect(authImportResult.status).toBe('complete');
    expect(e.imports.get('octo-org', 'upgrade-import-auth')!.credentials?.username).toBe(SVN_USER);
    expect(requestsTo(e, 'DELETE', '/keys/')).toBe(1);
    expect(keyResult.name).toBe(KEY);
    expect(governedResult.archive?.path).toBeTruthy();
    // The governed credential: no limited answer, and neither release's worker sent a request after its answers had
    // told it to wait (the spent window's reset) and before that reset; every request the API saw is in their
    // records. The emulator's count of arrivals more than 250 ms after the limiting answer is printed, not asserted.
    expect(window().reduce((n, w) => n + w.limitedAnswers, 0)).toBe(0);
    const senders = [{ output: oldOutput }, newWorker];
    await everySendRecorded(senders, governedOrigin, () => governed.stats.requests);
    const [told] = waitsAnswered({ output: oldOutput }, governedOrigin);
    expect(told, 'the old release was told to wait').toBeDefined();
    // The governor held the wait when the old worker died: it had sent nothing since it was told.
    expect(sentRequests({ output: oldOutput }, governedOrigin).filter((r) => r.at > told.at), 'the old release sent after it was told to wait').toEqual([]);
    for (const [i, w] of senders.entries()) expect(sendsWhileKnown(sentRequests(w, governedOrigin), waitsAnswered(w, governedOrigin)), ['old', 'new'][i]).toEqual([]);
    console.log(`governed credential: ${governed.stats.requests} requests; arrived by the API's clock while limited, beyond 250 ms: ${governed.stats.requestsWhileLimited}`);

    // Every workflow: no failed workflow task, started on the old release, its last task on the new one.
    const newWorkerIdentity = `${newWorker.pid}@`;
    const rows: Row[] = [];
    const row = async (process: string, h: WorkflowHandle, how: string, expectRunning = false) => {
      const description = await h.describe();
      const { events } = await h.fetchHistory();
      const tasks = (events ?? []).filter((ev) => ev.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      const failures = (events ?? []).filter((ev) => ev.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED).map((ev) => ev.workflowTaskFailedEventAttributes?.failure?.message);
      expect(failures, `${process}: failed workflow tasks`).toEqual([]);
      // A task the killed worker held (started, or waiting on its sticky queue) times out: the crash's cost, once.
      // Any other timed-out task is one nobody could run: a wedge.
      const timedOut = (events ?? []).filter((ev) => ev.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT);
      const byId = new Map((events ?? []).map((ev) => [String(ev.eventId), ev]));
      const wedged = timedOut.filter((ev) => {
        const started = byId.get(String(ev.workflowTaskTimedOutEventAttributes?.startedEventId));
        const scheduled = byId.get(String(ev.workflowTaskTimedOutEventAttributes?.scheduledEventId));
        const onKilledWorker = started ? !started.workflowTaskStartedEventAttributes?.identity?.startsWith(newWorkerIdentity) : scheduled?.workflowTaskScheduledEventAttributes?.taskQueue?.kind === temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY;
        return !onKilledWorker || Number(String(ev.eventTime?.seconds ?? 0)) * 1000 < killedAt - 1000;
      });
      expect(wedged.map((ev) => ev.eventId?.toString()), `${process}: workflow tasks that timed out, not on the killed worker`).toEqual([]);
      // The new worker, polling since before the crash, took no task of these runs until its version was current.
      const earlyOnNew = (events ?? []).filter((ev) => {
        const identity = ev.workflowTaskStartedEventAttributes?.identity ?? ev.activityTaskStartedEventAttributes?.identity;
        return identity?.startsWith(newWorkerIdentity) && Number(String(ev.eventTime?.seconds ?? 0)) * 1000 < currentFrom - 1000;
      });
      expect(earlyOnNew.map((ev) => ev.eventId?.toString()), `${process}: tasks on the new worker before its version was current`).toEqual([]);
      expect(description.status.name, process).toBe(expectRunning ? 'RUNNING' : 'COMPLETED');
      const first = tasks[0].workflowTaskCompletedEventAttributes!;
      const last = tasks.at(-1)!.workflowTaskCompletedEventAttributes!;
      const version = last.deploymentVersion ? `${last.deploymentVersion.deploymentName}.${last.deploymentVersion.buildId}` : 'unversioned';
      expect(first.identity?.startsWith(newWorkerIdentity), `${process}: first task on the old worker`).toBe(false);
      expect(last.identity?.startsWith(newWorkerIdentity), `${process}: last task on the new worker`).toBe(true);
      const lost = timedOut.length ? `; ${timedOut.length} task(s) lost with the killed worker, timed out` : '';
      rows.push({ process, workflow: h.workflowId, startedOn: release.version, endedOn: `${releaseVersion()} (${version}, ${behaviourName(description.raw.workflowExecutionInfo?.versioningInfo?.behavior)})`, how: how + lost });
    };
    await row('org migration (mid-export)', handle(migration), `archive ${migrationResult.archive.path.split('/').pop()}, unlocked ${migrationResult.unlockedRepositories.join(', ')}, 1 export`);
    await row('source import (mapping pending)', handle(imported), `complete, carol mapped after the upgrade`);
    await row('source import (env: reference, waiting for credentials)', authImport, `reference refused on the new release, complete with the configured name`);
    await row('Google operation (apikey-delete)', handle(keyDeletion), `deleted, 1 DELETE sent`);
    await row('feed cursor (entity)', client.workflow.getHandle(feedCursorWorkflowId(FEED)), `${deliveredBefore} events before, ${feedResult.delivered} after, none twice`, true);
    await row('hook repair run (mid-run)', hookRun, `${redeliveredBeforeKill} redelivered before the kill (the last one's answer lost), ${hookResult.counts.redelivered} in all, each guid once`);
    await row('rate governor (holding a wait)', client.workflow.getHandle(governorWorkflowId(GOVERNED)), `no request while limited; its migration ended`, true);
    await row('org migration on the governed credential', handle(governedMigration), `completed after the window reset`);
    mark('every workflow checked');

    const table = [
      '| process | started on | ended on | how |',
      '|---|---|---|---|',
      ...rows.map((r) => `| ${r.process} | ${r.startedOn} | ${r.endedOn} | ${r.how} |`),
    ];
    console.log([`[upgrade] ${release.version} (${release.sha.slice(0, 12)}${release.prepared ? ', prepared now' : ', from the cache'}) → ${releaseVersion()}; every workflow ended and checked ${((Date.now() - killedAt) / 1000).toFixed(0)} s after the kill`, ...timeline.map((t) => `  ${t}`), ...table].join('\n'));
  }, 600_000);
});

/**
 * A workflow's result; fails at once, with the failure's message, when one of its workflow tasks fails (a
 * non-determinism error never ends the workflow: it would wait for a worker that can replay it, for ever).
 */
async function ended(h: WorkflowHandle): Promise<unknown> {
  let done = false;
  const watch = (async () => {
    while (!done) {
      const { events } = await h.fetchHistory();
      const failed = (events ?? []).find((ev) => ev.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
      if (failed) throw new Error(`${h.workflowId}: a workflow task failed: ${failed.workflowTaskFailedEventAttributes?.failure?.message}`);
      await sleep(1_000);
    }
  })();
  try {
    return await Promise.race([h.result(), watch]);
  } finally {
    done = true;
    watch.catch(() => undefined);
  }
}

function behaviourName(behaviour: temporal.api.enums.v1.VersioningBehavior | null | undefined): string {
  return behaviour ? temporal.api.enums.v1.VersioningBehavior[behaviour].replace('VERSIONING_BEHAVIOR_', '') : 'no behaviour';
}
