/**
 * The starter: the workflow commands of `longhaul` (the design card's entry point, `npm run starter -- …`).
 * It runs the same one program as `longhaul` (src/cli/program.ts).
 *
 *   npm run starter -- --help
 *   npm run starter -- migrate --org octo-org --repo alpha --lock --wait
 */
import { runCli } from './cli/program';

export { buildProgram } from './cli/program';

if (require.main === module) {
  void runCli(process.argv).then((code) => process.exit(code));
}
