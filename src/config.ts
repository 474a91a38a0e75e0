/**
 * longhaul's own configuration, from the environment. Temporal's connection settings are read
 * separately (`temporal/connection.ts`); secrets are read here only by activities' dependencies,
 * never passed to workflows.
 */
import { readFileSync } from 'node:fs';

export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';
export const DEFAULT_TASK_QUEUE = 'longhaul';
export const DEFAULT_GOOGLE_APIKEYS_URL = 'https://apikeys.googleapis.com';
export const DEFAULT_GOOGLE_LOGGING_URL = 'https://logging.googleapis.com';
export const DEFAULT_GOOGLE_DNS_URL = 'https://dns.googleapis.com';

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
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): LonghaulConfig {
  const githubApiUrl = httpUrl(env, 'GITHUB_API_URL', DEFAULT_GITHUB_API_URL);
  return {
    githubApiUrl,
    githubApiUrlConfigured: Boolean(env.GITHUB_API_URL),
    googleApikeysUrl: httpUrl(env, 'GOOGLE_APIKEYS_URL', DEFAULT_GOOGLE_APIKEYS_URL),
    googleLoggingUrl: httpUrl(env, 'GOOGLE_LOGGING_URL', DEFAULT_GOOGLE_LOGGING_URL),
    googleDnsUrl: httpUrl(env, 'GOOGLE_DNS_URL', DEFAULT_GOOGLE_DNS_URL),
    taskQueue: env.LONGHAUL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    dataDir: env.LONGHAUL_DATA_DIR || '.longhaul',
  };
}

/** The URL in `env[name]` (or the default), which must be http(s). */
function httpUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = env[name] || fallback;
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
  const direct = env[name];
  if (direct) return direct.trim();
  const file = env[`${name}_FILE`];
  if (file) return readFileSync(file, 'utf8').trim();
  return undefined;
}
