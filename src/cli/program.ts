/**
 * `longhaul`: the one command-line program. Every entry point (`npx longhaul`, `npm start`, `npm run starter
 * -- …`, `src/main.ts`, `src/starter.ts`) runs this program; each area registers its commands from its module.
 *
 * The contract every command keeps: stdout carries only the result; `--json` prints exactly one JSON object
 * (errors too); progress and logs go to stderr; the exit code says how it ended (`EXIT_CODES_HELP`).
 */
import { Command, CommanderError } from 'commander';
import { CliError, createCliContext, describeFailure, printJson, type CliContext } from './kit/context';
import { EXIT_CODES_HELP, ExitCode } from '../common/exit-codes';
import { registerProcessCommands } from '../processes';
import { registerLifecycleCommands } from './lifecycle';
import { registerStackCommands } from './stack';
import { registerDoctorCommand } from './doctor';
import { releaseVersion } from '../release';

export function buildProgram(ctx: () => CliContext): Command {
  const program = new Command()
    .name('longhaul')
    .description(
      'Durable workflows for slow, rate-limited APIs. Workflow commands connect per TEMPORAL_* settings, else to the embedded server started by `longhaul start`.',
    )
    .version(releaseVersion(), '-V, --version', 'print the release version (CHANGELOG.md says what each brought)')
    .showHelpAfterError()
    // Each command's options are its own, in the order given: a command with subcommands of the same options
    // (`backup --org` and `backup status --org`) sees `status` before the options that follow it.
    .enablePositionalOptions()
    .exitOverride()
    .addHelpText('after', EXIT_CODES_HELP);
  registerStackCommands(program);
  // Each process's commands (src/processes/index.ts): those that start work, then the lifecycle commands that
  // follow it, then those that inspect what runs (`limits`).
  registerProcessCommands(program, ctx, 'start');
  registerLifecycleCommands(program, ctx);
  registerProcessCommands(program, ctx, 'inspect');
  registerDoctorCommand(program, ctx);
  // Subcommands exit through the same override (a usage error is exit code 2, not commander's 1).
  for (const command of program.commands) command.exitOverride().addHelpText('after', EXIT_CODES_HELP);
  return program;
}

/** Whether the user asked for JSON: then even an error is one JSON object on stdout. */
function wantsJson(argv: string[]): boolean {
  return argv.slice(2).includes('--json');
}

/** Runs the program on `argv` (as `process.argv`) and returns the exit code; never throws. */
export async function runCli(argv: string[]): Promise<number> {
  let context: CliContext | undefined;
  const ctx = () => (context ??= createCliContext());
  const json = wantsJson(argv);
  const fail = (exitCode: number, error: { type?: string; message: string }) => {
    if (json) printJson({ error, exitCode });
    else console.error(`error: ${error.message}`);
    return exitCode;
  };
  try {
    await buildProgram(ctx).parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.Success;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed its message (and the help) on stderr.
      if (err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return ExitCode.Success;
      if (json) printJson({ error: { type: err.code, message: err.message.replace(/^error: /, '') }, exitCode: ExitCode.Usage });
      return ExitCode.Usage;
    }
    if (err instanceof CliError) return fail(err.exitCode, { type: 'CliError', message: err.message });
    return fail(ExitCode.Unavailable, describeFailure(err));
  } finally {
    await context?.close().catch(() => undefined);
  }
}
