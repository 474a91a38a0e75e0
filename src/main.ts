/**
 * `npm start` and `npm run demo`: the whole stack on the embedded default.
 *
 * - Temporal: the configured server (TEMPORAL_ADDRESS…) or the embedded dev server (SQLite under the
 *   data directory, Web UI on http://localhost:8233, search attributes registered).
 * - APIs: the real ones when their base URLs are set (GITHUB_API_URL…), otherwise the emulator.
 * - A worker on the longhaul task queue.
 *
 * `demo` then drives one organization migration of the emulator's fixture to the end with live
 * progress, prints the result and the UI link, and keeps the stack up until Ctrl-C (`--exit` stops).
 */
import { NativeConnection } from '@temporalio/worker';
import { installTelemetry, telemetrySettings } from './telemetry/runtime';
import { Command } from 'commander';
import { loadConfig } from './config';
import { resolveTemporal, workflowUiUrl } from './temporal/connection';
import { createLonghaulWorker, activityDepsFromConfig } from './worker';
import { createGithubClient } from './http/github';
import { createGoogleClients } from './http/google';
import { readSecret } from './config';
import { startEmulator, type Emulator } from './emulator/emulator';
import { portIsOpen } from './temporal/dev-server';
import { runWorkflowCommand } from './cli/run-workflow';
import { describeMigrationResult, describeMigrationStatus } from './cli/migrate';
import { LonghaulOrg, LonghaulProcess } from './common/search-attributes';
import type { CliContext } from './cli/context';
import { Client, Connection } from '@temporalio/client';
import { codecKeysFromEnv, EncryptionCodec, longhaulDataConverter } from './temporal/codec';
import { DEFAULT_CODEC_CORS_ORIGINS, DEFAULT_CODEC_SERVER_PORT, startCodecServer, type RunningCodecServer } from './temporal/codec-server';
import type { OrgMigrationInput, OrgMigrationResult, OrgMigrationStatus } from './common/org-migration';

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

async function startStack(log: (m: string) => void, demo = false): Promise<Stack> {
  const config = loadConfig();
  const metricsUrl = await installTelemetry(telemetrySettings(process.env, { logLevel: 'WARN' }));
  if (metricsUrl) log(`[worker] metrics on ${metricsUrl}`);
  // With encrypted payloads the embedded UI decodes through a local codec server, so history stays readable there.
  const codec = await startCodecServerIfKeys(log);
  const target = await resolveTemporal((m) => log(`[temporal] ${m}`), process.env, { uiCodecEndpoint: codec?.url });

  let emulator: Emulator | undefined;
  let deps = activityDepsFromConfig(config);
  if (!config.githubApiUrlConfigured) {
    const free = !(await portIsOpen('127.0.0.1', EMULATOR_PORT)) && !(await portIsOpen('127.0.0.1', STORAGE_PORT));
    emulator = await startEmulator({
      port: free ? EMULATOR_PORT : 0,
      storagePort: free ? STORAGE_PORT : 0,
      // The demo slows exports and the storage origin down a little so each phase can be watched.
      ...(demo ? { migrations: { exportMs: 8_000, archiveBytes: 4 * 1024 * 1024 }, storageBytesPerSecond: 1024 * 1024 } : {}),
    });
    log(`[emulator] GITHUB_API_URL is not set: using the emulator at ${emulator.apiUrl} (storage ${emulator.storage.baseUrl})`);
    deps = { ...deps, github: createGithubClient({ baseUrl: emulator.apiUrl, token: () => readSecret('GITHUB_TOKEN') ?? EMULATOR_DEMO_TOKEN }) };
    if (!process.env.GOOGLE_APIKEYS_URL && !process.env.GOOGLE_LOGGING_URL && !process.env.GOOGLE_DNS_URL) {
      const url = (name: string) => emulator!.serviceUrl(name);
      const google = createGoogleClients(
        { apikeys: url('google-apikeys'), logging: url('google-logging'), dns: url('google-dns') },
        { token: () => readSecret('GOOGLE_ACCESS_TOKEN') ?? EMULATOR_DEMO_TOKEN },
      );
      deps = { ...deps, google };
      log(`[emulator] GOOGLE_*_URL are not set: Google API Keys, Logging and DNS calls go to the emulator under ${emulator.apiUrl}/google/`);
    }
  } else if (!readSecret('GITHUB_TOKEN')) {
    log('warning: GITHUB_API_URL is set but GITHUB_TOKEN is not; API calls will be unauthenticated');
  }

  const connection = await NativeConnection.connect(target.connectionOptions);
  const worker = await createLonghaulWorker({ connection, namespace: target.namespace, taskQueue: config.taskQueue, deps });
  const running = worker.run();
  log(`[worker] polling task queue "${config.taskQueue}" (data directory ${config.dataDir})`);
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

async function startCodecServerIfKeys(log: (m: string) => void): Promise<RunningCodecServer | undefined> {
  const keys = codecKeysFromEnv();
  if (keys.length === 0) return undefined;
  const port = (await portIsOpen('127.0.0.1', DEFAULT_CODEC_SERVER_PORT)) ? 0 : DEFAULT_CODEC_SERVER_PORT;
  const server = await startCodecServer({ codec: new EncryptionCodec(keys), port });
  log(`[codec] payloads are encrypted with key ${keys[0].id}; the Web UI decodes them through ${server.url}`);
  return server;
}

function untilInterrupted(stack: Stack): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      console.log('\nstopping…');
      void stack.stop().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

async function start(): Promise<void> {
  const stack = await startStack(console.log);
  console.log('');
  console.log(`longhaul is running.${stack.uiUrl ? ` Temporal UI: ${stack.uiUrl}` : ''}`);
  console.log('Try, in another terminal:');
  console.log('  npm run starter -- migrate --org octo-org --repo alpha --repo beta --lock --follow');
  console.log('Ctrl-C stops everything (workflows persist in the data directory).');
  await untilInterrupted(stack);
}

async function demo(opts: { exit?: boolean }): Promise<void> {
  const stack = await startStack(console.log, true);
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
  console.log('');
  console.log('demo: migrating octo-org/alpha, beta and gamma (locked while exporting)…');
  const code = await runWorkflowCommand<[OrgMigrationInput], OrgMigrationResult, OrgMigrationStatus>({
    ctx,
    workflowType: 'orgMigration',
    workflowId,
    args: [{ org: 'octo-org', repositories: ['alpha', 'beta', 'gamma'], lockRepositories: true, poll: { initialIntervalMs: 1000, maxIntervalMs: 5000 } }],
    searchAttributes: [
      { key: LonghaulProcess, value: 'org-migration' },
      { key: LonghaulOrg, value: 'octo-org' },
    ],
    flags: { wait: true, follow: true },
    describeResult: describeMigrationResult,
    describeStatus: describeMigrationStatus,
  });
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
  console.log('the stack stays up; Ctrl-C stops it.');
  await untilInterrupted(stack);
}

const program = new Command().name('longhaul');
program.command('start').description('Run the stack (embedded Temporal server unless configured, emulator unless GITHUB_API_URL is set, worker)').action(start);
program
  .command('demo')
  .description('Run the stack, then drive one organization migration to the end with live progress')
  .option('--exit', 'stop the stack after the demo instead of waiting for Ctrl-C')
  .action(demo);

program
  .command('codec-server')
  .description('Serve Temporal\'s remote-codec protocol (POST /encode, /decode) so the Web UI shows encrypted payloads in clear')
  .option('--port <port>', 'port on 127.0.0.1', String(DEFAULT_CODEC_SERVER_PORT))
  .option('--cors-origin <origin...>', 'browser origins allowed to call it (the Web UI)', DEFAULT_CODEC_CORS_ORIGINS)
  .action(async (opts: { port: string; corsOrigin: string[] }) => {
    const keys = codecKeysFromEnv();
    if (keys.length === 0) throw new Error('no key configured: set LONGHAUL_CODEC_KEYS or LONGHAUL_CODEC_KEY_FILE');
    const server = await startCodecServer({ codec: new EncryptionCodec(keys), port: Number(opts.port), corsOrigins: opts.corsOrigin });
    console.log(`codec server on ${server.url} (keys: ${keys.map((k) => k.id).join(', ')}); in the Web UI: Settings → Codec Server → ${server.url}`);
  });

program.parseAsync().catch((err: Error) => {
  console.error(`error: ${err.message}`);
  process.exit(1);
});
