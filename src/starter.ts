/**
 * The starter CLI: starts longhaul workflows and, on request, waits for or follows them.
 *
 *   npm run starter -- --help
 *   npm run starter -- migrate --org octo-org --repo alpha --lock --wait
 *
 * Each API family registers its commands from `src/cli/<family>.ts`.
 */
import { Command, CommanderError } from 'commander';
import { CliError, createCliContext, type CliContext } from './cli/context';
import { registerMigrateCommands } from './cli/migrate';
import { registerGoogleCommands } from './cli/google';
import { registerImportCommands } from './cli/import';
import { registerScheduleCommands } from './cli/schedules';
import { registerLimitsCommands } from './cli/limits';

export function buildProgram(ctx: () => CliContext): Command {
  const program = new Command()
    .name('starter')
    .description('Start and watch longhaul workflows. Connects per TEMPORAL_* settings, else to the embedded server started by `npm start`.')
    .showHelpAfterError()
    .exitOverride();
  registerMigrateCommands(program, ctx);
  registerGoogleCommands(program, ctx);
  registerImportCommands(program, ctx);
  registerScheduleCommands(program, ctx);
  registerLimitsCommands(program, ctx);
  return program;
}

async function main(argv: string[]): Promise<number> {
  let context: CliContext | undefined;
  const ctx = () => (context ??= createCliContext());
  try {
    await buildProgram(ctx).parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof CliError) {
      console.error(`error: ${err.message}`);
      return err.exitCode;
    }
    console.error(`error: ${(err as Error).message ?? String(err)}`);
    return 1;
  } finally {
    await context?.close();
  }
}

if (require.main === module) {
  main(process.argv).then((code) => process.exit(code));
}
