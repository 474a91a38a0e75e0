/**
 * The embedded default: a real Temporal dev server (the `temporal` CLI's `server start-dev`), persisted
 * to SQLite under the data directory so workflows survive a restart, with the Web UI and longhaul's
 * search attributes. When a server already answers on the port (say, a second `npm start`), it is reused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join, resolve } from 'node:path';
import { findTemporalCli, type Log } from './cli-binary';
import { searchAttributeArgs } from '../common/search-attributes';
import { setting } from '../settings';

export interface DevServerOptions {
  /** Directory for `temporal.sqlite`; omit for an in-memory server (tests). */
  dataDir?: string;
  ip?: string;
  /** gRPC port (7233 by default; 0 picks a free one). */
  port?: number;
  /** Web UI port; `false` disables the UI. */
  uiPort?: number | false;
  namespace?: string;
  log?: Log;
  env?: NodeJS.ProcessEnv;
  /** The codec server the Web UI decodes payloads with (`longhaul codec-server`), when payloads are encrypted. */
  uiCodecEndpoint?: string;
}

export interface RunningDevServer {
  /** `host:port` for gRPC clients and workers. */
  address: string;
  namespace: string;
  uiUrl?: string;
  /** True when this process started the server (and so stops it). */
  owned: boolean;
  /** The server's process id, when this process started it from the CLI (benchmarks read its CPU). */
  pid?: number;
  stop(): Promise<void>;
}

/** The data directory: `LONGHAUL_DATA_DIR`, else `./.longhaul`. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(setting('LONGHAUL_DATA_DIR', env) || '.longhaul');
}

export function portIsOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host, port });
    const finish = (open: boolean) => {
      socket.destroy();
      done(open);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/**
 * A port free on loopback now: the system's pick, or with `below` a random one under that bound (from 10000 on),
 * for servers that cannot take one from the ephemeral range (Temporal stores its membership ports as smallint).
 */
export async function freePort(below?: number): Promise<number> {
  const { createServer } = await import('node:net');
  const tryPort = (port: number) =>
    new Promise<number | undefined>((done) => {
      const srv = createServer();
      srv.once('error', () => done(undefined));
      srv.listen(port, '127.0.0.1', () => {
        const { port: bound } = srv.address() as { port: number };
        srv.close(() => done(bound));
      });
    });
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await tryPort(below ? 10_000 + Math.floor(Math.random() * (below - 10_000)) : 0);
    if (port) return port;
  }
  throw new Error(`no free port on 127.0.0.1${below ? ` below ${below}` : ''}`);
}

async function waitForPort(host: string, port: number, child: ChildProcess, stderr: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal server exited with code ${child.exitCode}:\n${stderr().trim().split('\n').slice(-10).join('\n')}`);
    if (await portIsOpen(host, port)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`temporal server did not open ${host}:${port} within ${timeoutMs / 1000} s`);
}

export async function startDevServer(options: DevServerOptions = {}): Promise<RunningDevServer> {
  const log = options.log ?? ((m: string) => console.log(`[temporal] ${m}`));
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port === 0 ? await freePort() : (options.port ?? 7233);
  const namespace = options.namespace ?? 'default';
  const uiPort = options.uiPort === false ? undefined : (options.uiPort ?? port + 1000);
  const uiUrl = uiPort ? `http://localhost:${uiPort}` : undefined;

  if (await portIsOpen(ip, port)) {
    log(`a Temporal server already answers on ${ip}:${port}; using it`);
    return { address: `${ip}:${port}`, namespace, uiUrl, owned: false, stop: async () => undefined };
  }

  const cli = await findTemporalCli(log, options.env);
  if (!cli) return startWithSdkDownload({ ...options, ip, port, namespace, uiPort }, log);

  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--namespace', namespace, '--log-level', 'warn', ...searchAttributeArgs()];
  if (uiPort) args.push('--ui-port', String(uiPort));
  else args.push('--headless');
  if (uiPort && options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  if (options.dataDir) {
    await mkdir(options.dataDir, { recursive: true });
    args.push('--db-filename', join(options.dataDir, 'temporal.sqlite'));
  }
  log(`starting the Temporal dev server on ${ip}:${port}${options.dataDir ? ` (state in ${join(options.dataDir, 'temporal.sqlite')})` : ' (in memory)'}`);
  const child = spawn(cli, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 64_000) stderr = stderr.slice(-32_000);
  });
  const stopChild = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.once('exit', stopChild);
  try {
    await waitForPort(ip, port, child, () => stderr, 60_000);
  } catch (err) {
    stopChild();
    throw err;
  }
  return {
    address: `${ip}:${port}`,
    namespace,
    uiUrl,
    owned: true,
    pid: child.pid,
    stop: async () => {
      process.removeListener('exit', stopChild);
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Last resort on machines with internet: the dev server the Temporal SDK downloads and runs (cached in the system's
 * temp directory), started through the worker's runtime, which `@temporalio/testing`'s `createLocal` calls too:
 * the worker's own API keeps the test kit out of longhaul's runtime dependencies. `executable` replaces the
 * download with a binary at hand (the test of this path, which may not reach the internet).
 */
export async function startWithSdkDownload(
  options: DevServerOptions & { ip: string; port: number; namespace: string; uiPort?: number; executable?: string },
  log: Log,
): Promise<RunningDevServer> {
  log('starting the dev server through the Temporal SDK download…');
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  // Loaded here, not at the top: every CLI command imports this module, and only this path needs the worker's runtime.
  const { Runtime } = await import('@temporalio/worker');
  const { version: sdkVersion } = await import('@temporalio/worker/package.json');
  const runtime = Runtime.instance();
  try {
    const server = await runtime.createEphemeralServer({
      type: 'dev-server',
      exe: options.executable
        ? { type: 'existing-path', path: options.executable }
        : { type: 'cached-download', downloadDir: null, version: 'default', ttl: 86_400_000, sdkName: 'sdk-typescript', sdkVersion },
      ip: options.ip,
      port: options.port,
      namespace: options.namespace,
      ui: options.uiPort !== undefined,
      uiPort: options.uiPort ?? null,
      dbFilename: options.dataDir ? join(options.dataDir, 'temporal.sqlite') : null,
      log: { format: 'pretty', level: 'warn' },
      extraArgs: searchAttributeArgs(),
    });
    return {
      address: `${options.ip}:${options.port}`,
      namespace: options.namespace,
      uiUrl: options.uiPort ? `http://localhost:${options.uiPort}` : undefined,
      owned: true,
      stop: () => runtime.shutdownEphemeralServer(server),
    };
  } catch (err) {
    throw new Error(
      `could not obtain a Temporal server: the SDK download failed (${(err as Error).message}). ` +
        'Install Go (then longhaul builds the CLI itself), install the Temporal CLI, or set TEMPORAL_ADDRESS to a running server.',
    );
  }
}
