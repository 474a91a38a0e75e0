/**
 * Starting the object-store servers on a free loopback port over a temp data directory, for tests, the benchmark
 * and the demo. Each handle gives the environment a worker would be given for that store: only each SDK's own
 * standard settings (`AWS_ENDPOINT_URL_S3`, `STORAGE_EMULATOR_HOST`, `AZURE_STORAGE_CONNECTION_STRING`, …).
 *
 * `stop()` and `start()` take the server down and bring it back on the same port over the same data, as an
 * outage of the store would; `destroy()` stops it for good and removes its directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../temporal/dev-server';
import { ensureAzurite, ensureFakeGcsServer, ensureVersitygw } from './binaries';

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
/** Azurite's well-known development account (published by Microsoft, valid against emulators only). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

const HOST = '127.0.0.1';
const READY_MS = 30_000;

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

/** Runs `command` until stopped, restartable on the same port; ready once the port accepts connections. */
async function serve(name: string, command: string, args: string[], port: number, dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<Pick<StoreServer, 'stop' | 'start' | 'destroy'>> {
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

/**
 * fake-gcs-server with its filesystem backend: the GCS JSON API, resumable uploads included. The session URIs it
 * hands out name `publicPort` (default: its own), so that a relay in front of it sees the chunks too.
 */
export async function startFakeGcs(options: { publicPort?: number } = {}): Promise<StoreServer> {
  const bin = await ensureFakeGcsServer();
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-fake-gcs-'));
  const port = await freePort();
  const publicUrl = `http://${HOST}:${options.publicPort ?? port}`;
  const args = ['-scheme', 'http', '-host', HOST, '-port', String(port), '-public-host', `${HOST}:${options.publicPort ?? port}`, '-external-url', publicUrl, '-backend', 'filesystem', '-filesystem-root', dataDir, '-log-level', 'error'];
  const control = await serve('fake-gcs-server', bin, args, port, dataDir);
  const endpoint = `http://${HOST}:${port}`;
  return { endpoint, port, dataDir, env: { STORAGE_EMULATOR_HOST: endpoint }, ...control };
}

/** Azurite's blob service, its account the well-known development account. */
export async function startAzurite(): Promise<StoreServer> {
  const bin = await ensureAzurite();
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-azurite-'));
  await mkdir(dataDir, { recursive: true });
  const port = await freePort();
  const args = ['--blobHost', HOST, '--blobPort', String(port), '--location', dataDir, '--silent', '--skipApiVersionCheck', '--disableProductStyleUrl'];
  const control = await serve('azurite', bin, args, port, dataDir);
  const endpoint = `http://${HOST}:${port}/${AZURITE_ACCOUNT}`;
  const connectionString = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${endpoint};`;
  return { endpoint, port, dataDir, env: { AZURE_STORAGE_CONNECTION_STRING: connectionString }, ...control };
}
