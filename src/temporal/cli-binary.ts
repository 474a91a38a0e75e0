/**
 * Finding the `temporal` CLI that runs the embedded dev server, in this order:
 *   1. `TEMPORAL_CLI_PATH`;
 *   2. `temporal` on PATH;
 *   3. a cached build in the longhaul cache directory (outside the repo);
 *   4. when Go is present, `CGO_ENABLED=0 go install github.com/temporalio/cli/cmd/temporal@v1.5.1` into that cache;
 *   5. otherwise `undefined`: the caller falls back to the SDK's own download (machines with internet).
 * Each step says what it is doing; a failure says what to install.
 */
import { execFile, spawn } from 'node:child_process';
import { access, mkdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setting } from '../settings';

/** The CLI release we build: later tags carry a `replace` directive that `go install` refuses. */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const MODULE = 'github.com/temporalio/cli/cmd/temporal';

export type Log = (message: string) => void;

/** `LONGHAUL_CACHE_DIR`, else `$XDG_CACHE_HOME/longhaul`, else `~/.cache/longhaul`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = setting('LONGHAUL_CACHE_DIR', env);
  if (configured) return configured;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'longhaul');
}

export function cachedCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), `temporal-cli-${TEMPORAL_CLI_VERSION.slice(1)}`, 'temporal');
}

export async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function onPath(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && (await isExecutable(join(dir, name)))) return join(dir, name);
  }
  return undefined;
}

/**
 * `CGO_ENABLED=0 go install <packages>@<version>` into `binDir`. Resolves once Go is done; rejects with the end
 * of Go's own error text. Go names each binary after its package's last path element.
 */
export async function goInstall(goPath: string, packages: readonly string[], version: string, binDir: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await mkdir(binDir, { recursive: true });
  const targets = packages.map((p) => `${p}@${version}`);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(goPath, ['install', ...targets], {
      env: { ...env, CGO_ENABLED: '0', GOBIN: binDir, GOFLAGS: env.GOFLAGS ?? '-mod=mod' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`go install ${targets.join(' ')} failed (exit ${code}):\n${stderr.trim().split('\n').slice(-15).join('\n')}`)),
    );
  });
}

/** Builds the CLI with Go into the cache. Resolves to the binary path; rejects with Go's own error text. */
export async function buildCliWithGo(goPath: string, log: Log, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const target = cachedCliPath(env);
  const binDir = join(target, '..');
  log(`building the Temporal CLI ${TEMPORAL_CLI_VERSION} with Go into ${binDir} (first run only; takes a few minutes)…`);
  await goInstall(goPath, [MODULE], TEMPORAL_CLI_VERSION, binDir, env);
  if (!(await isExecutable(target))) throw new Error(`go install finished but ${target} is missing`);
  log(`built ${target}`);
  return target;
}

/** Locates (or builds) the CLI; `undefined` means "use the SDK download". */
export async function findTemporalCli(log: Log, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (env.TEMPORAL_CLI_PATH) {
    if (await isExecutable(env.TEMPORAL_CLI_PATH)) {
      log(`using TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH}`);
      return env.TEMPORAL_CLI_PATH;
    }
    throw new Error(`TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} is not an executable file`);
  }
  const fromPath = await onPath('temporal', env);
  if (fromPath) {
    log(`using temporal from PATH: ${fromPath}`);
    return fromPath;
  }
  const cached = cachedCliPath(env);
  if (await isExecutable(cached)) {
    log(`using cached Temporal CLI build: ${cached}`);
    return cached;
  }
  const go = await onPath('go', env);
  if (go) return buildCliWithGo(go, log, env);
  log('no temporal binary and no Go toolchain found; falling back to the SDK download of the dev server (needs internet).');
  log('to avoid the download: install Go (https://go.dev/dl) or the Temporal CLI (https://docs.temporal.io/cli), or set TEMPORAL_CLI_PATH.');
  return undefined;
}

/** `temporal --version`, for messages. */
export function cliVersion(path: string): Promise<string> {
  return new Promise((resolve) => execFile(path, ['--version'], (err, stdout) => resolve(err ? 'unknown version' : stdout.trim())));
}
