/**
 * Dependencies every activity factory receives. The worker builds them once (`createActivityDeps`);
 * tests build them pointing at an in-process emulator.
 */
import { Context } from '@temporalio/activity';
import { ApiClient, GITHUB_DEFAULT_HEADERS, type TokenProvider } from '../http/api-client';
import { RateLimitGate } from '../http/rate-limit-gate';
import { githubRetryPolicy, type RetryPolicy } from '../http/retry-policy';
import { readSecret } from '../config';
import type { Dispatcher } from 'undici';
import type { GoogleClients } from './google/client';

export interface ActivityDeps {
  /** The GitHub REST client (base URL, token, retry policy, shared rate-limit gate). */
  github: ApiClient;
  /** Google Cloud clients (API Keys, Cloud Logging, Cloud DNS) with Google's error model and ADC/static tokens. */
  google: GoogleClients;
  /** Directory archives and other downloads are written to (relative paths in inputs resolve here). */
  dataDir: string;
  /** Injected clock (epoch ms) for anything time-based outside the HTTP client. */
  clock: () => number;
}

/** The current activity attempt (1 outside an activity), for the retry decision. */
export function currentAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

export interface GithubClientOptions {
  baseUrl: string;
  /** Defaults to reading `GITHUB_TOKEN` (or `GITHUB_TOKEN_FILE`) at call time. */
  token?: TokenProvider;
  dispatcher?: Dispatcher;
  policy?: RetryPolicy;
  clock?: () => number;
  gate?: RateLimitGate;
}

export function createGithubClient(opts: GithubClientOptions): ApiClient {
  const clock = opts.clock ?? Date.now;
  return new ApiClient({
    baseUrl: opts.baseUrl,
    token: opts.token ?? (() => readSecret('GITHUB_TOKEN')),
    defaultHeaders: { ...GITHUB_DEFAULT_HEADERS },
    dispatcher: opts.dispatcher,
    policy: opts.policy ?? githubRetryPolicy,
    clock,
    gate: opts.gate ?? new RateLimitGate(clock),
    attempt: currentAttempt,
  });
}
