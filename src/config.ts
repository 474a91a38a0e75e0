/**
 * longhaul's own configuration, from the environment. Temporal's connection settings are read
 * separately (`temporal/connection.ts`); secrets are read here only by activities' dependencies,
 * never passed to workflows.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { MAX_PART_BYTES, MAX_PARTS_IN_FLIGHT, MIB, MIN_PART_BYTES } from './common/object-store-limits';
import { readVariable, setting, type SettingName } from './settings';

export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';
export const DEFAULT_TASK_QUEUE = 'longhaul';
export const DEFAULT_GOOGLE_APIKEYS_URL = 'https://apikeys.googleapis.com';
export const DEFAULT_GOOGLE_LOGGING_URL = 'https://logging.googleapis.com';
export const DEFAULT_GOOGLE_DNS_URL = 'https://dns.googleapis.com';

/**
 * The REST API versions GitHub serves (`X-GitHub-Api-Version`), oldest first: 2022-11-28 (GitHub's default when the
 * header is absent, supported until at least 2028-03) and 2026-03-10, the first with breaking changes
 * (docs/operations.md, "GitHub REST API version"). A credential sends one of them; 2022-11-28 unless it says otherwise.
 */
export const GITHUB_API_VERSIONS = ['2022-11-28', '2026-03-10'] as const;
export type GithubApiVersion = (typeof GITHUB_API_VERSIONS)[number];
export const DEFAULT_GITHUB_API_VERSION: GithubApiVersion = '2022-11-28';

export interface LonghaulConfig {
  /** GitHub REST base URL (`GITHUB_API_URL`); GitHub Enterprise Server uses `https://HOST/api/v3`. */
  githubApiUrl: string;
  /** Whether `GITHUB_API_URL` was set explicitly (otherwise `npm start` runs the emulator). */
  githubApiUrlConfigured: boolean;
  /** Google API Keys v2 base URL (`GOOGLE_APIKEYS_URL`). */
  googleApikeysUrl: string;
  /** Google Cloud Logging v2 base URL (`GOOGLE_LOGGING_URL`). */
  googleLoggingUrl: string;
  /** Google Cloud DNS v1 base URL (`GOOGLE_DNS_URL`). */
  googleDnsUrl: string;
  /** Temporal task queue (`LONGHAUL_TASK_QUEUE`). */
  taskQueue: string;
  /** Where downloads and the embedded server's state go (`LONGHAUL_DATA_DIR`). */
  dataDir: string;
  /** GitHub credentials by name: the default one first, then `LONGHAUL_GITHUB_CREDENTIALS`. */
  githubCredentials: GithubCredentialConfig[];
  /** The name of the Google credential and its fleet-wide budget (`LONGHAUL_GOOGLE_CREDENTIAL`, default `google`). */
  googleCredential: string;
  /** The fleet-wide rate governor (`LONGHAUL_RATE_GOVERNOR=off` keeps every limit per process). */
  rateGovernor: { enabled: boolean; settings: RateGovernorSettings };
  /**
   * Whether a worker registers the search attributes its namespace lacks before it polls
   * (`LONGHAUL_REGISTER_SEARCH_ATTRIBUTES=on|off`, or `longhaul worker --[no-]register-search-attributes`).
   * Undefined: on with the embedded dev server, off on a configured server (the worker then refuses to start).
   */
  registerSearchAttributes?: boolean;
  /**
   * Archive uploads into object storage (`LONGHAUL_ARCHIVE_PART_MIB`, `LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT`); unset
   * ones take the upload's defaults (8 MiB, 4).
   */
  archiveUpload: ArchiveUploadSettings;
  /**
   * Hosts (names or addresses, `LONGHAUL_ALLOWED_HOSTS`, comma-separated) an answer or an input may lead the worker
   * to although they are loopback or private (an internal storage or sink): see `src/http/outbound-policy.ts`.
   */
  allowedHosts: string[];
}

/**
 * How an archive upload cuts and sends the archive: each upload holds at most `partBytes × (partsInFlight + 1)`
 * of it in memory (the one more is the part being filled).
 */
export interface ArchiveUploadSettings {
  /** @format bytes — a whole number of MiB, at least S3's 5 MiB (so also a multiple of GCS's 256 KiB). */
  partBytes?: number;
  /** Parts being stored at once (S3, Azure; GCS takes one chunk after the other). */
  partsInFlight?: number;
}

/**
 * One GitHub credential: a named budget. Secrets stay in the environment (or files) and are read at call
 * time; workflow inputs name the credential, never the secret.
 */
export interface GithubCredentialConfig {
  name: string;
  apiUrl: string;
  /** The REST API version its requests ask for (`GITHUB_API_VERSION` / `GITHUB_<NAME>_API_VERSION`). */
  apiVersion: GithubApiVersion;
  auth:
    | { kind: 'token'; env: string }
    | { kind: 'app'; appId: string; privateKeyFile: string; installationId: number };
}

/** Governor settings from the environment; unset ones take the governor's defaults. */
export interface RateGovernorSettings {
  maxConcurrent?: number;
  reserve?: number;
  mutationSpacingMs?: number;
  contentPerMinute?: number;
  contentPerHour?: number;
  spammedWaitMs?: number;
}

export const DEFAULT_GITHUB_CREDENTIAL = 'github';

/** `GITHUB_<NAME>_…` prefix of a named credential's variables (the default one uses `GITHUB_…`). */
function credentialPrefix(name: string, isDefault: boolean): string {
  return isDefault ? 'GITHUB_' : `GITHUB_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_`;
}

function githubCredential(env: NodeJS.ProcessEnv, name: string, isDefault: boolean, fallbackUrl: string): GithubCredentialConfig {
  const p = credentialPrefix(name, isDefault);
  const apiUrl = httpUrl(env, `${p}API_URL`, fallbackUrl);
  const apiVersion = githubApiVersion(env, `${p}API_VERSION`);
  const appId = env[`${p}APP_ID`];
  if (!appId) return { name, apiUrl, apiVersion, auth: { kind: 'token', env: `${p}TOKEN` } };
  const privateKeyFile = env[`${p}APP_PRIVATE_KEY_FILE`];
  const installationId = Number(env[`${p}APP_INSTALLATION_ID`]);
  if (!privateKeyFile) throw new ConfigError(`${p}APP_ID is set: ${p}APP_PRIVATE_KEY_FILE must name the App's private key (.pem)`);
  if (!Number.isInteger(installationId) || installationId <= 0) throw new ConfigError(`${p}APP_ID is set: ${p}APP_INSTALLATION_ID must be the installation's numeric id`);
  return { name, apiUrl, apiVersion, auth: { kind: 'app', appId, privateKeyFile, installationId } };
}

/** `env[name]`, one of the versions GitHub serves; a typo would otherwise be a 400 on every request of the credential. */
export function githubApiVersion(env: NodeJS.ProcessEnv, name: string): GithubApiVersion {
  const raw = env[name];
  if (raw === undefined || raw === '') return DEFAULT_GITHUB_API_VERSION;
  const version = GITHUB_API_VERSIONS.find((v) => v === raw.trim());
  if (!version) throw new ConfigError(`${name} must be one of GitHub's REST API versions ${GITHUB_API_VERSIONS.join(', ')}, got ${JSON.stringify(raw)}`);
  return version;
}

function githubCredentials(env: NodeJS.ProcessEnv, defaultUrl: string): GithubCredentialConfig[] {
  const defaultName = setting('LONGHAUL_GITHUB_CREDENTIAL', env) || DEFAULT_GITHUB_CREDENTIAL;
  const names = (setting('LONGHAUL_GITHUB_CREDENTIALS', env) ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  for (const name of [defaultName, ...names]) credentialName(name);
  const extra = names.filter((n) => n !== defaultName).map((n) => githubCredential(env, n, false, DEFAULT_GITHUB_API_URL));
  return [githubCredential(env, defaultName, true, defaultUrl), ...extra];
}

function credentialName(name: string): string {
  if (!/^[a-z0-9][a-z0-9._-]{0,62}$/i.test(name)) throw new ConfigError(`credential name ${JSON.stringify(name)} must be letters, digits, ".", "_" or "-"`);
  return name;
}

/** `env[name]` as an integer in `[min, max]`, or undefined when unset; `why` says where the bounds come from. */
function optionalInt(env: NodeJS.ProcessEnv, name: SettingName, min: number, max = Number.POSITIVE_INFINITY, why = ''): number | undefined {
  const raw = setting(name, env);
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.POSITIVE_INFINITY ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`${name} must be an integer ${range}${why}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** The archive upload's part size and parts in flight, checked against every store's rules (`common/object-store-limits.ts`). */
export function archiveUploadSettings(env: NodeJS.ProcessEnv): ArchiveUploadSettings {
  const partMib = optionalInt(env, 'LONGHAUL_ARCHIVE_PART_MIB', MIN_PART_BYTES / MIB, MAX_PART_BYTES / MIB, ' (MiB: S3 takes parts of 5 MiB or more, GCS multiples of 256 KiB, Azure blocks up to 4000 MiB)');
  const partsInFlight = optionalInt(env, 'LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT', 1, MAX_PARTS_IN_FLIGHT, ' (each holds a part in memory)');
  return { ...(partMib !== undefined ? { partBytes: partMib * MIB } : {}), ...(partsInFlight !== undefined ? { partsInFlight } : {}) };
}

function rateGovernorSettings(env: NodeJS.ProcessEnv): LonghaulConfig['rateGovernor'] {
  const enabled = onOff(env, 'LONGHAUL_RATE_GOVERNOR') ?? true;
  const settings: RateGovernorSettings = {
    maxConcurrent: optionalInt(env, 'LONGHAUL_MAX_CONCURRENT_REQUESTS', 1),
    reserve: optionalInt(env, 'LONGHAUL_RATE_RESERVE', 0),
    mutationSpacingMs: optionalInt(env, 'LONGHAUL_MUTATION_SPACING_MS', 0),
    contentPerMinute: optionalInt(env, 'LONGHAUL_CONTENT_PER_MINUTE', 1),
    contentPerHour: optionalInt(env, 'LONGHAUL_CONTENT_PER_HOUR', 1),
    spammedWaitMs: optionalInt(env, 'LONGHAUL_SPAMMED_WAIT_MS', 0),
  };
  for (const key of Object.keys(settings) as (keyof RateGovernorSettings)[]) if (settings[key] === undefined) delete settings[key];
  return { enabled, settings };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): LonghaulConfig {
  const githubApiUrl = httpUrl(env, 'GITHUB_API_URL', DEFAULT_GITHUB_API_URL);
  return {
    githubApiUrl,
    githubApiUrlConfigured: Boolean(env.GITHUB_API_URL),
    googleApikeysUrl: httpUrl(env, 'GOOGLE_APIKEYS_URL', DEFAULT_GOOGLE_APIKEYS_URL),
    googleLoggingUrl: httpUrl(env, 'GOOGLE_LOGGING_URL', DEFAULT_GOOGLE_LOGGING_URL),
    googleDnsUrl: httpUrl(env, 'GOOGLE_DNS_URL', DEFAULT_GOOGLE_DNS_URL),
    taskQueue: setting('LONGHAUL_TASK_QUEUE', env) || DEFAULT_TASK_QUEUE,
    dataDir: setting('LONGHAUL_DATA_DIR', env) || '.longhaul',
    githubCredentials: githubCredentials(env, githubApiUrl),
    googleCredential: credentialName(setting('LONGHAUL_GOOGLE_CREDENTIAL', env) || 'google'),
    rateGovernor: rateGovernorSettings(env),
    registerSearchAttributes: onOff(env, 'LONGHAUL_REGISTER_SEARCH_ATTRIBUTES'),
    archiveUpload: archiveUploadSettings(env),
    allowedHosts: allowedHosts(env),
  };
}

/** `LONGHAUL_ALLOWED_HOSTS`: host names or IP addresses (IPv6 with or without brackets), comma-separated; no schemes, ports or ranges. */
export function allowedHosts(env: NodeJS.ProcessEnv): string[] {
  const hosts = (setting('LONGHAUL_ALLOWED_HOSTS', env) ?? '').split(',').map((h) => h.trim()).filter(Boolean);
  const hostName = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i;
  for (const host of hosts) {
    if (!isIP(host.replace(/^\[(.*)\]$/, '$1')) && !hostName.test(host)) {
      throw new ConfigError(`LONGHAUL_ALLOWED_HOSTS takes host names or IP addresses separated by commas, got ${JSON.stringify(host)}`);
    }
  }
  return hosts;
}

/** `on`/`off` (any case) as a boolean; undefined when unset. */
export function onOff(env: NodeJS.ProcessEnv, name: SettingName): boolean | undefined {
  const raw = setting(name, env);
  if (raw === undefined || raw === '') return undefined;
  const flag = raw.toLowerCase();
  if (flag !== 'on' && flag !== 'off') throw new ConfigError(`${name} must be on or off, got ${JSON.stringify(raw)}`);
  return flag === 'on';
}

/** The URL in `env[name]` (or the default), which must be http(s). */
function httpUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = readVariable(name, env) || fallback;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  return value;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads a secret at call time: `NAME` from the environment, or the file named by `NAME_FILE`
 * (Docker/Kubernetes secrets). Returns undefined when neither is set.
 */
export function readSecret(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const direct = readVariable(name, env);
  if (direct) return direct.trim();
  const file = readVariable(`${name}_FILE`, env);
  if (file) return readFileSync(file, 'utf8').trim();
  return undefined;
}

/** `longhaul codec-server`'s settings (`LONGHAUL_CODEC_SERVER_*`); its keys are the codec's (`temporal/codec.ts`). */
export interface CodecServerSettings {
  /** Bearer tokens accepted (`LONGHAUL_CODEC_SERVER_TOKEN` / `_FILE`: comma- or newline-separated, for rotation). */
  tokens: string[];
  /** `LONGHAUL_CODEC_SERVER_AUTH=off`: no token, allowed on loopback only (the codec server refuses otherwise). */
  authOff: boolean;
  /** Browser origins allowed (`LONGHAUL_CODEC_SERVER_CORS_ORIGINS`); undefined: the local UI's. */
  corsOrigins?: string[];
  /** Host names the `Host` header may name besides loopback (`LONGHAUL_CODEC_SERVER_HOSTS`). */
  hostNames: string[];
  /** Bind address (`LONGHAUL_CODEC_SERVER_HOST`), default 127.0.0.1. */
  host?: string;
  /** PEM files for https (`LONGHAUL_CODEC_SERVER_TLS_CERT_FILE`, `LONGHAUL_CODEC_SERVER_TLS_KEY_FILE`). */
  tls?: { certFile: string; keyFile: string };
}

const list = (raw: string | undefined) => (raw ?? '').split(/[\n,]/).map((s) => s.trim()).filter(Boolean);

export function codecServerSettings(env: NodeJS.ProcessEnv = process.env): CodecServerSettings {
  let tokenText: string | undefined;
  try {
    tokenText = readSecret('LONGHAUL_CODEC_SERVER_TOKEN', env);
  } catch (err) {
    throw new ConfigError(`LONGHAUL_CODEC_SERVER_TOKEN_FILE: cannot read ${readVariable('LONGHAUL_CODEC_SERVER_TOKEN_FILE', env) ?? ''}: ${(err as Error).message}`);
  }
  const authOff = onOff(env, 'LONGHAUL_CODEC_SERVER_AUTH') === false;
  const tokens = list(tokenText);
  if (authOff && tokens.length > 0) throw new ConfigError('LONGHAUL_CODEC_SERVER_AUTH=off and a LONGHAUL_CODEC_SERVER_TOKEN are both set: choose one');
  const origins = list(setting('LONGHAUL_CODEC_SERVER_CORS_ORIGINS', env));
  for (const origin of origins) {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) throw new ConfigError(`LONGHAUL_CODEC_SERVER_CORS_ORIGINS: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], no path)`);
  }
  const certFile = setting('LONGHAUL_CODEC_SERVER_TLS_CERT_FILE', env);
  const keyFile = setting('LONGHAUL_CODEC_SERVER_TLS_KEY_FILE', env);
  if (Boolean(certFile) !== Boolean(keyFile)) throw new ConfigError('LONGHAUL_CODEC_SERVER_TLS_CERT_FILE and LONGHAUL_CODEC_SERVER_TLS_KEY_FILE go together');
  return {
    tokens,
    authOff,
    ...(origins.length > 0 ? { corsOrigins: origins } : {}),
    hostNames: list(setting('LONGHAUL_CODEC_SERVER_HOSTS', env)),
    ...(setting('LONGHAUL_CODEC_SERVER_HOST', env) ? { host: setting('LONGHAUL_CODEC_SERVER_HOST', env) } : {}),
    ...(certFile && keyFile ? { tls: { certFile, keyFile } } : {}),
  };
}
