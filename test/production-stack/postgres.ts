/**
 * A throwaway PostgreSQL cluster from Debian's packages: `initdb` in a temp dir, `pg_ctl` on a loopback port,
 * owned by the `postgres` user when we run as root (PostgreSQL refuses to run as root). The database user is
 * `temporal` with a password over TCP (scram-sha-256), as the compose file's `postgres` image has it.
 * When PostgreSQL is missing and we are root (CI), it is installed with apt-get.
 */
import { execFile } from 'node:child_process';
import { chown, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { isExecutable, onPath, type Log } from '../../src/temporal/cli-binary';

const run = promisify(execFile);

export const POSTGRES_USER = 'temporal';
export const POSTGRES_PASSWORD = 'temporal';

export interface PostgresCluster {
  host: string;
  port: number;
  /** `postgres --version`. */
  version: string;
  /** Fast shutdown (every connection dropped), as an operator's restart or a crash of the database host. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and deletes its directory. */
  destroy(): Promise<void>;
}

const isRoot = () => process.getuid?.() === 0;

/** The directory of `pg_ctl`: on PATH, else Debian's newest `/usr/lib/postgresql/<major>/bin`. */
async function findPgBin(): Promise<string | undefined> {
  const onPathCtl = await onPath('pg_ctl', process.env);
  if (onPathCtl) return dirname(onPathCtl);
  const majors = await readdir('/usr/lib/postgresql').catch(() => [] as string[]);
  for (const major of majors.sort((a, b) => Number(b) - Number(a))) {
    const bin = join('/usr/lib/postgresql', major, 'bin');
    if (await isExecutable(join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

/** `pg_ctl`'s directory, installing Debian's `postgresql` package first when it is missing and we may. */
export async function ensurePostgres(log: Log): Promise<string> {
  const found = await findPgBin();
  if (found) return found;
  if (!isRoot()) throw new Error('PostgreSQL is not installed: run `apt-get install -y postgresql` as root (or put pg_ctl on PATH)');
  log('PostgreSQL is not installed: apt-get update && apt-get install -y postgresql …');
  await run('apt-get', ['update'], { maxBuffer: 64 * 1024 * 1024 });
  await run('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 64 * 1024 * 1024 });
  const installed = await findPgBin();
  if (!installed) throw new Error('apt-get installed postgresql but no pg_ctl was found under /usr/lib/postgresql');
  return installed;
}

/** Runs a PostgreSQL program, as the `postgres` user when we are root. */
function pg(bin: string, program: string, args: string[]): Promise<{ stdout: string }> {
  const path = join(bin, program);
  return isRoot() ? run('runuser', ['-u', 'postgres', '--', path, ...args]) : run(path, args);
}

/** initdb + start on `port` (loopback only; the Unix socket in the cluster's own directory). */
export async function startPostgres(bin: string, port: number, log: Log): Promise<PostgresCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'longhaul-postgres-'));
  const data = join(dir, 'data');
  const pwfile = join(dir, 'pwfile');
  await writeFile(pwfile, POSTGRES_PASSWORD);
  if (isRoot()) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    for (const path of [dir, pwfile]) await chown(path, Number(stdout.trim()), Number(gid.trim()));
  }
  const { stdout: version } = await run(join(bin, 'postgres'), ['--version']);
  await pg(bin, 'initdb', ['-D', data, '-U', POSTGRES_USER, `--pwfile=${pwfile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-instructions']);
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir}`;
  const cluster: PostgresCluster = {
    host: '127.0.0.1',
    port,
    version: version.trim(),
    async start() {
      await pg(bin, 'pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-o', options, '-w', '-t', '60', 'start']);
    },
    async stop() {
      await pg(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
    },
    async destroy() {
      await cluster.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  await cluster.start();
  log(`${cluster.version} on 127.0.0.1:${port} (cluster in ${dir})`);
  return cluster;
}
