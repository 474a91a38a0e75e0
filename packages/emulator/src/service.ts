/**
 * An emulated API service: a router mounted under a path prefix (or at the root of an origin of its own)
 * with its own auth rule, error style and (optionally) GitHub-style rate limits. Modules name the service
 * they mount under (`ServiceSpec`); the emulator mounts each once, so one process serves every API family
 * (GitHub at `/` of the API port, each Google API at `/` of its own port).
 */
import type { RateLimiter } from './rate-limiter';
import { Router } from './router';

export type ErrorStyle = 'github' | 'google';

/** A service a module mounts under; modules naming the same service share its router. */
export interface ServiceSpec {
  name: string;
  /** Mount point, e.g. `` (root) or `/greetings`. No trailing slash. */
  prefix: string;
  /**
   * Served at `prefix` of an origin of its own (its own listening port) instead of the API port: Google's
   * generated clients resolve every path against a root URL and drop any path it has, so each Google API
   * needs a root. Returns the port from the emulator's options (0 = any free one).
   */
  ownPort?(options: Readonly<Record<string, unknown>>): number;
  errorStyle: ErrorStyle;
  /** The emulator's rate limits apply (GitHub's primary, secondary and content-creation limits). */
  rateLimited?: boolean;
  /** Checks every routed request's query before its handler: a message is answered 422 (e.g. `per_page`). */
  checkQuery?(query: URLSearchParams): string | undefined;
  /** Checks every request's headers after authentication: an answer is sent as a 400 (GitHub's unknown API version). */
  checkHeaders?(headers: Record<string, string | string[] | undefined>): { message: string; extra: Record<string, unknown> } | undefined;
}

/** A mounted service: its router, and the rate limiter and token its spec asked for. */
export interface ServiceDefinition extends Omit<ServiceSpec, 'rateLimited'> {
  router: Router;
  /** Rate limits enforced on this service, if any. */
  rateLimiter?: RateLimiter;
  /** When set, only this bearer token is accepted; otherwise any non-empty one. */
  token?: string;
}

export function createService(def: Omit<ServiceDefinition, 'router'> & { router?: Router }): ServiceDefinition {
  return { ...def, router: def.router ?? new Router() };
}

/** The error body for a status and message in the service's style. */
export function errorBody(style: ErrorStyle, status: number, message: string, extra: Record<string, unknown> = {}): unknown {
  if (style === 'github') {
    return { message, documentation_url: 'https://docs.github.com/rest', status: String(status), ...extra };
  }
  return { error: { code: status, message, status: googleStatusName(status), ...extra } };
}

function googleStatusName(status: number): string {
  switch (status) {
    case 400:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
  }
}
