/**
 * Google Cloud API clients: one `ApiClient` per service (API Keys, Cloud Logging, Cloud DNS) with Google's
 * error model and retry policy.
 *
 * Tokens are resolved at call time, in the activity, never in a workflow: a static `GOOGLE_ACCESS_TOKEN`
 * (or `GOOGLE_ACCESS_TOKEN_FILE`) wins, which is what the emulator and tests use; otherwise Application
 * Default Credentials (service account key, metadata server, gcloud user) with the `cloud-platform` scope.
 */
import { ApplicationFailure } from '@temporalio/common';
import { GoogleAuth } from 'google-auth-library';
import { ApiClient, type TokenProvider } from '../../http/api-client';
import { googleRetryPolicy, parseGoogleErrorBody } from '../../http/google-errors';
import { RateLimitGate } from '../../http/rate-limit-gate';
import { FailureType } from '../../http/retry-policy';
import { readSecret } from '../../config';
import { currentAttempt, type GithubClientOptions } from '../context';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** Same options as the GitHub client; only the token default differs. */
export type GoogleClientOptions = Omit<GithubClientOptions, 'token'> & {
  /** Defaults to `GOOGLE_ACCESS_TOKEN` (or `_FILE`), else Application Default Credentials. */
  token?: TokenProvider;
};

/** The Google clients activities receive. */
export interface GoogleClients {
  apikeys: ApiClient;
  logging: ApiClient;
  dns: ApiClient;
}

let adc: GoogleAuth | undefined;

/** Created on first use only, so workers without Google work never probe for credentials. */
async function adcToken(): Promise<string> {
  adc ??= new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] });
  let token: string | null | undefined;
  try {
    token = await adc.getAccessToken();
  } catch (err) {
    const message = (err as Error).message ?? String(err);
    // No credentials at all will not fix itself; a metadata-server hiccup might.
    const missing = /could not load the default credentials/i.test(message);
    throw ApplicationFailure.create({
      type: FailureType.Authentication,
      message: `no Google access token: ${message} (set GOOGLE_ACCESS_TOKEN or configure Application Default Credentials)`,
      nonRetryable: missing,
      cause: err as Error,
    });
  }
  if (!token) throw ApplicationFailure.nonRetryable('Application Default Credentials returned no access token', FailureType.Authentication);
  return token;
}

/** The default token provider: `GOOGLE_ACCESS_TOKEN` (or `_FILE`) read at call time, else ADC. */
export const googleToken: TokenProvider = () => readSecret('GOOGLE_ACCESS_TOKEN') ?? adcToken();

export function createGoogleClient(opts: GoogleClientOptions): ApiClient {
  const clock = opts.clock ?? Date.now;
  return new ApiClient({
    baseUrl: opts.baseUrl,
    token: opts.token ?? googleToken,
    defaultHeaders: { accept: 'application/json' },
    dispatcher: opts.dispatcher,
    policy: opts.policy ?? googleRetryPolicy,
    parseErrorBody: parseGoogleErrorBody,
    clock,
    gate: opts.gate ?? new RateLimitGate(clock),
    budget: opts.budget,
    // Google has no mutation pacing or content allowance: every call is counted (and gated) alike.
    requestKind: () => 'read',
    retryJitterMs: opts.budget ? 1500 : 0,
    attempt: currentAttempt,
  });
}

/** The three clients from their base URLs (each keeps its own rate-limit gate). */
export function createGoogleClients(
  urls: { apikeys: string; logging: string; dns: string },
  opts: Omit<GoogleClientOptions, 'baseUrl' | 'gate'> = {},
): GoogleClients {
  return {
    apikeys: createGoogleClient({ ...opts, baseUrl: urls.apikeys }),
    logging: createGoogleClient({ ...opts, baseUrl: urls.logging }),
    dns: createGoogleClient({ ...opts, baseUrl: urls.dns }),
  };
}
