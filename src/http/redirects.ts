/**
 * The HTTP core's header and redirect rules, shared by the API client (`api-client.ts`) and the token-less
 * client (`tokenless.ts`): which answers are redirects, how many hops a request may take, what a hop does to
 * the method, and which headers never leave for another origin (or, token-less, at all).
 */
import { FailureType, type RetryDecision } from './retry-policy';

/** Hops one request may take before it fails (`TooManyRedirects`, or `ArchiveRedirectLoop` for downloads). */
export const MAX_REDIRECTS = 5;

/** Headers that carry a credential. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);

/** A 3xx that points elsewhere (304 Not Modified is an answer, not a redirect). */
export function isRedirect(status: number): boolean {
  return status >= 300 && status < 400 && status !== 304;
}

/** The method of the next hop: 303, and 301/302 after a POST, continue as GET without a body (as browsers do). */
export function methodAfterRedirect(status: number, method: string): string {
  return status === 303 || ((status === 301 || status === 302) && method === 'POST') ? 'GET' : method;
}

/** The headers without any credential (names compared case-insensitively). */
export function withoutCredentials(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!CREDENTIAL_HEADERS.has(k.toLowerCase())) out[k] = v;
  return out;
}

/**
 * The decision for a redirect a request does not follow (a sink POST: the signed batch is not sent somewhere
 * the configuration did not name): permanent, naming where it pointed without its query.
 */
export function unfollowedRedirect(status: number, location: string | undefined, base: URL): Exclude<RetryDecision, { kind: 'success' }> {
  let target = '(no Location)';
  try {
    if (location) {
      const url = new URL(location, base);
      target = `${url.origin}${url.pathname}`;
    }
  } catch {
    target = '(an unparsable Location)';
  }
  return { kind: 'permanent', type: FailureType.UnexpectedResponse, status, message: `redirects to ${target}, which is not followed` };
}
