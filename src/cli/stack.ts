/**
 * The stack and infrastructure commands of `longhaul`: `start`, `demo`, `server`, `worker`, `emulator`,
 * `setup-namespace`, `codec-server`. Their code loads on use (stack-run.ts), so workflow commands start fast.
 */
import { spawn } from 'node:child_process';
import { extname, join } from 'node:path';
import { Option, type Command } from 'commander';
import { CliError } from './kit/context';
import { WORKER_NODE_FLAGS, workerProcessEnv } from '../worker-env';

const run = () => import('./stack-run');

/**
 * Runs one of longhaul's own entry modules (worker, emulator…) as a child with this process's loader (and
 * `nodeFlags`), passing the exit code on.
 */
function runModule(relativePath: string, args: string[], env: NodeJS.ProcessEnv = process.env, nodeFlags: readonly string[] = []): Promise<void> {
  // Under tsx the modules are .ts files, in dist/ compiled .js: the same extension as this file.
  const file = join(__dirname, '..', `${relativePath}${extname(__filename)}`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeFlags, ...process.execArgv, file, ...args], { stdio: 'inherit', env });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward).on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.exitCode = code ?? (signal ? 0 : 5);
      resolve();
    });
  });
}

/** `--[no-]register-search-attributes` on the commands that run a worker. */
function withRegisterOption(command: Command): Command {
  return command
    .option('--register-search-attributes', "before polling, register the search attributes the namespace lacks (default: only on the embedded dev server; LONGHAUL_REGISTER_SEARCH_ATTRIBUTES=on)")
    .option('--no-register-search-attributes', 'never register: refuse to start (exit code 6) when the namespace lacks one');
}

/** The environment of a worker with `--[no-]register-search-attributes` applied (unset: the configured default). */
function registerEnv(opts: { registerSearchAttributes?: boolean }, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  if (opts.registerSearchAttributes === undefined) return env;
  return { ...env, LONGHAUL_REGISTER_SEARCH_ATTRIBUTES: opts.registerSearchAttributes ? 'on' : 'off' };
}

export function registerStackCommands(program: Command): void {
  withRegisterOption(program.command('start'))
    .description('Run the stack: embedded Temporal server unless configured, emulator unless GITHUB_API_URL is set, a worker')
    .action(async (opts: { registerSearchAttributes?: boolean }) => (await run()).start(registerEnv(opts)));
  withRegisterOption(program.command('demo'))
    .description('Run the stack, then drive one organization migration to the end with live progress')
    .option('--exit', 'stop the stack after the demo instead of waiting for Ctrl-C')
    .addOption(
      new Option('--archive-to <store>', 'stream the archive into an embedded object store (s3: versitygw, built into ~/.cache/longhaul on first use) and print the objects').choices(['s3']),
    )
    .action(async (opts: { exit?: boolean; archiveTo?: 's3'; registerSearchAttributes?: boolean }) => (await run()).demo(opts, registerEnv(opts)));
  program
    .command('server')
    .description('Run only the embedded Temporal dev server (SQLite in the data directory, Web UI, search attributes)')
    .action(async () => {
      const { resolveTemporal, log, untilInterrupted } = await run();
      const target = await resolveTemporal((m) => log(`[temporal] ${m}`));
      if (!target.embedded) throw new CliError(`TEMPORAL_ADDRESS is set (${target.connectionOptions.address ?? ''}): nothing to run`, 2);
      log(`Temporal dev server on ${target.connectionOptions.address ?? ''}${target.uiUrl ? `, UI ${target.uiUrl}` : ''}; Ctrl-C stops it`);
      await untilInterrupted({ stop: () => target.embedded!.stop() });
    });
  withRegisterOption(program.command('worker'))
    .description(
      'Run a worker on the configured Temporal server (TEMPORAL_ADDRESS…, else the embedded one) and the configured APIs; it checks the namespace\'s search attributes before it polls',
    )
    .action((opts: { registerSearchAttributes?: boolean }) => runModule('worker', [], workerProcessEnv(registerEnv(opts)), WORKER_NODE_FLAGS));
  program
    .command('emulator')
    .description('Run the API emulator alone (`longhaul emulator --help` for its options)')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[options...]')
    .action((args: string[]) => runModule('emulator/cli', args));
  program
    .command('setup-namespace')
    .description('Register the namespace and longhaul\'s search attributes on the server in TEMPORAL_ADDRESS (idempotent)')
    .action(() => runModule('temporal/setup-namespace', []));
  program
    .command('codec-server')
    .description(
      "Serve Temporal's remote-codec protocol (POST /encode, /decode) so the Web UI shows encrypted payloads in clear; every request needs the bearer token of LONGHAUL_CODEC_SERVER_TOKEN(_FILE)",
    )
    .option('--port <port>', 'port (default 8234)')
    .option('--host <address>', 'address to bind (default 127.0.0.1; LONGHAUL_CODEC_SERVER_HOST)')
    .option('--cors-origin <origin...>', "browser origins allowed to call it (default LONGHAUL_CODEC_SERVER_CORS_ORIGINS, else the local Web UI's)")
    .action(async (opts: { port?: string; host?: string; corsOrigin?: string[] }) => {
      const { startConfiguredCodecServer, log, untilInterrupted, DEFAULT_CODEC_SERVER_PORT } = await run();
      const server = await startConfiguredCodecServer({ port: Number(opts.port ?? DEFAULT_CODEC_SERVER_PORT), host: opts.host, corsOrigins: opts.corsOrigin }, log);
      log(`codec server on ${server.url}; in the Web UI: Settings → Codec Server → ${server.url}`);
      await untilInterrupted({ stop: () => server.close() });
    });
}
