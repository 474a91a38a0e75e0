/**
 * Starting the object-store servers on a free loopback port over a temp data directory, for tests and the
 * benchmark. Each handle gives the environment a worker would be given for that store: only each SDK's own
 * standard settings (`AWS_ENDPOINT_URL_S3`, `STORAGE_EMULATOR_HOST`, `AZURE_STORAGE_CONNECTION_STRING`, …).
 * versitygw (S3) is the one the demo embeds too, so it and the runner (`serve`) live in the product
 * (`src/cli/demo-s3-server.ts`); fake-gcs-server and Azurite are the tests' own.
 *
 * `stop()` and `start()` take the server down and bring it back on the same port over the same data, as an
 * outage of the store would; `destroy()` stops it for good and removes its directory.
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/temporal/dev-server';
import { HOST, serve, type StoreServer } from '../../src/cli/demo-s3-server';
import { ensureAzurite, ensureFakeGcsServer } from './object-store-binaries';

export { S3_ACCESS_KEY_ID, S3_REGION, S3_SECRET_ACCESS_KEY, startVersitygw, type StoreServer } from '../../src/cli/demo-s3-server';

/** Azurite's well-known development account (published by Microsoft, valid against emulators only). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/**
 * fake-gcs-server with its filesystem backend: the GCS JSON API, resumable uploads included. The session URIs it
 * hands out name `publicPort` (default: its own), so that a relay in front of it sees the chunks too.
 */
export async function startFakeGcs(options: { publicPort?: number } = {}): Promise<StoreServer> {
  const bin = await ensureFakeGcsServer();
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-fake-gcs-'));
  const port = await freePort();
  const publicUrl = `http://${HOST}:${options.publicPort ?? port}`;
  const args = ['-scheme', 'http', '-host', HOST, '-port', String(port), '-public-host', `${HOST}:${options.publicPort ?? port}`, '-external-url', publicUrl, '-backend', 'filesystem', '-filesystem-root', dataDir, '-log-level', 'error'];
  const control = await serve('fake-gcs-server', bin, args, port, dataDir);
  const endpoint = `http://${HOST}:${port}`;
  return { endpoint, port, dataDir, env: { STORAGE_EMULATOR_HOST: endpoint }, ...control };
}

/** Azurite's blob service, its account the well-known development account. */
export async function startAzurite(): Promise<StoreServer> {
  const bin = await ensureAzurite();
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-azurite-'));
  await mkdir(dataDir, { recursive: true });
  const port = await freePort();
  const args = ['--blobHost', HOST, '--blobPort', String(port), '--location', dataDir, '--silent', '--skipApiVersionCheck', '--disableProductStyleUrl'];
  const control = await serve('azurite', bin, args, port, dataDir);
  const endpoint = `http://${HOST}:${port}/${AZURITE_ACCOUNT}`;
  const connectionString = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${endpoint};`;
  return { endpoint, port, dataDir, env: { AZURE_STORAGE_CONNECTION_STRING: connectionString }, ...control };
}
