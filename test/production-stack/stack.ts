/**
 * A production-shape Temporal outside Docker: the real server binary at the version docker-compose.yml pins
 * (`server-binary.ts`), on a throwaway PostgreSQL cluster from Debian's packages (`postgres.ts`), with the
 * schemas applied by Temporal's own `temporal-sql-tool` (as deploy/temporal/setup-database.sh does in the
 * compose stack), PostgreSQL persistence and SQL visibility (`postgres12`, the compose file's `DB`), the compose
 * stack's dynamic config (deploy/temporal/dynamicconfig/production.yaml), and the namespace set up by
 * `longhaul setup-namespace`. Everything on loopback, on free ports, in a temp dir.
 *
 * `npm run check:production-stack` runs its chaos run against it; other checks (an upgrade test, `longhaul
 * doctor`) take `startProductionStack()` and use `address` / `namespace` like any Temporal server.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import type { Log } from '../../src/temporal/cli-binary';
import { freePort } from '../../src/temporal/dev-server';
import { composeServerVersion, ensureServerBinaries, type ServerBinaries } from './server-binary';
import { ensurePostgres, startPostgres, POSTGRES_PASSWORD, POSTGRES_USER, type PostgresCluster } from './postgres';

const run = promisify(execFile);
const root = join(__dirname, '..', '..', '..');
export const COMPOSE_FILE = join(root, 'docker-compose.yml');
const DYNAMIC_CONFIG = join(root, 'deploy', 'temporal', 'dynamicconfig', 'production.yaml');
const LONGHAUL_BIN = join(root, 'bin', 'longhaul.js');

export interface ProductionStackTimings {
  /** The Go build of the server and the SQL tool (0 when cached). */
  buildMs: number;
  /** initdb and the first start of PostgreSQL. */
  postgresMs: number;
  /** temporal-sql-tool: both databases created and brought to the server's schema version. */
  schemaMs: number;
  /** From spawning the server to its frontend answering. */
  serverStartMs: number;
  /** `longhaul setup-namespace`. */
  namespaceMs: number;
  /** From setup-namespace's return to the frontend accepting queries on the attributes it registered. */
  attributesMs: number;
}

export interface ProductionStack {
  /** `host:port` of the frontend: TEMPORAL_ADDRESS for workers and the CLI. */
  address: string;
  namespace: string;
  serverVersion: string;
  postgresVersion: string;
  timings: ProductionStackTimings;
  /** What `longhaul setup-namespace` printed. */
  namespaceSetup: string;
  /** The server's log file (its stdout and stderr). */
  serverLog: string;
  /** SIGTERM to the server, then start it again on the same ports; resolves once the frontend answers. Milliseconds down. */
  restartServer(): Promise<number>;
  /** Fast shutdown of PostgreSQL, `pauseMs` with the database gone, then start. Milliseconds down. */
  restartPostgres(pauseMs: number): Promise<number>;
  stop(): Promise<void>;
}

export interface ProductionStackOptions {
  log: Log;
  namespace?: string;
}

interface Ports {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: { frontend: number; history: number; matching: number; worker: number };
}

/** The server's config: the shape of the image's config_template.yaml for DB=postgres12 without Elasticsearch. */
function serverConfig(pg: PostgresCluster, ports: Ports): string {
  const datastore = (db: string, maxConns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${db}
        connectAddr: "${pg.host}:${pg.port}"
        connectProtocol: tcp
        user: ${POSTGRES_USER}
        password: ${POSTGRES_PASSWORD}
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, http?: number) => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnIP: 127.0.0.1${http ? `\n      httpPort: ${http}` : ''}`;
  return `# Written by longhaul's production-stack check (test/production-stack/stack.ts).
log:
  stdout: true
  level: warn
persistence:
  numHistoryShards: 4
  defaultStore: default
  visibilityStore: visibility
  datastores:
    default:${datastore('temporal', 20)}
    visibility:${datastore('temporal_visibility', 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
  frontend:${service(ports.frontend, ports.membership.frontend, ports.frontendHttp)}
  history:${service(ports.history, ports.membership.history)}
  matching:${service(ports.matching, ports.membership.matching)}
  worker:${service(ports.worker, ports.membership.worker)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${ports.frontend}
      httpAddress: 127.0.0.1:${ports.frontendHttp}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${DYNAMIC_CONFIG}
  pollInterval: 60s
`;
}

/** Both databases, as deploy/temporal/setup-database.sh: create, versioning tables, then every versioned step. */
async function applySchema(sqlTool: string, pg: PostgresCluster): Promise<void> {
  const tool = (db: string, ...args: string[]) =>
    run(sqlTool, ['--plugin', 'postgres12', '--ep', pg.host, '-p', String(pg.port), '-u', POSTGRES_USER, '--pw', POSTGRES_PASSWORD, '--db', db, ...args]);
  for (const [db, schema] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ]) {
    await tool(db, 'create');
    await tool(db, 'setup-schema', '-v', '0.0');
    // The schema files embedded in the tool, at the tool's (= the server's) version.
    await tool(db, 'update-schema', '--schema-name', `postgresql/v12/${schema}`);
  }
}

/** Resolves once the frontend answers a request (not just accepts a connection). */
async function waitForFrontend(address: string, server: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error(`the Temporal server exited (${server.exitCode ?? server.signalCode}) before its frontend answered`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`the Temporal frontend on ${address} did not answer within ${timeoutMs} ms: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The server's last fatal or error line (JSON log), for a failure message. */
async function lastServerError(serverLog: string): Promise<string> {
  const lines = (await readFile(serverLog, 'utf8').catch(() => '')).trim().split('\n');
  const worst = [...lines].reverse().find((l) => /"level":"(fatal|error)"/.test(l));
  if (!worst) return `(nothing logged as an error; see ${serverLog})`;
  try {
    const entry = JSON.parse(worst) as { level: string; msg: string; error?: string };
    return `server ${entry.level}: ${entry.msg}${entry.error ? `: ${entry.error}` : ''} (${serverLog})`;
  } catch {
    return worst;
  }
}

/**
 * A namespace and attributes just registered reach the frontend's caches only when they refresh (seconds):
 * until then a query or a start naming them is refused ("… is not a valid search attribute"). Resolves once a
 * query naming every longhaul attribute is accepted.
 */
async function waitForSearchAttributes(address: string, namespace: string, timeoutMs = 60_000): Promise<void> {
  const query = ALL_SEARCH_ATTRIBUTES.map((key) => `${key.name} IS NOT NULL`).join(' OR ');
  const connection = await Connection.connect({ address });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await connection.workflowService.countWorkflowExecutions({ namespace, query });
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`the frontend still refuses queries on longhaul's search attributes after ${timeoutMs} ms: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  } finally {
    await connection.close();
  }
}

export async function startProductionStack(options: ProductionStackOptions): Promise<ProductionStack> {
  const { log } = options;
  const namespace = options.namespace ?? 'default';
  const version = await composeServerVersion(COMPOSE_FILE);
  const binaries: ServerBinaries = await ensureServerBinaries(version, log);
  const pgBin = await ensurePostgres(log);

  const dir = await mkdtemp(join(tmpdir(), 'longhaul-production-stack-'));
  let pg: PostgresCluster | undefined;
  let server: ChildProcess | undefined;
  try {
    let mark = Date.now();
    pg = await startPostgres(pgBin, await freePort(), log);
    const postgresMs = Date.now() - mark;

    mark = Date.now();
    await applySchema(binaries.sqlTool, pg);
    const schemaMs = Date.now() - mark;
    log(`schemas applied by temporal-sql-tool ${version}: temporal, temporal_visibility (${schemaMs} ms)`);

    // Below 32768: the membership table keeps ports as smallint (an ephemeral port stops the server).
    const port = () => freePort(32_768);
    const ports: Ports = {
      frontend: await port(),
      frontendHttp: await port(),
      history: await port(),
      matching: await port(),
      worker: await port(),
      membership: { frontend: await port(), history: await port(), matching: await port(), worker: await port() },
    };
    const configDir = join(dir, 'config');
    await mkdir(configDir);
    await writeFile(join(configDir, 'production.yaml'), serverConfig(pg, ports));
    const address = `127.0.0.1:${ports.frontend}`;
    const serverLog = join(dir, 'temporal-server.log');
    const logStream = createWriteStream(serverLog, { flags: 'a' });

    const startServer = async (): Promise<number> => {
      const started = Date.now();
      const child = spawn(binaries.server, ['--root', dir, '--config', 'config', '--env', 'production', '--allow-no-auth', 'start'], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.pipe(logStream, { end: false });
      child.stderr.pipe(logStream, { end: false });
      server = child;
      try {
        await waitForFrontend(address, child);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${await lastServerError(serverLog)}`);
      }
      return Date.now() - started;
    };
    const stopServer = async (): Promise<void> => {
      const child = server;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(killer);
    };

    const serverStartMs = await startServer();
    log(`Temporal server ${version} answering on ${address} (${serverStartMs} ms; log ${serverLog})`);

    mark = Date.now();
    const setup = await run(process.execPath, [LONGHAUL_BIN, 'setup-namespace'], { env: { ...process.env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace } });
    const namespaceMs = Date.now() - mark;
    const namespaceSetup = setup.stdout.trim();
    log(`longhaul setup-namespace: ${namespaceSetup.replace(/\n/g, '; ')} (${namespaceMs} ms)`);
    mark = Date.now();
    await waitForSearchAttributes(address, namespace);
    const attributesMs = Date.now() - mark;
    log(`the frontend accepts queries on every longhaul search attribute ${attributesMs} ms after setup-namespace returned`);

    const cluster = pg;
    return {
      address,
      namespace,
      serverVersion: version,
      postgresVersion: cluster.version,
      timings: { buildMs: binaries.buildMs, postgresMs, schemaMs, serverStartMs, namespaceMs, attributesMs },
      namespaceSetup,
      serverLog,
      async restartServer() {
        const down = Date.now();
        await stopServer();
        await startServer();
        return Date.now() - down;
      },
      async restartPostgres(pauseMs: number) {
        const down = Date.now();
        await cluster.stop();
        await new Promise((r) => setTimeout(r, pauseMs));
        await cluster.start();
        return Date.now() - down;
      },
      async stop() {
        await stopServer();
        logStream.end();
        await cluster.destroy();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (server && server.exitCode === null) server.kill('SIGKILL');
    await pg?.destroy();
    throw err;
  }
}
