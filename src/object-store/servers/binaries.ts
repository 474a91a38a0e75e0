/**
 * The object-store servers that tests, the benchmark and the demo (`--archive-to s3`) run on loopback, obtained the way the
 * Temporal CLI is (`src/temporal/cli-binary.ts`): built with `go install` or installed with npm into the longhaul
 * cache directory (`~/.cache/longhaul`, moved by `LONGHAUL_CACHE_DIR`), once.
 *
 * - versitygw (Apache-2.0): an S3 gateway over a POSIX directory, the S3-compatible server.
 * - fake-gcs-server (BSD-2-Clause): the GCS JSON API, native resumable uploads included.
 * - Azurite (MIT): Microsoft's Azure Storage emulator, from npm, installed into the cache rather than into the
 *   project's dependencies (it pulls a database layer and a web framework the worker never needs).
 *
 * MinIO is AGPL and is never used.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { cacheDir, goInstall, isExecutable, onPath, type Log } from '../../temporal/cli-binary';

export const VERSITYGW_VERSION = '1.8.0';
export const FAKE_GCS_SERVER_VERSION = '1.56.1';
export const AZURITE_VERSION = '3.37.0';

interface GoServer {
  name: string;
  module: string;
  /** The package path `go install` builds; the binary is named after its last element. */
  pkg: string;
  version: string;
}

const GO_SERVERS = {
  versitygw: { name: 'versitygw', module: 'github.com/versity/versitygw', pkg: 'github.com/versity/versitygw/cmd/versitygw', version: VERSITYGW_VERSION },
  fakeGcs: { name: 'fake-gcs-server', module: 'github.com/fsouza/fake-gcs-server', pkg: 'github.com/fsouza/fake-gcs-server', version: FAKE_GCS_SERVER_VERSION },
} as const satisfies Record<string, GoServer>;

function goServerPath(server: GoServer, env: NodeJS.ProcessEnv): string {
  return join(cacheDir(env), `${server.name}-${server.version}`, server.name);
}

async function ensureGoServer(server: GoServer, log: Log, env: NodeJS.ProcessEnv): Promise<string> {
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
  return ensureGoServer(GO_SERVERS.versitygw, log, env);
}

/** The fake-gcs-server binary, built on first use. */
export function ensureFakeGcsServer(log: Log = () => undefined, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return ensureGoServer(GO_SERVERS.fakeGcs, log, env);
}

/** Azurite's blob service entry point (`azurite-blob`), installed with npm into the cache on first use. */
export async function ensureAzurite(log: Log = () => undefined, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const prefix = join(cacheDir(env), `azurite-${AZURITE_VERSION}`);
  const bin = join(prefix, 'node_modules', '.bin', 'azurite-blob');
  if (await isExecutable(bin)) return bin;
  log(`installing azurite ${AZURITE_VERSION} with npm into ${prefix} (first run only)…`);
  await new Promise<void>((resolve, reject) => {
    const child = spawn('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `azurite@${AZURITE_VERSION}`], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm install azurite@${AZURITE_VERSION} failed (exit ${code}):\n${stderr.trim().split('\n').slice(-15).join('\n')}`))));
  });
  if (!(await isExecutable(bin))) throw new Error(`npm install finished but ${bin} is missing`);
  log(`installed ${bin}`);
  return bin;
}
