/**
 * The longhaul worker: runs every workflow and activity on one task queue, and activities also on a task queue
 * of its own (a feed poll's later steps, which need this process's data directory).
 *
 *   npm run worker            # = longhaul worker: this module in a child process with the malloc settings;
 *                             # connects per TEMPORAL_* settings, or to the embedded dev server
 *
 * `createLonghaulWorker` is also used by `npm start`, the demo, benchmarks and tests.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { NativeConnection, Worker, type Logger, type State, type WorkerOptions } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import type { ActivityDeps } from './activities/context';
import { processActivities, workflowsEntry } from './processes';
import { createGithubClient } from './http/github';
import { credentialActivityInterceptor } from './activities/credential-scope';
import { createGoogleClients, type GoogleClients } from './http/google';
import { loadConfig, type LonghaulConfig } from './config';
import { githubTokenProvider } from './http/github-auth';
import { GovernorLink } from './processes/rate-governor/activities/governor-link';
import type { ApiClient } from './http/api-client';
import { resolveTemporal, type TemporalTarget } from './temporal/connection';
import { NamespaceNotReadyError, prepareNamespace } from './temporal/setup-namespace';
import { releaseVersion } from './release';
import { ExitCode } from './common/exit-codes';
import { longhaulDataConverter } from './temporal/codec';
import { encodedFailuresBundlePath, workflowBundleOption, workflowBundleOptions as bundleOptionsOf } from './temporal/workflow-bundle';
import { installTelemetry, telemetrySettings } from './telemetry/runtime';
import { missingWorkerNodeFlags, WORKER_MALLOC_DEFAULTS } from './worker-env';
import { describeWorkerDeployment, workerDeploymentFromEnv } from './temporal/worker-versioning';
import { applyNetworkSettings, describeNetwork } from './http/proxy';
import { describeUnknown, setting, unknownSettings } from './settings';

export { encodedFailuresBundlePath };

/**
 * What the worker's workflow bundle is built from (the worker, `npm run build:bundle`, the tests' bundle and the
 * replay test's): the entry written from the list of processes (`workflowsEntry`), the workflows' interceptor and,
 * with `encodedFailures`, the failure converter.
 */
export function workflowBundleOptions(opts: { encodedFailures?: boolean } = {}): ReturnType<typeof bundleOptionsOf> {
  return bundleOptionsOf(workflowsEntry(), opts);
}

/** The workflow code built from the sources when the worker starts: the entry and how webpack finds its packages. */
function fromSources(): Pick<WorkerOptions, 'workflowsPath' | 'bundlerOptions'> {
  const { workflowsPath, webpackConfigHook } = workflowBundleOptions();
  return { workflowsPath, bundlerOptions: { webpackConfigHook } };
}

export interface LonghaulWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** A pre-built workflow bundle (tests and benchmarks bundle once); otherwise bundled from source. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra worker options (concurrency, shutdown grace…). */
  workerOptions?: Partial<WorkerOptions>;
  /** Payload encryption; defaults to the keys in `LONGHAUL_CODEC_KEYS` / `LONGHAUL_CODEC_KEY_FILE`, if any. */
  dataConverter?: DataConverter;
}

/**
 * The workflow code a worker runs. A failure converter is part of the bundle, so with encoded failures (a codec
 * key) a prebuilt bundle gives way to its encoded-failures sibling, or, when there is none, to a bundle built
 * from the sources at start: a bundle without it would write failures' messages into history in clear.
 */
function workflowCode(bundle: WorkerOptions['workflowBundle'], dataConverter: DataConverter | undefined): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'> {
  if (!bundle) return fromSources();
  if (!dataConverter?.failureConverterPath) return { workflowBundle: bundle };
  const sibling = 'codePath' in bundle ? encodedFailuresBundlePath(bundle.codePath) : undefined;
  return sibling && existsSync(sibling) ? { workflowBundle: { codePath: sibling } } : fromSources();
}

/**
 * The task queue of one worker process (activities only), new at every start: `<taskQueue>/worker/<host>-<pid>-<random>`.
 * Only this process polls it, so whatever an activity leaves in this process's data directory (a feed poll's spool)
 * is there for the activities scheduled on it; once the process is gone, nothing ever takes a task from it.
 */
export function workerQueueName(taskQueue: string, host: string = hostname()): string {
  return `${taskQueue}/worker/${host}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

/**
 * A worker process's two Temporal workers, run and stopped together: `shared` polls the fleet's task queue
 * (workflows and activities), `own` polls `workerQueue` (activities only). Temporal's samples call this a
 * worker-specific task queue.
 */
export class LonghaulWorker {
  constructor(
    readonly shared: Worker,
    readonly own: Worker,
    readonly workerQueue: string,
  ) {}

  getState(): State {
    return this.shared.getState();
  }

  /** Starts the graceful shutdown of both (each drains what it runs). */
  shutdown(): void {
    for (const w of [this.shared, this.own]) if (w.getState() === 'RUNNING') w.shutdown();
  }

  /** Runs both until shut down; when one stops (or fails), the other is shut down too. Throws the first failure. */
  async run(): Promise<void> {
    const results = await Promise.allSettled([this.shared, this.own].map((w) => w.run().finally(() => this.shutdown())));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/**
 * How often an activity's heartbeats reach the server, at most. The SDK's default sends the first at once and
 * then at most one per 80 % of the heartbeat timeout: 24 s for the archive download, whose heartbeat details are
 * its upload's checkpoint (`src/archive/object-store/upload.ts`). Another host's attempt continues from the checkpoint
 * the server holds, so a host SIGKILLed during a transfer shorter than that left only the first one (nothing
 * stored yet): the next attempt read the whole archive from GitHub's storage again, and to GCS, whose resume
 * trusts the checkpoint, sent it again. The activities call `heartbeat` every second (the download, the feed
 * control calls) or every third of a 10-s timeout (`whileBeating`), so this costs about one heartbeat request
 * per second per running download.
 */
export const HEARTBEAT_THROTTLE = '1 second';

export async function createLonghaulWorker(opts: LonghaulWorkerOptions): Promise<LonghaulWorker> {
  const workerQueue = workerQueueName(opts.taskQueue);
  // Every process's activities; two of the same name are refused here, before the worker polls (ActivityNameClash).
  const activities = await processActivities({ ...opts.deps, workerQueue });
  const dataConverter = opts.dataConverter ?? longhaulDataConverter();
  const deployment = workerDeploymentFromEnv();
  const activityInterceptors = [credentialActivityInterceptor, ...(opts.workerOptions?.interceptors?.activity ?? [])];
  const code = workflowCode(opts.workflowBundle, dataConverter);
  const shared = await Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities,
    dataConverter,
    ...code,
    // The release polls as its deployment version (seen on the task queue's pollers, `longhaul doctor`); routing
    // by version is off unless LONGHAUL_WORKER_VERSIONING=on (temporal/worker-versioning.ts).
    workerDeploymentOptions: deployment,
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
    ...opts.workerOptions,
    interceptors: {
      ...opts.workerOptions?.interceptors,
      // A prebuilt bundle carries its workflow interceptors already (see `workflowBundleOptions`).
      ...(code.workflowBundle ? {} : { workflowModules: workflowBundleOptions().workflowInterceptorModules }),
      activity: activityInterceptors,
    },
  });
  const { workflowBundle: _bundle, workflowsPath: _path, interceptors: _interceptors, ...activityOptions } = opts.workerOptions ?? {};
  const own = await Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    activities,
    dataConverter,
    // Unversioned: the queue lives as long as this process, and the version it would join would gather one
    // queue per process start. Only activities run here, scheduled by workflows that already chose this process.
    workerDeploymentOptions: { version: deployment.version, useWorkerVersioning: false },
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
    ...activityOptions,
    taskQueue: workerQueue,
    interceptors: { activity: activityInterceptors },
  });
  quietActivityOnly(own);
  return new LonghaulWorker(shared, own, workerQueue);
}

const NO_WORKFLOWS_WARNING = 'No workflows registered, not polling for workflow tasks';

/**
 * The SDK warns on stderr, at every start, that a worker without workflows polls no workflow tasks: for the
 * worker's own queue that is the point. Only that line is dropped (the worker's logger is an SDK field).
 */
function quietActivityOnly(worker: Worker): void {
  const logger = worker['logger'];
  const quiet: Logger = {
    log: (level, message, meta) => logger.log(level, message, meta),
    trace: (message, meta) => logger.trace(message, meta),
    debug: (message, meta) => logger.debug(message, meta),
    info: (message, meta) => logger.info(message, meta),
    warn: (message, meta) => (message === NO_WORKFLOWS_WARNING ? undefined : logger.warn(message, meta)),
    error: (message, meta) => logger.error(message, meta),
  };
  Object.defineProperty(worker, 'logger', { value: quiet });
}

/**
 * One client per configured GitHub credential. With the rate governor on (the default), each asks its
 * credential's `rate-governor:<name>` workflow before every request, so the whole fleet shares its budget.
 */
export function githubClientsFromConfig(config: LonghaulConfig): Record<string, ApiClient> {
  const clients: Record<string, ApiClient> = {};
  const { enabled, settings } = config.rateGovernor;
  for (const credential of config.githubCredentials) {
    clients[credential.name] = createGithubClient({
      baseUrl: credential.apiUrl,
      token: githubTokenProvider(credential),
      apiVersion: credential.apiVersion,
      budget: enabled ? new GovernorLink({ credential: credential.name, config: settings }) : undefined,
      spammedWaitMs: settings.spammedWaitMs,
    });
  }
  return clients;
}

/**
 * The Google clients share one budget: the Google credential's governor. Google announces no window, so
 * it is `windowless` — only its 429 `RetryInfo` (and 503 retry-after) answers close the fleet's gate.
 */
export function googleClientsFromConfig(config: LonghaulConfig): GoogleClients {
  const { enabled, settings } = config.rateGovernor;
  const budget = enabled ? new GovernorLink({ credential: config.googleCredential, api: 'google', config: { ...settings, windowless: true } }) : undefined;
  return createGoogleClients({ apikeys: config.googleApikeysUrl, logging: config.googleLoggingUrl, dns: config.googleDnsUrl }, { budget });
}

/** Activity dependencies from the environment (`GITHUB_API_URL`, `GITHUB_TOKEN`, …). */
export function activityDepsFromConfig(config: LonghaulConfig, overrides: Partial<ActivityDeps> = {}): ActivityDeps {
  const githubClients = githubClientsFromConfig(config);
  return {
    github: githubClients[config.githubCredentials[0].name],
    githubClients,
    google: googleClientsFromConfig(config),
    googleCredential: config.googleCredential,
    dataDir: config.dataDir,
    clock: Date.now,
    archiveUpload: config.archiveUpload,
    outbound: { allowedHosts: config.allowedHosts },
    ...overrides,
  };
}

/**
 * `LONGHAUL_MEMORY_LOG_SECONDS=N`: one line every N seconds on where the worker's memory is — the main
 * thread's V8 heap and the buffers it tracks, and the rest of the RSS, which `process.memoryUsage()` does not
 * break down: the workflow thread's own V8 heap, the SDK core (Rust), malloc arenas, code. See
 * docs/operations.md, "Worker memory".
 */
function logMemoryEvery(seconds: number): void {
  if (!(seconds > 0)) return;
  const mb = (bytes: number) => Math.round(bytes / 1048576);
  setInterval(() => {
    const m = process.memoryUsage();
    console.error(`[memory] rss ${mb(m.rss)} MB = V8 heap ${mb(m.heapTotal)} MB (used ${mb(m.heapUsed)}) + external ${mb(m.external)} MB + rest ${mb(m.rss - m.heapTotal - m.external)} MB (workflow thread's heap, SDK core, malloc, code)`);
  }, seconds * 1000).unref();
}

/**
 * Before any worker polls: the namespace has every search attribute this release needs (a workflow that upserts
 * one it lacks fails its workflow task for ever). What is missing is registered when the config allows it (by
 * default only on the embedded dev server); otherwise this throws `NamespaceNotReadyError` naming it.
 */
export async function checkNamespaceBeforePolling(
  connection: NativeConnection,
  target: Pick<TemporalTarget, 'namespace' | 'embedded'>,
  config: Pick<LonghaulConfig, 'registerSearchAttributes'>,
  log: (m: string) => void,
): Promise<void> {
  const registerMissing = config.registerSearchAttributes ?? target.embedded !== undefined;
  const done = await prepareNamespace(connection, target.namespace, { registerMissing });
  for (const line of done) log(`[namespace] ${line}`);
}

async function main(): Promise<void> {
  const config = loadConfig();
  // A typo in a setting's name is otherwise silent: the setting keeps its default.
  for (const unknown of unknownSettings()) console.warn(`warning: ${describeUnknown(unknown)}`);
  // Before any connection: the proxy and the company's CA for every client of this process.
  const network = applyNetworkSettings();
  const deployment = workerDeploymentFromEnv();
  const metricsUrl = installTelemetry(telemetrySettings());
  const target = await resolveTemporal((m) => console.log(`[temporal] ${m}`));
  const connection = await NativeConnection.connect(target.connectionOptions);
  await checkNamespaceBeforePolling(connection, target, config, (m) => console.log(m));
  const worker = await createLonghaulWorker({
    connection,
    namespace: target.namespace,
    taskQueue: config.taskQueue,
    deps: activityDepsFromConfig(config),
    // A pre-built bundle (`npm run build:bundle`) spares each worker start the webpack build and its memory.
    workflowBundle: workflowBundleOption(),
  });
  const credentials = config.githubCredentials.map((c) => `${c.name} → ${c.apiUrl} (API version ${c.apiVersion})`).join(', ');
  const governor = config.rateGovernor.enabled ? 'fleet-wide rate governor' : 'per-process rate limits (LONGHAUL_RATE_GOVERNOR=off)';
  // Before the "polling" line, which tells whoever started the worker that it is up.
  console.log(`worker ${describeWorkerDeployment(deployment)}`);
  console.log(`outbound: ${describeNetwork(network)}`);
  console.log(`longhaul worker ${releaseVersion()} polling task queue "${config.taskQueue}" (and its own, "${worker.workerQueue}"; data directory ${config.dataDir}) on ${target.connectionOptions.address} (GitHub credentials ${credentials}; ${governor})`);
  if (target.uiUrl) console.log(`Temporal UI: ${target.uiUrl}`);
  if (metricsUrl) console.log(`metrics: ${metricsUrl}`);
  logMemoryEvery(Number(setting('LONGHAUL_MEMORY_LOG_SECONDS') ?? 0));
  // glibc reads its malloc settings at the process's start only, and node its V8 flags: `longhaul worker` (and
  // `npm run worker`) and the Docker image set them; started any other way (`node dist/worker.js`) the worker
  // says what is missing.
  const missing = [
    ...(process.platform === 'linux' ? Object.entries(WORKER_MALLOC_DEFAULTS).filter(([name]) => process.env[name] === undefined).map(([n, v]) => `${n}=${v}`) : []),
    ...missingWorkerNodeFlags(),
  ];
  if (missing.length > 0) {
    console.log(`[memory] started without ${missing.join(' ')}: RSS grows by hundreds of MB under load (docs/operations.md, "Worker memory")`);
  }
  await worker.run();
  await connection.close();
  await target.embedded?.stop();
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(`worker: ${err.message}`);
    process.exit(err instanceof NamespaceNotReadyError ? ExitCode.NamespaceNotReady : 1);
  });
}
