/**
 * A minimal path router for the emulator: patterns like `/orgs/:org/migrations/:id`, a `*rest` tail
 * matching several segments (Google resource names contain slashes), and typed handler results.
 */
import type { IncomingMessage } from 'node:http';

export interface RouteContext {
  req: IncomingMessage;
  method: string;
  /** The path below the service's mount point. */
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body (`undefined` when empty). Invalid JSON never reaches a handler. */
  body: unknown;
  /** The bearer token, already checked by the service's auth rule. */
  token: string | undefined;
  /** Lower-cased request headers. */
  headers: Record<string, string | undefined>;
  /** Emulator time in epoch ms (injectable for tests). */
  now: number;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Raw bytes instead of JSON. */
  raw?: Buffer;
}

export type RouteHandler = (ctx: RouteContext) => RouteResult | Promise<RouteResult>;

export interface RouteOptions {
  /** Cost against the secondary per-minute point budget (spec 001: GET 1, mutations 5). */
  points?: number;
  /** Counts against the content-creation limit (80/min, 500/h). */
  contentCreating?: boolean;
  /** Exempt from the primary limit (e.g. a 304, `GET /rate_limit`) — decided per response by `countsAgainstPrimary`. */
  countsAgainstPrimary?: (result: RouteResult) => boolean;
  /** Answered even to a caller over its limits, never spending them (`GET /rate_limit`, as on GitHub). */
  exemptFromLimits?: boolean;
}

interface Route {
  method: string;
  pattern: string;
  regex: RegExp;
  names: string[];
  handler: RouteHandler;
  options: RouteOptions;
}

export interface RouteMatch {
  route: { method: string; pattern: string; options: RouteOptions; handler: RouteHandler };
  params: Record<string, string>;
}

export class Router {
  private readonly table: Route[] = [];

  add(method: string, pattern: string, handler: RouteHandler, options: RouteOptions = {}): this {
    const names: string[] = [];
    const source = pattern
      .split('/')
      .map((segment) => {
        if (segment.startsWith('*')) {
          names.push(segment.slice(1));
          return '(.+)';
        }
        // A parameter starts its segment and may be followed by literal text (`:name:cancel`); a colon later
        // in a segment is literal (`buckets:createAsync`), as in Google's custom methods.
        const param = /^:([A-Za-z_]+)(.*)$/.exec(segment);
        if (!param) return escapeRegExp(segment);
        names.push(param[1]);
        return `([^/]+?)${escapeRegExp(param[2])}`;
      })
      .join('/');
    this.table.push({ method, pattern, regex: new RegExp(`^${source}$`), names, handler, options });
    return this;
  }

  get(p: string, h: RouteHandler, o?: RouteOptions): this {
    return this.add('GET', p, h, o);
  }
  post(p: string, h: RouteHandler, o?: RouteOptions): this {
    return this.add('POST', p, h, { points: 5, ...o });
  }
  put(p: string, h: RouteHandler, o?: RouteOptions): this {
    return this.add('PUT', p, h, { points: 5, ...o });
  }
  patch(p: string, h: RouteHandler, o?: RouteOptions): this {
    return this.add('PATCH', p, h, { points: 5, ...o });
  }
  delete(p: string, h: RouteHandler, o?: RouteOptions): this {
    return this.add('DELETE', p, h, { points: 5, ...o });
  }

  /** Every route, in the order added: its method and pattern (`/orgs/:org/migrations/:id`). */
  routes(): { method: string; pattern: string }[] {
    return this.table.map(({ method, pattern }) => ({ method, pattern }));
  }

  /** The route for a request, `'method'` when the path exists under another method, or undefined. */
  match(method: string, path: string): RouteMatch | 'method' | undefined {
    let pathMatched = false;
    for (const route of this.table) {
      const m = route.regex.exec(path);
      if (!m) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1])));
      return { route, params };
    }
    return pathMatched ? 'method' : undefined;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
