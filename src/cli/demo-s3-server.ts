/**
 * The S3 server `longhaul demo --archive-to s3` embeds: versitygw (Apache-2.0), an S3 gateway over a POSIX
 * directory, obtained the way the Temporal CLI is (`src/temporal/cli-binary.ts`): built with `go install` into the
 * longhaul cache directory (`~/.cache/longhaul`, moved by `LONGHAUL_CACHE_DIR`), once; then run on a free loopback
 * port over a temporary directory. A product feature (the demo's), so it lives here; the tests start the same
 * server through `test/servers/object-stores.ts`, which adds the stores only tests run (fake-gcs-server, Azurite)
 * on the same two helpers, `ensureGoServer` and `serve`.
 *
 * MinIO is AGPL and is never used.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheDir, goInstall, isExecutable, onPath, type Log } from '../temporal/cli-binary';
import { freePort } from '../temporal/dev-server';

export const VERSITYGW_VERSION = '1.8.0';

/** A server built from a Go module with `go install`. */
export interface GoServer {
  name: string;
  module: string;
  /** The package path `go install` builds; the binary is named after its last element. */
  pkg: string;
  version: string;
}

const VERSITYGW: GoServer = { name: 'versitygw', module: 'github.com/versity/versitygw', pkg: 'github.com/versity/versitygw/cmd/versitygw', version: VERSITYGW_VERSION };

function goServerPath(server: GoServer, env: NodeJS.ProcessEnv): string {
  return join(cacheDir(env), `${server.name}-${server.version}`, server.name);
}

/** The server's binary in the cache, built with Go on first use; a missing Go toolchain is a clear error. */
export async function ensureGoServer(server: GoServer, log: Log, env: NodeJS.ProcessEnv): Promise<string> {
  const path = goServerPath(server, env);
  if (await isExecutable(path)) return path;
  const go = await onPath('go', env);
  if (!go) throw new Error(`no cached ${server.name} ${server.version} at ${path} and no Go toolchain on PATH: install Go (https://go.dev/dl)`);
  log(`building ${server.name} ${server.version} with Go into ${join(path, '..')} (first run only; takes a few minutes)…`);
  await goInstall(go, [server.pkg], `v${server.version}`, join(path, '..'), env);
  if (!(await isExecutable(path))) throw new Error(`go install finished but ${path} is missing`);
  log(`built ${path}`);
  return path;
}

/** The versitygw binary, built on first use. */
export function ensureVersitygw(log: Log = () => undefined, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return ensureGoServer(VERSITYGW, log, env);
}

export interface StoreServer {
  /** `http://127.0.0.1:PORT` (Azurite: the blob endpoint, with the account's path). */
  endpoint: string;
  port: number;
  /** The SDK's standard settings that point a client at this server. */
  env: Record<string, string>;
  /** The directory the server keeps its objects in. */
  dataDir: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** versitygw's root user; the same values go into the S3 SDK's standard variables. */
export const S3_ACCESS_KEY_ID = 'longhaul-test-access';
export const S3_SECRET_ACCESS_KEY = 'longhaul-test-secret-key';
export const S3_REGION = 'us-east-1';

export const HOST = '127.0.0.1';
/**
 * How long a store server may take to listen: a guard against a hang, not a figure of the machine's speed
 * (Azurite, a Node program, missed 30 s at load average 20 on the 2-core machine).
 */
const READY_MS = 300_000;

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, HOST);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Runs `command` until stopped, restartable on the same port; ready once the port accepts connections.
 * `stop()` and `start()` take the server down and bring it back on the same port over the same data, as an
 * outage of the store would; `destroy()` stops it for good and removes its directory.
 */
export async function serve(name: string, command: string, args: string[], port: number, dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<Pick<StoreServer, 'stop' | 'start' | 'destroy'>> {
  let child: ChildProcess | undefined;
  let output = '';
  const start = async (): Promise<void> => {
    output = '';
    const proc = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    proc.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    proc.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    const exited = new Promise<never>((_, reject) => proc.once('exit', (code) => reject(new Error(`${name} exited (${code}) before listening on ${port}:\n${output.trim()}`))));
    exited.catch(() => undefined);
    const deadline = Date.now() + READY_MS;
    while (!(await Promise.race([portOpen(port), exited]))) {
      if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port} within ${READY_MS} ms:\n${output.trim()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  };
  // A process that ends without stopping it (an error, a second Ctrl-C in the demo) leaves no server behind.
  const killOnExit = () => child?.kill('SIGKILL');
  process.on('exit', killOnExit);
  await start().catch((err: unknown) => {
    process.removeListener('exit', killOnExit);
    throw err;
  });
  return {
    start,
    stop,
    destroy: async () => {
      process.removeListener('exit', killOnExit);
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** versitygw serving S3 over a POSIX directory (each bucket a subdirectory). */
export async function startVersitygw(): Promise<StoreServer> {
  const bin = await ensureVersitygw();
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-versitygw-'));
  const port = await freePort();
  const control = await serve('versitygw', bin, ['--access', S3_ACCESS_KEY_ID, '--secret', S3_SECRET_ACCESS_KEY, '--region', S3_REGION, '--port', `${HOST}:${port}`, '--quiet', 'posix', dataDir], port, dataDir);
  const endpoint = `http://${HOST}:${port}`;
  return {
    endpoint,
    port,
    dataDir,
    env: { AWS_ENDPOINT_URL_S3: endpoint, AWS_REGION: S3_REGION, AWS_ACCESS_KEY_ID: S3_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: S3_SECRET_ACCESS_KEY },
    ...control,
  };
}
