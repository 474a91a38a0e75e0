/**
 * Entry point of `longhaul` (the `bin`, `npm start`, `npm run demo`): the one program of src/cli/program.ts.
 */
import { runCli } from './cli/program';

if (require.main === module) {
  // Long-running commands (start, demo, server…) resolve only once stopped, so exiting here cuts nothing short.
  void runCli(process.argv).then((code) => process.exit(code));
}
