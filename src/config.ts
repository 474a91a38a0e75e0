/**
 * longhaul's own configuration, from the environment. Temporal's connection settings are read
 * separately (`temporal/connection.ts`); secrets are read here only by activities' dependencies,
 * never passed to workflows.
 */
import { readFileSync } from 'node:fs';

export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';
export const DEFAULT_TASK_QUEUE = 'longhaul';

export interface LonghaulConfig {
  /** GitHub REST base URL (`GITHUB_API_URL`); GitHub Enterprise Server uses `https://HOST/api/v3`. */
  githubApiUrl: string;
  /** Whether `GITHUB_API_URL` was set explicitly (otherwise `npm start` runs the emulator). */
  githubApiUrlConfigured: boolean;
  /** Temporal task queue (`LONGHAUL_TASK_QUEUE`). */
  taskQueue: string;
  /** Where downloads and the embedded server's state go (`LONGHAUL_DATA_DIR`). */
  dataDir: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): LonghaulConfig {
  const githubApiUrl = env.GITHUB_API_URL || DEFAULT_GITHUB_API_URL;
  try {
    const url = new URL(githubApiUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new ConfigError(`GITHUB_API_URL must be an http(s) URL, got ${JSON.stringify(githubApiUrl)}`);
  }
  return {
    githubApiUrl,
    githubApiUrlConfigured: Boolean(env.GITHUB_API_URL),
    taskQueue: env.LONGHAUL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    dataDir: env.LONGHAUL_DATA_DIR || '.longhaul',
  };
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
