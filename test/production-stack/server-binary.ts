/**
 * The real Temporal server (`go.temporal.io/server/cmd/server`) and its SQL schema tool
 * (`cmd/tools/sql`, the `temporal-sql-tool` of the admin-tools image), built with Go at the version
 * docker-compose.yml pins, into `~/.cache/longhaul/temporal-server-<version>/` — as the CLI is built
 * (`cli-binary.ts`). The compose file is the one source of the version: the check runs what production runs.
 */
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDir, goInstall, isExecutable, onPath, type Log } from '../../src/temporal/cli-binary';

const SERVER_MODULE = 'go.temporal.io/server';
const SERVER_PACKAGE = `${SERVER_MODULE}/cmd/server`;
const SQL_TOOL_PACKAGE = `${SERVER_MODULE}/cmd/tools/sql`;

export interface ServerBinaries {
  version: string;
  server: string;
  sqlTool: string;
  /** Milliseconds the Go build took; 0 when both were cached. */
  buildMs: number;
}

/**
 * The server version docker-compose.yml runs (`temporalio/server:X`); the admin-tools image that applies the
 * schema must be of the same server version, or the check refuses to run.
 */
export async function composeServerVersion(composeFile: string): Promise<string> {
  const text = await readFile(composeFile, 'utf8');
  const server = /image:\s*temporalio\/server:(\d+\.\d+\.\d+)\s*$/m.exec(text)?.[1];
  const tools = /image:\s*temporalio\/admin-tools:(\d+\.\d+\.\d+)\b/m.exec(text)?.[1];
  if (!server) throw new Error(`${composeFile} pins no temporalio/server:X.Y.Z image`);
  if (tools !== server) throw new Error(`${composeFile}: temporalio/admin-tools is ${tools ?? 'missing'}, temporalio/server ${server}: they must match`);
  return server;
}

export function serverBinDir(version: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), `temporal-server-${version}`);
}

/** Finds the cached build of `version`, or builds it with Go (several minutes on two cores, once). */
export async function ensureServerBinaries(version: string, log: Log, env: NodeJS.ProcessEnv = process.env): Promise<ServerBinaries> {
  const dir = serverBinDir(version, env);
  const server = join(dir, 'temporal-server');
  const sqlTool = join(dir, 'temporal-sql-tool');
  if ((await isExecutable(server)) && (await isExecutable(sqlTool))) {
    log(`using cached Temporal server ${version} build: ${dir}`);
    return { version, server, sqlTool, buildMs: 0 };
  }
  const go = await onPath('go', env);
  if (!go) throw new Error(`no cached Temporal server ${version} in ${dir} and no Go toolchain on PATH: install Go (https://go.dev/dl)`);
  log(`building the Temporal server ${version} and temporal-sql-tool with Go into ${dir} (first run only; takes several minutes)…`);
  const started = Date.now();
  await goInstall(go, [SERVER_PACKAGE, SQL_TOOL_PACKAGE], `v${version}`, dir, env);
  // Go names the binaries after their packages (`server`, `sql`); the images call them these names.
  await rename(join(dir, 'server'), server);
  await rename(join(dir, 'sql'), sqlTool);
  const buildMs = Date.now() - started;
  log(`built ${server} and ${sqlTool} in ${(buildMs / 1000).toFixed(0)} s`);
  return { version, server, sqlTool, buildMs };
}
