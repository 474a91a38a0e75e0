/**
 * Google's side of the HTTP core: the client factory (tokens, one client per service) and Google's error
 * model (AIP-193): the body `{ error: { code, message, status, details[] } }`
 * read into `ResponseFacts`, and the retry policy for Google Cloud APIs as data.
 *
 * - `RetryInfo.retryDelay` (a JSON Duration such as `"4s"` or `"0.5s"`) becomes `bodyRetryDelayMs`, which the
 *   decision honours like `retry-after`;
 * - `ErrorInfo.reason` (e.g. `API_KEY_NOT_FOUND`) becomes `reason`, kept in the failure's details;
 * - `status` (the canonical code name) becomes `apiStatus`, which decides permanence where one HTTP status
 *   has several meanings (409 is `ALREADY_EXISTS` or `ABORTED`).
 */
import { ApplicationFailure } from '@temporalio/common';
import { GoogleAuth } from 'google-auth-library';
import { ApiClient, type ErrorBodyParser, type TokenProvider } from './api-client';
import { currentAttempt } from './attempt';
import type { ClientOptions } from './github';
import { RateLimitGate } from './rate-limit-gate';
import { BACKOFF } from '../common/backoff';
import { FailureType, type RetryPolicy } from './retry-policy';
import { apiObserver } from './api-observer';
import { readSecret } from '../config';

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

/** One entry of `error.details[]`; only the kinds longhaul reads are typed. */
export interface GoogleErrorDetail {
  '@type': string;
  /** RetryInfo */
  retryDelay?: string | { seconds?: string | number; nanos?: number };
  /** ErrorInfo */
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
  /** BadRequest */
  fieldViolations?: { field?: string; description?: string }[];
}

/** The `error` object of a Google API error response. */
export interface GoogleError {
  code: number;
  message: string;
  status?: string;
  details?: GoogleErrorDetail[];
}

/**
 * Milliseconds of a protobuf JSON Duration: `"4s"`, `"0.5s"`, `"1.000340012s"`, or the object form
 * `{ seconds, nanos }`. Undefined when the value is not a duration (never negative).
 */
export function parseDurationMs(value: unknown): number | undefined {
  if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)s\s*$/.exec(value);
    return m ? Math.round(Number(m[1]) * 1000) : undefined;
  }
  if (value && typeof value === 'object') {
    const { seconds, nanos } = value as { seconds?: unknown; nanos?: unknown };
    const s = typeof seconds === 'string' && /^\d+$/.test(seconds) ? Number(seconds) : typeof seconds === 'number' ? seconds : 0;
    const n = typeof nanos === 'number' ? nanos : 0;
    if (seconds === undefined && nanos === undefined) return undefined;
    return Math.max(0, Math.round(s * 1000 + n / 1e6));
  }
  return undefined;
}

function detailsOf(error: Record<string, unknown>): GoogleErrorDetail[] {
  const details = error.details;
  return Array.isArray(details) ? details.filter((d): d is GoogleErrorDetail => !!d && typeof d === 'object' && typeof d['@type'] === 'string') : [];
}

/** Reads Google's error body into the facts the retry decision uses. Tolerates the legacy `[{ error }]` array form. */
export const parseGoogleErrorBody: ErrorBodyParser = (body) => {
  const root = Array.isArray(body) ? body[0] : body;
  const error = root && typeof root === 'object' ? (root as { error?: unknown }).error : undefined;
  if (!error || typeof error !== 'object') return {};
  const e = error as Record<string, unknown>;
  const details = detailsOf(e);

  let message = typeof e.message === 'string' ? e.message : undefined;
  const violations = details
    .filter((d) => d['@type'] === BAD_REQUEST)
    .flatMap((d) => d.fieldViolations ?? [])
    .map((v) => [v.field, v.description].filter(Boolean).join(': '))
    .filter(Boolean);
  if (violations.length > 0) message = [message, violations.join('; ')].filter(Boolean).join(' — ');

  const retryInfo = details.find((d) => d['@type'] === RETRY_INFO);
  const errorInfo = details.find((d) => d['@type'] === ERROR_INFO);
  // Older APIs (Cloud DNS v1) put the reason in `errors[0].reason` instead of an ErrorInfo.
  const legacyReason = Array.isArray(e.errors) ? (e.errors[0] as { reason?: unknown } | undefined)?.reason : undefined;
  const apiStatus = typeof e.status === 'string' ? e.status : undefined;
  return {
    message,
    apiStatus,
    reason: errorInfo?.reason ?? (typeof legacyReason === 'string' ? legacyReason : undefined) ?? apiStatus,
    bodyRetryDelayMs: retryInfo ? parseDurationMs(retryInfo.retryDelay) : undefined,
  };
};

/**
 * Google Cloud's rules (AIP-194): `RESOURCE_EXHAUSTED` (429) waits for `RetryInfo`/`retry-after` or backs off
 * from 5 s; `UNAVAILABLE` (503), `DEADLINE_EXCEEDED` (504), `INTERNAL` and connection faults back off; everything
 * that names a caller mistake is permanent; `ABORTED` on an etag-guarded call is an etag mismatch, which no retry
 * of the same request can fix (the caller has to read the resource again).
 */
export const googleRetryPolicy: RetryPolicy = {
  permanent: {
    400: FailureType.BadRequest,
    401: FailureType.Authentication,
    403: FailureType.Forbidden,
    404: FailureType.NotFound,
    409: FailureType.Conflict,
    412: FailureType.FailedPrecondition,
    501: FailureType.ClientError,
  },
  permanentByApiStatus: {
    INVALID_ARGUMENT: FailureType.BadRequest,
    OUT_OF_RANGE: FailureType.BadRequest,
    FAILED_PRECONDITION: FailureType.FailedPrecondition,
    UNAUTHENTICATED: FailureType.Authentication,
    PERMISSION_DENIED: FailureType.Forbidden,
    NOT_FOUND: FailureType.NotFound,
    ALREADY_EXISTS: FailureType.AlreadyExists,
    ABORTED: FailureType.EtagMismatch,
    UNIMPLEMENTED: FailureType.ClientError,
  },
  rateLimitStatuses: [429],
  alwaysRateLimitStatuses: [429],
  rateLimitType: FailureType.ResourceExhausted,
  // Google has no "secondary" limit: a pattern that never matches.
  secondaryLimitPattern: /(?!)/,
  rateLimitBackoff: BACKOFF.googleRateLimit,
  maxRateLimitAttempts: 8,
  transientStatuses: [500, 502, 503, 504],
  transientBackoff: BACKOFF.googleTransient,
  maxTransientAttempts: 8,
  resetMarginMs: 1_000,
  maxHeaderDelayMs: 60 * 60 * 1000,
};

/** Tells the user what an etag mismatch means for the resource they named. */
export function etagMismatchMessage(resource: string, etag: string | undefined): string {
  return `${resource} changed since you read it${etag ? ` (etag ${etag} is no longer current)` : ''}: read it again to get its current etag, check the change, and retry with that etag`;
}

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/**
 * Tokens are resolved at call time, in the activity, never in a workflow: a static `GOOGLE_ACCESS_TOKEN`
 * (or `GOOGLE_ACCESS_TOKEN_FILE`) wins, which is what the emulator and tests use; otherwise Application
 * Default Credentials (service account key, metadata server, gcloud user) with the `cloud-platform` scope.
 */
export type GoogleClientOptions = ClientOptions;

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
    // Metrics and logs per API (`google-dns`…), from the host name's first label; records inside activities only.
    observer: opts.observer ?? apiObserver(googleApiName(opts.baseUrl), { clock }),
  });
}

/** `https://dns.googleapis.com` → `google-dns`; a proxy's `…/google/dns` path → `google-dns` too (`createGoogleClients` names its three by API). */
export function googleApiName(baseUrl: string): string {
  const url = new URL(baseUrl);
  const fromPath = /\/google\/([a-z-]+)/.exec(url.pathname)?.[1];
  const label = fromPath ?? url.hostname.split('.')[0];
  return /^[a-z][a-z0-9-]*$/.test(label) ? `google-${label.replace(/^google-/, '')}` : 'google';
}

/** The three clients from their base URLs (each keeps its own rate-limit gate, and is named in metrics by its API, whatever its URL). */
export function createGoogleClients(
  urls: { apikeys: string; logging: string; dns: string },
  opts: Omit<GoogleClientOptions, 'baseUrl' | 'gate'> = {},
): GoogleClients {
  return {
    apikeys: createGoogleClient({ ...opts, observer: opts.observer ?? apiObserver('google-apikeys', { clock: opts.clock }), baseUrl: urls.apikeys }),
    logging: createGoogleClient({ ...opts, observer: opts.observer ?? apiObserver('google-logging', { clock: opts.clock }), baseUrl: urls.logging }),
    dns: createGoogleClient({ ...opts, observer: opts.observer ?? apiObserver('google-dns', { clock: opts.clock }), baseUrl: urls.dns }),
  };
}
