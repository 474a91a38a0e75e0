/**
 * The Python side of the emulator's conformance suite (issue 30): a virtualenv with PyGithub and Google's
 * Python client, installed from `test/python/requirements.lock` (exact pins with hashes, `pip install
 * --require-hashes`) into `~/.cache/longhaul/python-conformance-<lock hash>`, so a changed lock gets a fresh
 * environment and an unchanged one is reused.
 *
 *   npm run setup:python-conformance    # CI runs it; the test calls ensurePythonEnv() lazily
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDir, type Log } from '../../src/temporal/cli-binary';

export const LOCK_FILE = join(__dirname, 'requirements.lock');

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 64 * 1024 * 1024 }, (err, _stdout, stderr) => (err ? reject(new Error(`${command} ${args.join(' ')}: ${stderr.trim() || err.message}`)) : resolve()));
  });
}

const exists = (path: string) =>
  access(path, constants.X_OK).then(
    () => true,
    () => false,
  );

/** Where the environment for the current lock file lives. */
export async function pythonEnvDir(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const lock = await readFile(LOCK_FILE);
  return join(cacheDir(env), `python-conformance-${createHash('sha256').update(lock).digest('hex').slice(0, 12)}`);
}

/**
 * Returns the environment's python, creating the environment first when it is not cached. Safe from several
 * processes at once: each builds in its own staging directory and the first rename wins (a venv run as
 * `python -m …` does not depend on its directory's name).
 */
export async function ensurePythonEnv(log: Log = () => undefined, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = await pythonEnvDir(env);
  const python = join(dir, 'bin', 'python');
  if (await exists(python)) return python;
  await mkdir(cacheDir(env), { recursive: true });
  const staging = await mkdtemp(`${dir}.staging-`);
  try {
    log(`creating a virtualenv in ${dir} from ${LOCK_FILE} (first run only)…`);
    try {
      await run('python3', ['-m', 'venv', staging]);
    } catch (err) {
      throw new Error(`python3 -m venv failed (on Debian/Ubuntu install python3-venv): ${(err as Error).message}`);
    }
    await run(join(staging, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--require-hashes', '--no-deps', '-r', LOCK_FILE]);
    try {
      await rename(staging, dir);
    } catch (err) {
      if (!(await exists(python))) throw err;
    }
    log(`ready: ${python}`);
    return python;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

if (require.main === module) {
  ensurePythonEnv((m) => console.log(`[python-conformance] ${m}`))
    .then((path) => console.log(`[python-conformance] ${path}`))
    .catch((err: Error) => {
      console.error(`setup:python-conformance: ${err.message}`);
      process.exit(1);
    });
}
