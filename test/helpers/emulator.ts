/** Test helpers around an in-process emulator: starting one, activity deps pointing at it, request counts. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type Emulator, type EmulatorOptions } from '@longhaul/emulator';
import { createGithubClient } from '../../src/http/github';
import { createGoogleClients } from '../../src/http/google';
import type { ActivityDeps } from '../../src/activities/context';
import type { RetryPolicy } from '../../src/http/retry-policy';
import type { ApiObserver } from '../../src/http/observer';
import { apiObserver } from '../../src/http/api-observer';
import type { GithubApiVersion } from '../../src/config';
import { testGithubApiVersion } from './api-version';

export const TEST_TOKEN = 'test-token-7f3a9c1e-never-in-history';

export async function startTestEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({ token: TEST_TOKEN, ...options });
}

/**
 * Activity deps pointing at the emulator, with a fresh temp data dir. `clock` (the wall clock by default) is the
 * HTTP clients' and the activities' time: a time-skipping stack passes the environment's. `githubObserver` is told
 * about every GitHub call too (what the client learned: e.g. an answer that closed its rate-limit gate), besides the
 * worker's own observer (metrics, logs). The GitHub client asks for the test file's REST API version (`api-version.ts`)
 * unless `apiVersion` names one.
 */
export async function emulatorDeps(
  emulator: Emulator,
  overrides: { policy?: RetryPolicy; googlePolicy?: RetryPolicy; token?: string; clock?: () => number; sleep?: ActivityDeps['sleep']; githubObserver?: ApiObserver; apiVersion?: GithubApiVersion } = {},
): Promise<ActivityDeps> {
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-test-'));
  const clock = overrides.clock ?? Date.now;
  const { githubObserver: extra } = overrides;
  const own = apiObserver('github', { clock });
  const observer: ApiObserver | undefined = extra && { observe: (o) => (extra.observe(o), own.observe(o)) };
  return {
    github: createGithubClient({ baseUrl: emulator.apiUrl, token: () => overrides.token ?? TEST_TOKEN, policy: overrides.policy, clock, observer, apiVersion: overrides.apiVersion ?? testGithubApiVersion() }),
    google: createGoogleClients(
      { apikeys: emulator.serviceUrl('google-apikeys'), logging: emulator.serviceUrl('google-logging'), dns: emulator.serviceUrl('google-dns') },
      { token: () => overrides.token ?? TEST_TOKEN, policy: overrides.googlePolicy, clock },
    ),
    dataDir,
    clock,
    ...(overrides.sleep ? { sleep: overrides.sleep } : {}),
  };
}

/** Requests the emulator received on routes whose `METHOD pattern` key contains `fragment`. */
export function requestsTo(emulator: Emulator, method: string, fragment: string): number {
  return Object.entries(emulator.stats.byRoute)
    .filter(([key]) => key.startsWith(`${method} `) && key.includes(fragment))
    .reduce((sum, [, n]) => sum + n, 0);
}
