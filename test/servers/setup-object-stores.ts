/**
 * `npm run setup:object-stores` — builds or installs the object-store servers the tests and the benchmark run
 * (versitygw, fake-gcs-server, Azurite) into the longhaul cache now, printing each step, so a fresh machine's
 * builds show in CI's log instead of inside a test's timeout.
 */
import { ensureAzurite, ensureFakeGcsServer, ensureVersitygw } from './object-store-binaries';

async function main(): Promise<void> {
  const log = (m: string) => console.log(`[object-stores] ${m}`);
  for (const [name, ensure] of [
    ['versitygw', ensureVersitygw],
    ['fake-gcs-server', ensureFakeGcsServer],
    ['azurite', ensureAzurite],
  ] as const) {
    log(`${name}: ready at ${await ensure(log)}`);
  }
}

main().catch((err: Error) => {
  console.error(`setup:object-stores: ${err.message}`);
  process.exit(1);
});
