/**
 * What the stack commands of `longhaul` run (loaded only by them: the worker and emulator are heavy):
 *
 * - `start`: the whole stack on the embedded default. Temporal: the configured server (TEMPORAL_ADDRESS…) or
 *   the embedded dev server (SQLite under the data directory, Web UI on http://localhost:8233, search
 *   attributes registered). APIs: the real ones when their base URLs are set (GITHUB_API_URL…), otherwise
 *   the emulator. A worker on the longhaul task queue.
 * - `demo`: the same, then one organization migration of the emulator's fixture to the end with live
 *   progress; the stack stays up until Ctrl-C (`--exit` stops).
 * - `server` (the dev server only), `worker`, `emulator`, `setup-namespace`, `codec-server`.
 *
 * Logs go to stderr; stdout carries only results (the demo's result).
 */
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { installTelemetry, telemetrySettings } from '../telemetry/runtime';
import { readFileSync } from 'node:fs';
import { codecServerSettings, ConfigError, loadConfig, readSecret } from '../config';
import { resolveTemporal, workflowUiUrl } from '../temporal/connection';
import { createLonghaulWorker, activityDepsFromConfig, checkNamespaceBeforePolling } from '../worker';
import { NamespaceNotReadyError } from '../temporal/setup-namespace';
import { releaseVersion } from '../release';
import { ExitCode } from '../common/exit-codes';
import { createGithubClient } from '../http/github';
import { createGoogleClients } from '../http/google';
import { applyNetworkSettings } from '../http/proxy';
import { startEmulator, STANDALONE_GOOGLE_PORTS, type Emulator } from '@longhaul/emulator';
import { portIsOpen } from '../temporal/dev-server';
import { workflowBundleOption } from '../temporal/workflow-bundle';
import { codecKeysFromEnv, EncryptionCodec, longhaulDataConverter } from '../temporal/codec';
import { CodecServerConfigError, DEFAULT_CODEC_SERVER_PORT, startCodecServer, type RunningCodecServer } from '../temporal/codec-server';
import type { OrgMigrationInput } from '../processes/org-migration/model';
import { runWorkflowCommand } from './kit/run-workflow';
import { migrationCommand } from '../processes/org-migration/cli';
import { CliError, type CliContext } from './kit/context';
import { DEMO_BUCKET, describeStoredObject, startDemoObjectStore, type DemoStore } from './demo-store';
import { setting } from '../settings';

export const log = (m: string) => console.error(m);

/** Token the worker sends to the emulator when no GITHUB_TOKEN is set (the emulator accepts any). */
const EMULATOR_DEMO_TOKEN = 'longhaul-emulator-demo-token';
const EMULATOR_PORT = 8787;
const STORAGE_PORT = 8788;

interface Stack {
  stop(): Promise<void>;
  uiUrl?: string;
  namespace: string;
  address: string;
  taskQueue: string;
  emulator?: Emulator;
}

async function startStack(log: (m: string) => void, env: NodeJS.ProcessEnv, demo = false): Promise<Stack> {
  const config = loadConfig(env);
  applyNetworkSettings(env);
  const metricsUrl = installTelemetry(telemetrySettings(process.env, { logLevel: 'WARN' }));
  if (metricsUrl) log(`[worker] metrics on ${metricsUrl}`);
  // With encrypted payloads the embedded UI decodes through a local codec server, so history stays readable there.
  const codec = await startCodecServerIfKeys(log);
  const target = await resolveTemporal((m) => log(`[temporal] ${m}`), process.env, { uiCodecEndpoint: codec?.url });

  let emulator: Emulator | undefined;
  let deps = activityDepsFromConfig(config);
  if (!config.githubApiUrlConfigured) {
    const fixedPorts = [EMULATOR_PORT, STORAGE_PORT, ...Object.values(STANDALONE_GOOGLE_PORTS)];
    const free = (await Promise.all(fixedPorts.map((p) => portIsOpen('127.0.0.1', p)))).every((open) => !open);
    emulator = await startEmulator({
      port: free ? EMULATOR_PORT : 0,
      storagePort: free ? STORAGE_PORT : 0,
      googlePorts: free ? STANDALONE_GOOGLE_PORTS : {},
      // `start` keeps the emulator's state beside temporal.sqlite, so a restart mid-migration lets it finish;
      // the demo starts fresh each time (a demo killed mid-way would otherwise leave its repositories locked).
      ...(demo ? {} : { dataDir: join(config.dataDir, 'emulator') }),
      // The demo slows exports and the storage origin down a little so each phase can be watched.
      ...(demo ? { migrations: { exportMs: 8_000, archiveBytes: 4 * 1024 * 1024 }, storageBytesPerSecond: 1024 * 1024 } : {}),
      // LONGHAUL_EMULATOR_EXPORT_MS makes the emulator's exports last that long, to try status, list and cancel by hand.
      ...(emulatorExportMs() ? { migrations: { exportMs: emulatorExportMs(), ...(demo ? { archiveBytes: 4 * 1024 * 1024 } : {}) } } : {}),
    });
    log(`[emulator] GITHUB_API_URL is not set: using the emulator at ${emulator.apiUrl} (storage ${emulator.storage.baseUrl}; state ${emulator.persistence ? `in ${emulator.persistence.file}` : 'in memory'})`);
    // The emulator serves both REST API versions: the default credential's is the one asked for, as against GitHub.
    deps = { ...deps, github: createGithubClient({ baseUrl: emulator.apiUrl, token: () => readSecret('GITHUB_TOKEN') ?? EMULATOR_DEMO_TOKEN, apiVersion: config.githubCredentials[0].apiVersion }) };
    if (!process.env.GOOGLE_APIKEYS_URL && !process.env.GOOGLE_LOGGING_URL && !process.env.GOOGLE_DNS_URL) {
      const url = (name: string) => emulator!.serviceUrl(name);
      const google = createGoogleClients(
        { apikeys: url('google-apikeys'), logging: url('google-logging'), dns: url('google-dns') },
        { token: () => readSecret('GOOGLE_ACCESS_TOKEN') ?? EMULATOR_DEMO_TOKEN },
      );
      deps = { ...deps, google };
      log(`[emulator] GOOGLE_*_URL are not set: Google API Keys, Logging and DNS calls go to the emulator at ${url('google-apikeys')}, ${url('google-logging')} and ${url('google-dns')}`);
    }
  } else if (!readSecret('GITHUB_TOKEN')) {
    log('warning: GITHUB_API_URL is set but GITHUB_TOKEN is not; API calls will be unauthenticated');
  }

  const connection = await NativeConnection.connect(target.connectionOptions);
  try {
    await checkNamespaceBeforePolling(connection, target, config, log);
  } catch (err) {
    if (err instanceof NamespaceNotReadyError) throw new CliError(err.message, ExitCode.NamespaceNotReady);
    throw err;
  }
  const worker = await createLonghaulWorker({
    connection,
    namespace: target.namespace,
    taskQueue: config.taskQueue,
    deps,
    // As `longhaul worker`: a pre-built bundle (`npm run build:bundle`) spares the webpack build.
    workflowBundle: workflowBundleOption(),
  });
  const running = worker.run();
  log(`[worker] longhaul ${releaseVersion()} polling task queue "${config.taskQueue}" (and its own, "${worker.workerQueue}"; data directory ${config.dataDir})`);
  return {
    uiUrl: target.uiUrl,
    namespace: target.namespace,
    address: target.connectionOptions.address ?? '127.0.0.1:7233',
    taskQueue: config.taskQueue,
    emulator,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
      await emulator?.close();
      await target.embedded?.stop();
      await codec?.close();
    },
  };
}

function emulatorExportMs(): number | undefined {
  const ms = Number(setting('LONGHAUL_EMULATOR_EXPORT_MS'));
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/**
 * The embedded stack's codec server, when payloads are encrypted: with the configured token (the embedded UI
 * cannot send one, so it then shows payloads encrypted; `temporal --codec-endpoint … --codec-auth` can), or
 * without one only when the operator chose `LONGHAUL_CODEC_SERVER_AUTH=off` (loopback). Neither: none, and the UI
 * shows payloads encrypted.
 */
async function startCodecServerIfKeys(log: (m: string) => void): Promise<RunningCodecServer | undefined> {
  const keys = codecKeysFromEnv();
  if (keys.length === 0) return undefined;
  const settings = codecServerSettings();
  if (settings.tokens.length === 0 && !settings.authOff) {
    log('[codec] payloads are encrypted; no codec server runs, so the Web UI shows them encrypted. LONGHAUL_CODEC_SERVER_AUTH=off lets the embedded UI decode them through a codec server on loopback without a token (anyone on this machine could then decrypt)');
    return undefined;
  }
  const port = (await portIsOpen('127.0.0.1', DEFAULT_CODEC_SERVER_PORT)) ? 0 : DEFAULT_CODEC_SERVER_PORT;
  const server = await startConfiguredCodecServer({ port }, log);
  log(`[codec] payloads are encrypted with key ${keys[0].id}; the Web UI decodes them through ${server.url}${settings.tokens.length > 0 ? ' (it needs a token, which the embedded UI cannot send: payloads show encrypted there)' : ' (no token: LONGHAUL_CODEC_SERVER_AUTH=off)'}`);
  return server;
}

/** `longhaul codec-server`, and the embedded stack's: the keys and `LONGHAUL_CODEC_SERVER_*` settings, `overrides` from flags. */
export async function startConfiguredCodecServer(
  overrides: { port?: number; host?: string; corsOrigins?: string[] },
  log: (m: string) => void,
): Promise<RunningCodecServer> {
  const keys = codecKeysFromEnv();
  if (keys.length === 0) throw new CliError('no key configured: set LONGHAUL_CODEC_KEYS or LONGHAUL_CODEC_KEY_FILE', ExitCode.Usage);
  try {
    const settings = codecServerSettings();
    const tls = settings.tls ? { cert: readFileSync(settings.tls.certFile), key: readFileSync(settings.tls.keyFile) } : undefined;
    return await startCodecServer({
      codec: new EncryptionCodec(keys),
      host: overrides.host ?? settings.host,
      port: overrides.port ?? DEFAULT_CODEC_SERVER_PORT,
      corsOrigins: overrides.corsOrigins ?? settings.corsOrigins,
      hostNames: settings.hostNames,
      tokens: settings.tokens,
      allowUnauthenticatedLoopback: settings.authOff,
      tls,
      log,
    });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof CodecServerConfigError) throw new CliError(err.message, ExitCode.Usage);
    throw err;
  }
}

export function untilInterrupted(stack: Pick<Stack, 'stop'>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = () => {
      // A second signal while stopping exits at once, but through process.exit: its 'exit' handlers still stop
      // the embedded dev server (a process killed by a signal with no handler left would orphan it).
      if (stopping) {
        log('stopping now');
        process.exit(130);
        return;
      }
      stopping = true;
      log('\nstopping… (Ctrl-C again to stop at once)');
      void stack.stop().then(() => {
        process.removeListener('SIGINT', stop);
        process.removeListener('SIGTERM', stop);
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export async function start(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const stack = await startStack(log, env);
  log('');
  log(`longhaul is running.${stack.uiUrl ? ` Temporal UI: ${stack.uiUrl}` : ''}`);
  log('Try, in another terminal:');
  log('  npx longhaul migrate --org octo-org --repo alpha --repo beta --lock --follow');
  log('  npx longhaul list --running');
  log('Ctrl-C stops everything (workflows persist in the data directory).');
  await untilInterrupted(stack);
}

export async function demo(opts: { exit?: boolean; archiveTo?: DemoStore }, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Before the worker: its AWS SDK reads the standard variables the store sets.
  const store = opts.archiveTo ? await startDemoObjectStore(opts.archiveTo, log) : undefined;
  let stack: Stack;
  try {
    stack = await startStack(log, env, true);
  } catch (err) {
    await store?.stop();
    throw err;
  }
  if (store) {
    const stop = stack.stop;
    stack.stop = async () => {
      await stop();
      await store.stop();
    };
  }
  const connection = await Connection.connect({ address: stack.address });
  const client = new Client({ connection, namespace: stack.namespace, dataConverter: longhaulDataConverter() });
  const ctx: CliContext = {
    config: loadConfig(),
    client: async () => client,
    target: () => ({ connectionOptions: { address: stack.address }, namespace: stack.namespace, uiUrl: stack.uiUrl }),
    uiLink: (id) => workflowUiUrl({ uiUrl: stack.uiUrl, namespace: stack.namespace }, id),
    close: () => connection.close(),
  };
  const workflowId = `demo-migrate-octo-org-${Date.now().toString(36)}`;
  log('');
  log(`demo: migrating octo-org/alpha, beta and gamma (locked while exporting)${store ? ` into ${store.archiveTo}` : ''}…`);
  const input: OrgMigrationInput = {
    org: 'octo-org',
    repositories: ['alpha', 'beta', 'gamma'],
    lockRepositories: true,
    poll: { initialIntervalMs: 1000, maxIntervalMs: 5000 },
    ...(store ? { archiveTo: store.archiveTo } : {}),
  };
  let code = await runWorkflowCommand(migrationCommand(ctx, input, { wait: true, follow: true }, workflowId));
  // What the store holds, read back from it: the object's URL, its size and its SHA-256.
  if (store) {
    try {
      for (const object of await store.objects()) console.log(describeStoredObject(object));
    } catch (err) {
      log(`error: reading the objects back from ${store.endpoint}: ${(err as Error).message}`);
      code ||= ExitCode.Failed;
    }
  }
  if (stack.emulator) {
    const s = stack.emulator.stats;
    console.log(`emulator: ${s.requests} API requests, ${s.rateLimited.primary + s.rateLimited.secondary} rate-limited, ${s.requestsWhileLimited} sent while limited`);
  }
  const link = ctx.uiLink(workflowId);
  if (link) console.log(`see the whole history in the Temporal UI: ${link}`);
  await connection.close();
  if (opts.exit || code !== 0) {
    await stack.stop();
    process.exitCode = code;
    return;
  }
  log(`the stack stays up${store ? ` (the S3 server too: ${store.endpoint}, bucket ${DEMO_BUCKET})` : ''}; Ctrl-C stops it.`);
  await untilInterrupted(stack);
}


export { resolveTemporal } from '../temporal/connection';
export { DEFAULT_CODEC_SERVER_PORT } from '../temporal/codec-server';
