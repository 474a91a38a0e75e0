/**
 * GitHub's side of the HTTP core: its default headers, its error model and the client factory every GitHub
 * credential is built with (the worker, the CLI, tests and benchmarks). The retry policy is `githubRetryPolicy`
 * (`retry-policy.ts`, the core's default) and the pacing classes `githubRequestKind` (`request-budget.ts`).
 */
import type { Dispatcher } from 'undici';
import { ApiClient, type ErrorBodyParser, type TokenProvider } from './api-client';
import { currentAttempt } from './attempt';
import { RateLimitGate } from './rate-limit-gate';
import { githubRetryPolicy, type RetryPolicy } from './retry-policy';
import type { RequestBudget } from './request-budget';
import type { ApiObserver } from './observer';
import { apiObserver } from './api-observer';
import { DEFAULT_GITHUB_API_VERSION, readSecret, type GithubApiVersion } from '../config';
import type { Clock } from '../common/clock';

/** The headers of every GitHub request: the JSON media type and the REST API version the credential is set to. */
export function githubDefaultHeaders(apiVersion: GithubApiVersion = DEFAULT_GITHUB_API_VERSION): Record<string, string> {
  return { accept: 'application/vnd.github+json', 'x-github-api-version': apiVersion };
}

export const GITHUB_DEFAULT_HEADERS: Readonly<Record<string, string>> = githubDefaultHeaders();

/** GitHub's error body: `{ message, errors: [{ message | code, field }] }`. */
export const parseGithubErrorBody: ErrorBodyParser = (body) => {
  if (!body || typeof body !== 'object') return {};
  const b = body as { message?: unknown; errors?: unknown };
  let message = typeof b.message === 'string' ? b.message : undefined;
  if (Array.isArray(b.errors) && b.errors.length > 0) {
    const parts = b.errors.map((e) =>
      typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : [e?.field, e?.code].filter(Boolean).join(' '),
    );
    message = [message, parts.filter(Boolean).join('; ')].filter(Boolean).join(': ');
  }
  return { message };
};

/** What an API client factory takes (GitHub's and Google's alike; only the token default differs). */
export interface ClientOptions {
  baseUrl: string;
  /** Defaults to the API's own token source (`GITHUB_TOKEN` / `GOOGLE_ACCESS_TOKEN`, read at call time). */
  token?: TokenProvider;
  dispatcher?: Dispatcher;
  policy?: RetryPolicy;
  clock?: Clock;
  gate?: RateLimitGate;
  /** The fleet-wide budget of this credential (the rate governor); per process without it. */
  budget?: RequestBudget;
  /** @format milliseconds — how long a 422 "spammed" closes content creation for the fleet. */
  spammedWaitMs?: number;
  /** Metrics and logs of every call; the API's `apiObserver` by default (it records inside activities only). */
  observer?: ApiObserver;
  /** GitHub only: the REST API version sent in `X-GitHub-Api-Version` (the credential's; 2022-11-28 by default). */
  apiVersion?: GithubApiVersion;
}

export function createGithubClient(opts: ClientOptions): ApiClient {
  const clock = opts.clock ?? Date.now;
  return new ApiClient({
    baseUrl: opts.baseUrl,
    token: opts.token ?? (() => readSecret('GITHUB_TOKEN')),
    defaultHeaders: githubDefaultHeaders(opts.apiVersion),
    parseErrorBody: parseGithubErrorBody,
    dispatcher: opts.dispatcher,
    policy: opts.policy ?? githubRetryPolicy,
    clock,
    gate: opts.gate ?? new RateLimitGate(clock),
    budget: opts.budget,
    spammedWaitMs: opts.spammedWaitMs,
    // A fleet's refused activities are spread out, not all retried at the reset.
    retryJitterMs: opts.budget ? 1500 : 0,
    attempt: currentAttempt,
    // On the client's clock: the gate's end it reports is on that clock.
    observer: opts.observer ?? apiObserver('github', { clock }),
  });
}
