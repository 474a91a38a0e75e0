/**
 * The object-store servers that tests and the benchmark run on loopback, obtained the way the Temporal CLI is
 * (`src/temporal/cli-binary.ts`): built with `go install` or installed with npm into the longhaul cache directory
 * (`~/.cache/longhaul`, moved by `LONGHAUL_CACHE_DIR`), once.
 *
 * - versitygw (Apache-2.0): an S3 gateway over a POSIX directory, the S3-compatible server; the demo
 *   (`--archive-to s3`) embeds it, so it is built by the product's `src/cli/demo-s3-server.ts`.
 * - fake-gcs-server (BSD-2-Clause): the GCS JSON API, native resumable uploads included.
 * - Azurite (MIT): Microsoft's Azure Storage emulator, from npm, installed into the cache rather than into the
 *   project's dependencies (it pulls a database layer and a web framework the worker never needs).
 *
 * MinIO is AGPL and is never used.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { cacheDir, isExecutable, type Log } from '../../src/temporal/cli-binary';
import { ensureGoServer, type GoServer } from '../../src/cli/demo-s3-server';

export { ensureVersitygw, VERSITYGW_VERSION } from '../../src/cli/demo-s3-server';
export const FAKE_GCS_SERVER_VERSION = '1.56.1';
export const AZURITE_VERSION = '3.37.0';

const FAKE_GCS: GoServer = { name: 'fake-gcs-server', module: 'github.com/fsouza/fake-gcs-server', pkg: 'github.com/fsouza/fake-gcs-server', version: FAKE_GCS_SERVER_VERSION };

/** The fake-gcs-server binary, built on first use. */
export function ensureFakeGcsServer(log: Log = () => undefined, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return ensureGoServer(FAKE_GCS, log, env);
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
