/**
 * `npm run emulator` — runs the platform emulator standalone and prints its base URLs and effective settings.
 *
 *   npm run emulator -- --port 8787 --storage-port 8788 --data-dir .longhaul/emulator --export-ms 2000-6000
 *   npm run emulator -- --config emulator.json --token secret
 *
 * Behind a reverse proxy, `--api-public-url` / `--storage-public-url` give the addresses its links carry.
 * Any `EmulatorOptions` can come from `--config <file.json>`; flags cover the common ones and win over the file
 * (`cli-options.ts`). Point longhaul at it with `GITHUB_API_URL=<printed API URL>` and any non-empty `GITHUB_TOKEN`,
 * and `GOOGLE_APIKEYS_URL`, `GOOGLE_LOGGING_URL`, `GOOGLE_DNS_URL` at the printed Google roots.
 */
import { Command, Option } from 'commander';
import { startEmulator } from './emulator';
import { configSummary, eventBytes, httpUrl, limitStatus, list, msOrRange, nonNegative, onOff, port, positive, resolveOptions, type EmulatorFlags } from './cli-options';

/** A flag that its environment variable (`LONGHAUL_EMULATOR_…`) stands in for when not given. */
const withEnv = (flags: string, description: string, env: string, parse: (value: string) => unknown) =>
  new Option(flags, `${description} [env ${env}]`).env(env).argParser(parse);

const program = new Command()
  .name('emulator')
  .description('Runs the longhaul platform emulator (GitHub- and Google-shaped APIs) on this machine.')
  .option('--config <file.json>', 'a JSON file of emulator options (any of EmulatorOptions; flags win over it)')
  .addOption(withEnv('--host <host>', 'address to bind (default 127.0.0.1)', 'LONGHAUL_EMULATOR_HOST', String))
  .addOption(withEnv('--port <port>', 'GitHub API port (0 = any free port; default 8787)', 'LONGHAUL_EMULATOR_PORT', port))
  .addOption(withEnv('--api-public-url <url>', "the GitHub API's public URL, which its links (url fields, Link headers, a 301's Location) carry (default: where it listens)", 'LONGHAUL_EMULATOR_API_PUBLIC_URL', httpUrl))
  .addOption(withEnv('--storage-port <port>', 'storage origin port (0 = any free port; default 8788)', 'LONGHAUL_EMULATOR_STORAGE_PORT', port))
  .addOption(withEnv('--storage-public-url <url>', "the storage origin's public URL, which the archive's pre-signed links carry (default: where it listens)", 'LONGHAUL_EMULATOR_STORAGE_PUBLIC_URL', httpUrl))
  .addOption(withEnv('--apikeys-port <port>', 'Google API Keys port (0 = any free port; default 8789)', 'LONGHAUL_EMULATOR_APIKEYS_PORT', port))
  .addOption(withEnv('--logging-port <port>', 'Google Cloud Logging port (0 = any free port; default 8790)', 'LONGHAUL_EMULATOR_LOGGING_PORT', port))
  .addOption(withEnv('--dns-port <port>', 'Google Cloud DNS port (0 = any free port; default 8791)', 'LONGHAUL_EMULATOR_DNS_PORT', port))
  .option('--token <token>', 'accept only this bearer token (default: any non-empty token)')
  .option('--data-dir <dir>', 'keep the emulator state in <dir>/emulator-state.json across restarts (default: memory only)')
  .option('--rate-limiting <on|off>', 'off: no rate limits, no x-ratelimit headers, GET /rate_limit 404 (an Enterprise Server with rate limiting disabled)', onOff)
  .option('--rate-limit <n>', 'primary rate limit per window', positive)
  .option('--rate-window <seconds>', 'primary rate-limit window in seconds', positive)
  .option('--primary-status <403|429>', 'status of a primary rate-limit answer', limitStatus)
  .option('--secondary-points <n>', 'secondary limit: points per window', positive)
  .option('--secondary-window <seconds>', 'secondary limit: points window in seconds', positive)
  .option('--max-concurrent <n>', 'secondary limit: concurrent requests per caller', positive)
  .option('--content-per-minute <n>', 'secondary limit: content-creating requests per minute', positive)
  .option('--content-per-hour <n>', 'secondary limit: content-creating requests per hour', positive)
  .option('--secondary-status <403|429>', 'status of a secondary rate-limit answer', limitStatus)
  .option('--secondary-retry-after <on|off>', 'whether a secondary rate-limit answer carries retry-after', onOff)
  .option('--export-ms <ms|min-max>', 'how long a migration export takes (fixed, or a range picked per migration)', msOrRange)
  .option('--archive-bytes <n>', 'size of each generated migration archive', positive)
  .option('--fail-repositories <a,b>', 'exports including any of these repositories end failed', list)
  .option('--storage-bytes-per-second <n>', 'throttle archive downloads (0 = unthrottled)', nonNegative)
  .option('--feed-events-per-minute <n>', 'events each activity feed produces per minute', nonNegative)
  .option('--feed-poll-interval <seconds>', 'X-Poll-Interval of the activity feeds', positive)
  .option('--feed-event-bytes <n|realistic>', 'event payload size: a fixed byte count or the realistic mix', eventBytes)
  .option('--feed-window <n>', 'how many events a feed keeps', positive)
  .option('--hook-status <code>', 'status every webhook delivery target answers (0 = could not connect)', nonNegative)
  .option('--import-time-scale <x>', 'multiplies every source-import step duration', positive)
  .option('--apikey-delete-ms <ms>', 'how long an API-key delete operation runs', nonNegative)
  .option('--bucket-scheduled-ms <ms>', 'log bucket operation: time in SCHEDULED', nonNegative)
  .option('--bucket-waiting-ms <ms>', 'log bucket operation: time in WAITING_FOR_PERMISSIONS', nonNegative)
  .option('--bucket-running-ms <ms>', 'log bucket operation: time in RUNNING', nonNegative)
  .option('--dns-change-ms <ms>', 'how long a DNS change stays pending', nonNegative)
  .action(async (flags: EmulatorFlags) => {
    const options = resolveOptions(flags);
    const emulator = await startEmulator(options);
    console.log(`longhaul emulator listening`);
    // Each public address (what links carry), and where it listens when that is another.
    const listening = (publicUrl: string, url: string) => `${publicUrl}${publicUrl === url ? '' : ` (listening on ${url})`}`;
    console.log(`  GitHub API:      ${listening(emulator.apiPublicUrl, emulator.apiUrl)}`);
    // Each Google API at the root of its own port (what `rootUrl` of Google's clients and GOOGLE_*_URL take).
    for (const service of emulator.services.filter((s) => s.prefix || s.ownPort)) console.log(`  ${`${service.name}:`.padEnd(16)} ${emulator.serviceUrl(service.name)}`);
    console.log(`  storage origin:  ${listening(emulator.storage.publicUrl, emulator.storage.baseUrl)}`);
    console.log(`  stats:           ${emulator.apiUrl}/_emulator/stats`);
    console.log(`fixture: org octo-org with repositories alpha (formerly alpha-legacy), beta, gamma; ${options.token ? 'token required' : 'any non-empty bearer token'}`);
    console.log('effective configuration (defaults < --config file < flags):');
    for (const line of configSummary(options)) console.log(line);
    const stop = () => void emulator.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

program.parseAsync().catch((err: Error) => {
  console.error(`emulator: ${err.message}`);
  process.exit(1);
});
