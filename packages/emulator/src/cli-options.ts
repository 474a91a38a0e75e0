/**
 * The standalone emulator's options (`npm run emulator`): built-in defaults, then a `--config` JSON file
 * holding any `EmulatorOptions`, then flags for the common ones; each later source wins key by key (objects
 * merge, arrays and values replace). A config key the emulator does not know is an error naming it, so a typo
 * never silently leaves a default in place.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import type { EmulatorOptions } from './emulator';
import { defaultRateLimitConfig } from './rate-limiter';
import { defaultModules } from './modules';
import { STANDALONE_GOOGLE_PORTS } from './google';
import { isPlainObject, mergeModuleOptions, type AnyModule } from './module';

export class EmulatorConfigError extends Error {
  override readonly name = 'EmulatorConfigError';
}

type Json = Record<string, unknown>;

/** Options without a default value (so not found by comparing with the defaults), by their dotted path. */
const OPTIONAL_KEYS = ['fixture', 'hooks.outcome', 'google.fixture', 'imports.requiredCredentials', 'imports.maintenanceRetryAfterSeconds'];

/** Everything a config file may hold, as a shape to check keys against: core options and each module's defaults. */
function knownShape(modules: readonly AnyModule[]): Json {
  const shape: Json = { host: '', port: 0, apiPublicUrl: '', storagePort: 0, storagePublicUrl: '', googlePorts: { apikeys: 0, logging: 0, dns: 0 }, token: '', dataDir: '', storageBytesPerSecond: 0, clockOffsetMs: 0, faults: [], rateLimit: defaultRateLimitConfig };
  for (const module of modules) shape[module.name] = module.defaults;
  return shape;
}

/** Throws naming the first key (dotted path) the shape does not have. */
function checkKeys(value: Json, shape: Json, path: string): void {
  for (const [key, given] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (OPTIONAL_KEYS.includes(at)) continue;
    if (!(key in shape)) throw new EmulatorConfigError(`unknown emulator option '${at}'`);
    if (isPlainObject(shape[key])) {
      if (!isPlainObject(given)) throw new EmulatorConfigError(`emulator option '${at}' must be an object`);
      checkKeys(given, shape[key] as Json, at);
    }
  }
}

/** `b` over `a`: plain objects merge at every depth; anything else given in `b` replaces. */
export function mergeOptions(a: Json, b: Json): Json {
  const out: Json = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (value === undefined) continue;
    out[key] = isPlainObject(value) && isPlainObject(out[key]) ? mergeOptions(out[key] as Json, value) : value;
  }
  return out;
}

/**
 * A config file's options, checked. JSON cannot hold a function, so `hooks.outcome` may be a number: the
 * status every delivery's target answers (0 = could not connect).
 */
export function parseConfig(text: string, source: string, modules: readonly AnyModule[] = defaultModules): Json {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new EmulatorConfigError(`${source} is not valid JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(value)) throw new EmulatorConfigError(`${source} must hold a JSON object of emulator options`);
  try {
    checkKeys(value, knownShape(modules), '');
  } catch (err) {
    throw new EmulatorConfigError(`${source}: ${(err as Error).message}`);
  }
  return value;
}

export function readConfigFile(path: string): Json {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new EmulatorConfigError(`cannot read the config file ${path}: ${(err as Error).message}`);
  }
  return parseConfig(text, path);
}

/** Turns what JSON can say into what the emulator takes (a fixed hook outcome into its function). */
export function toEmulatorOptions(options: Json): EmulatorOptions {
  const hooks = options.hooks as Json | undefined;
  if (hooks && typeof hooks.outcome === 'number') {
    const status = hooks.outcome;
    return { ...options, hooks: { ...hooks, outcome: () => status } } as EmulatorOptions;
  }
  return options as EmulatorOptions;
}

/** The flag values commander gives (`--feed-poll-interval` → `feedPollInterval`). */
export interface EmulatorFlags {
  config?: string;
  host?: string;
  port?: number;
  apiPublicUrl?: string;
  storagePort?: number;
  storagePublicUrl?: string;
  apikeysPort?: number;
  loggingPort?: number;
  dnsPort?: number;
  token?: string;
  dataDir?: string;
  rateLimiting?: boolean;
  rateLimit?: number;
  rateWindow?: number;
  primaryStatus?: number;
  secondaryPoints?: number;
  secondaryWindow?: number;
  maxConcurrent?: number;
  contentPerMinute?: number;
  contentPerHour?: number;
  secondaryStatus?: number;
  secondaryRetryAfter?: boolean;
  exportMs?: number | [number, number];
  archiveBytes?: number;
  failRepositories?: string[];
  storageBytesPerSecond?: number;
  feedEventsPerMinute?: number;
  feedPollInterval?: number;
  feedEventBytes?: number | 'realistic';
  feedWindow?: number;
  hookStatus?: number;
  importTimeScale?: number;
  apikeyDeleteMs?: number;
  bucketScheduledMs?: number;
  bucketWaitingMs?: number;
  bucketRunningMs?: number;
  dnsChangeMs?: number;
}

/** The object without its undefined values and the objects left empty by that: what was actually said. */
function given(value: Json): Json {
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    const kept = isPlainObject(v) ? given(v) : v;
    if (kept !== undefined && !(isPlainObject(kept) && Object.keys(kept).length === 0)) out[key] = kept;
  }
  return out;
}

/** What the flags say, as options (only what was given). */
export function flagOptions(f: EmulatorFlags): Json {
  const s = (ms: number | undefined) => (ms === undefined ? undefined : ms * 1000);
  return given({
      host: f.host,
      port: f.port,
      apiPublicUrl: f.apiPublicUrl,
      storagePort: f.storagePort,
      storagePublicUrl: f.storagePublicUrl,
      googlePorts: { apikeys: f.apikeysPort, logging: f.loggingPort, dns: f.dnsPort },
      token: f.token,
      dataDir: f.dataDir,
      storageBytesPerSecond: f.storageBytesPerSecond,
      rateLimit: {
        enabled: f.rateLimiting,
        limit: f.rateLimit,
        windowMs: s(f.rateWindow),
        primaryStatus: f.primaryStatus,
        secondary: {
          pointsPerWindow: f.secondaryPoints,
          windowMs: s(f.secondaryWindow),
          maxConcurrent: f.maxConcurrent,
          contentPerMinute: f.contentPerMinute,
          contentPerHour: f.contentPerHour,
          status: f.secondaryStatus,
          retryAfter: f.secondaryRetryAfter,
        },
      },
      migrations: { exportMs: f.exportMs, archiveBytes: f.archiveBytes, failRepositories: f.failRepositories },
      feeds: { eventsPerMinute: f.feedEventsPerMinute, pollIntervalSeconds: f.feedPollInterval, eventBytes: f.feedEventBytes, windowSize: f.feedWindow },
      hooks: { outcome: f.hookStatus },
      imports: { timeScale: f.importTimeScale },
      google: { apikeys: { deleteOperationMs: f.apikeyDeleteMs }, buckets: { scheduledMs: f.bucketScheduledMs, waitingForPermissionsMs: f.bucketWaitingMs, runningMs: f.bucketRunningMs }, dns: { changeMs: f.dnsChangeMs } },
  });
}

/** Where the standalone emulator listens unless told otherwise (each Google API on a port of its own). */
export const CLI_DEFAULTS = { host: '127.0.0.1', port: 8787, storagePort: 8788, googlePorts: { ...STANDALONE_GOOGLE_PORTS } };

/** Defaults, then the config file, then the flags. */
export function resolveOptions(flags: EmulatorFlags): EmulatorOptions {
  const file = flags.config ? readConfigFile(flags.config) : {};
  return toEmulatorOptions(mergeOptions(mergeOptions(CLI_DEFAULTS, file), flagOptions(flags)));
}

/** The effective configuration, one line per part, for the start banner (the fixture is left out: it is data). */
export function configSummary(options: EmulatorOptions, modules: readonly AnyModule[] = defaultModules): string[] {
  const all = options as Json;
  const show = (value: unknown) => JSON.stringify(value, (key, v: unknown) => (typeof v === 'function' ? '(function)' : key === 'fixture' ? undefined : v));
  const rateLimit = mergeOptions(defaultRateLimitConfig as unknown as Json, (all.rateLimit as Json | undefined) ?? {});
  const lines = [
    `  ports:           ${show({ host: options.host, api: options.port, storage: options.storagePort, ...options.googlePorts })} (0 = any free port)`,
    `  api links:       ${options.apiPublicUrl ? `under ${options.apiPublicUrl}` : 'under the address the GitHub API listens on'}`,
    `  storage links:   ${options.storagePublicUrl ? `pre-signed under ${options.storagePublicUrl}` : 'pre-signed under the address the storage origin listens on'}`,
    `  state:           ${options.dataDir ? `kept in ${options.dataDir}` : 'in memory only (--data-dir keeps it across restarts)'}`,
    `  token:           ${options.token ? 'only the configured token' : 'any non-empty bearer token'}`,
    `  storage:         ${options.storageBytesPerSecond ? `${options.storageBytesPerSecond} bytes/s` : 'unthrottled'}; faults: ${(options.faults ?? []).length}`,
    `  rateLimit:       ${show(rateLimit)}`,
  ];
  for (const module of modules) lines.push(`  ${module.name.padEnd(16)} ${show(mergeModuleOptions(module.defaults, all[module.name] as object | undefined))}`);
  return lines;
}

// Commander argument parsers: a bad value is reported with the flag's name.

export function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
}

/** An absolute http(s) URL (a public address), without a trailing slash, query or fragment. */
export function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an absolute URL (http://host:port)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('must be an http or https URL');
  if (url.search || url.hash) throw new InvalidArgumentError('must have no query or fragment');
  return url.href.replace(/\/+$/, '');
}

export function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

export function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number ≥ 0');
  return n;
}

export function limitStatus(value: string): number {
  if (value !== '403' && value !== '429') throw new InvalidArgumentError('must be 403 or 429');
  return Number(value);
}

export function onOff(value: string): boolean {
  if (value !== 'on' && value !== 'off') throw new InvalidArgumentError('must be on or off');
  return value === 'on';
}

/** `5000` (fixed) or `2000-6000` (a range, picked per migration). */
export function msOrRange(value: string): number | [number, number] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('must be milliseconds (5000) or a range (2000-6000)');
  if (m[2] === undefined) return Number(m[1]);
  const range: [number, number] = [Number(m[1]), Number(m[2])];
  if (range[0] > range[1]) throw new InvalidArgumentError('the range must go from low to high');
  return range;
}

export function eventBytes(value: string): number | 'realistic' {
  return value === 'realistic' ? value : positive(value);
}

export function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
