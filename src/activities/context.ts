/**
 * Dependencies every activity factory receives. The worker builds them once (`createActivityDeps`);
 * tests build them pointing at an in-process emulator.
 */
import { Context } from '@temporalio/activity';
import { ApiClient, GITHUB_DEFAULT_HEADERS, type TokenProvider } from '../http/api-client';
import { RateLimitGate } from '../http/rate-limit-gate';
import { githubRetryPolicy, type RetryPolicy } from '../http/retry-policy';
import { readSecret } from '../config';
import type { RequestBudget } from '../http/request-budget';
import { ApplicationFailure } from '@temporalio/common';
import type { Dispatcher } from 'undici';
import type { GoogleClients } from './google/client';
import { currentCredential } from './credential-scope';

export interface ActivityDeps {
  /** The GitHub REST client of the default credential (base URL, token, retry policy, rate-limit gate). */
  github: ApiClient;
  /** Every configured GitHub credential's client by name (the default one included), for inputs naming one. */
  githubClients?: Readonly<Record<string, ApiClient>>;
  /** Google Cloud clients (API Keys, Cloud Logging, Cloud DNS) with Google's error model and ADC/static tokens. */
  google: GoogleClients;
  /** The name of the Google credential (its fleet-wide budget); inputs naming another one are refused. */
  googleCredential?: string;
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
  /** The fleet-wide budget of this credential (the rate governor); per process without it. */
  budget?: RequestBudget;
  /** @format milliseconds — how long a 422 "spammed" closes content creation for the fleet. */
  spammedWaitMs?: number;
}

/**
 * The client of the credential the running activity's workflow names (`credential` in its input, carried
 * as a header; see `credential-scope.ts`), or the default one. An unknown name is a clear non-retryable
 * failure: the worker fleet was not configured with it.
 */
export function githubFor(deps: Pick<ActivityDeps, 'github' | 'githubClients'>, credential: string | undefined = currentCredential()): ApiClient {
  if (credential === undefined) return deps.github;
  const client = deps.githubClients?.[credential];
  if (!client) {
    const known = Object.keys(deps.githubClients ?? {}).join(', ') || '(only the default)';
    throw ApplicationFailure.nonRetryable(`no GitHub credential named ${JSON.stringify(credential)} on this worker (configured: ${known})`, 'UnknownCredential');
  }
  return client;
}

/** The Google clients, provided the running workflow names no credential or the configured Google one. */
export function googleFor(deps: Pick<ActivityDeps, 'google' | 'googleCredential'>, credential: string | undefined = currentCredential()): GoogleClients {
  const configured = deps.googleCredential ?? DEFAULT_GOOGLE_CREDENTIAL;
  if (credential !== undefined && credential !== configured) {
    throw ApplicationFailure.nonRetryable(`no Google credential named ${JSON.stringify(credential)} on this worker (configured: ${configured})`, 'UnknownCredential');
  }
  return deps.google;
}

export const DEFAULT_GOOGLE_CREDENTIAL = 'google';

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
    budget: opts.budget,
    spammedWaitMs: opts.spammedWaitMs,
    // A fleet's refused activities are spread out, not all retried at the reset.
    retryJitterMs: opts.budget ? 1500 : 0,
    attempt: currentAttempt,
  });
}
