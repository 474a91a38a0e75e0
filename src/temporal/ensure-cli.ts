/**
 * `npm run setup:temporal` — finds or builds the Temporal CLI now (instead of at first start), printing
 * each step. CI runs it before the tests so a fresh machine's Go build is visible in the log.
 */
import { findTemporalCli, cliVersion } from './cli-binary';

async function main(): Promise<void> {
  const log = (m: string) => console.log(`[temporal] ${m}`);
  const path = await findTemporalCli(log);
  if (!path) {
    log('no local Temporal CLI; the SDK download will be used at start (needs internet).');
    return;
  }
  log(`ready: ${path} (${await cliVersion(path)})`);
}

main().catch((err: Error) => {
  console.error(`setup:temporal: ${err.message}`);
  process.exit(1);
});
