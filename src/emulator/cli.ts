/**
 * `npm run emulator` — runs the platform emulator standalone and prints its base URLs.
 *
 *   npm run emulator -- --port 8787 --storage-port 8788 --token secret
 *
 * Point longhaul at it with `GITHUB_API_URL=<printed API URL>` and any non-empty `GITHUB_TOKEN`, and
 * `GOOGLE_APIKEYS_URL`, `GOOGLE_LOGGING_URL`, `GOOGLE_DNS_URL` at the printed Google roots.
 */
import { Command, InvalidArgumentError } from 'commander';
import { startEmulator } from './emulator';
import { STANDALONE_GOOGLE_PORTS } from './google';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

const program = new Command()
  .name('emulator')
  .description('Runs the longhaul platform emulator (GitHub- and Google-shaped APIs) on this machine.')
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--port <port>', 'API port (0 = any free port)', port, 8787)
  .option('--storage-port <port>', 'storage origin port (0 = any free port)', port, 8788)
  .option('--token <token>', 'accept only this bearer token (default: any non-empty token)')
  .option('--rate-limit <n>', 'primary rate limit per window', positive)
  .option('--rate-window <seconds>', 'primary rate-limit window in seconds', positive)
  .action(async (opts: { host: string; port: number; storagePort: number; token?: string; rateLimit?: number; rateWindow?: number }) => {
    const emulator = await startEmulator({
      host: opts.host,
      port: opts.port,
      storagePort: opts.storagePort,
      token: opts.token,
      googlePorts: STANDALONE_GOOGLE_PORTS,
      rateLimit: {
        ...(opts.rateLimit ? { limit: opts.rateLimit } : {}),
        ...(opts.rateWindow ? { windowMs: opts.rateWindow * 1000 } : {}),
      },
    });
    console.log(`longhaul emulator listening`);
    console.log(`  GitHub API:      ${emulator.apiUrl}`);
    // Each Google API at the root of its own port (what `rootUrl` of Google's clients and GOOGLE_*_URL take).
    for (const service of emulator.services.filter((s) => s.prefix || s.ownPort)) console.log(`  ${`${service.name}:`.padEnd(16)} ${emulator.serviceUrl(service.name)}`);
    console.log(`  storage origin:  ${emulator.storage.baseUrl}`);
    console.log(`  stats:           ${emulator.apiUrl}/_emulator/stats`);
    console.log(`fixture: org octo-org with repositories alpha, beta, gamma; ${opts.token ? 'token required' : 'any non-empty bearer token'}`);
    const stop = () => void emulator.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

program.parseAsync().catch((err: Error) => {
  console.error(`emulator: ${err.message}`);
  process.exit(1);
});
