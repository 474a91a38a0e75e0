/**
 * The platform emulator: a real HTTP server that behaves like the seeded APIs (state machines,
 * rate-limit headers, faults, strict validation), plus a separate storage origin for pre-signed
 * downloads. Tests start it in-process on port 0; `npm run emulator` runs it standalone.
 *
 * Route modules register themselves in `registerRoutes()` below; each keeps its own state.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { EmulatorHttpError } from './http-error';
import { defaultRateLimitConfig, RateLimiter, type RateLimitConfig } from './rate-limiter';
import { type FaultRule, type FaultState, isMalformedRule, malformedAnswer, pickFault } from './faults';
import { emptyStats, increment, type EmulatorStats } from './stats';
import { StorageOrigin } from './storage-origin';
import { createService, errorBody, type ServiceDefinition } from './service';
import type { RouteResult } from './router';
import { registerGoogleRoutes, type GoogleEmulatorOptions } from './google';
import { RETRY_INFO_TYPE } from './google/errors';
import { defaultGithubFixture, type GithubFixture } from './github/fixture';
import { registerMigrationRoutes, type MigrationOptions, defaultMigrationOptions } from './github/migrations';
import { registerImportRoutes, type ImportOptions, defaultImportOptions } from './github/source-import/routes';
import { registerFeedRoutes, type FeedOptions, defaultFeedOptions } from './github/feeds';
import { registerHookRoutes, type HookOptions, defaultHookOptions } from './github/hooks';
import { registerLoggingEntryRoutes } from './google/logging-entries';

export interface EmulatorOptions {
  host?: string;
  /** API port; 0 picks a free one. */
  port?: number;
  /** Storage origin port; 0 picks a free one. */
  storagePort?: number;
  /** When set, only this bearer token is accepted; otherwise any non-empty token is. */
  token?: string;
  /** Emulator time in epoch ms. */
  clock?: () => number;
  rateLimit?: Partial<Omit<RateLimitConfig, 'secondary'>> & { secondary?: Partial<RateLimitConfig['secondary']> };
  faults?: FaultRule[];
  fixture?: GithubFixture;
  /** Google services: fixture, API-key / log-bucket operation timing, cancel behaviour, DNS change timing. */
  google?: GoogleEmulatorOptions;
  migrations?: Partial<MigrationOptions>;
  /** Source-import timing, scenarios' data, maintenance windows, retirement. */
  imports?: Partial<ImportOptions>;
  /** Activity feeds: event rate, bursts, `X-Poll-Interval`, window size. */
  feeds?: Partial<FeedOptions>;
  /** Webhooks: content-creation ("spammed") limits and delivery outcomes. */
  hooks?: Partial<HookOptions>;
  /** Storage download throttle in bytes per second (0 = unthrottled). */
  storageBytesPerSecond?: number;
}

/** What route modules receive: shared infrastructure, never another module's state. */
export interface EmulatorContext {
  readonly clock: () => number;
  readonly storage: StorageOrigin;
  readonly fixture: GithubFixture;
  readonly options: EmulatorOptions;
  /** The API base URL (known once listening). */
  apiUrl(): string;
}

/** The page a load balancer or proxy answers with when the API behind it is down: not the API's JSON. */
function htmlErrorPage(status: number): string {
  return `<html>\r\n<head><title>${status} Bad Gateway</title></head>\r\n<body>\r\n<center><h1>${status} Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n`;
}

export class Emulator {
  readonly stats: EmulatorStats = emptyStats();
  readonly storage: StorageOrigin;
  readonly github: ServiceDefinition;
  /** Google Cloud services, each under its own prefix (`serviceUrl('google-logging')` is its base URL). */
  readonly google: { apikeys: ServiceDefinition; logging: ServiceDefinition; dns: ServiceDefinition };
  readonly services: ServiceDefinition[] = [];
  readonly clock: () => number;
  readonly fixture: GithubFixture;
  readonly rateLimiter: RateLimiter;
  private readonly faultStates: FaultState[] = [];
  /**
   * The most recent API requests (method and concrete path, service prefix included; at most 10,000), so
   * tests can assert that no call named an id the process did not know (`/migrations/null/...`).
   */
  readonly requestLog: { method: string; path: string }[] = [];
  private server?: Server;
  apiUrl = '';

  constructor(readonly options: EmulatorOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.fixture = options.fixture ?? defaultGithubFixture();
    this.rateLimiter = new RateLimiter({
      ...defaultRateLimitConfig,
      ...options.rateLimit,
      secondary: { ...defaultRateLimitConfig.secondary, ...options.rateLimit?.secondary },
    });
    this.storage = new StorageOrigin({
      host: options.host ?? '127.0.0.1',
      port: options.storagePort ?? 0,
      clock: this.clock,
      stats: this.stats,
      bytesPerSecond: options.storageBytesPerSecond,
    });
    this.setFaults(options.faults ?? []);
    this.github = createService({ name: 'github', prefix: '', errorStyle: 'github', rateLimiter: this.rateLimiter, token: options.token });
    this.google = {
      apikeys: createService({ name: 'google-apikeys', prefix: '/google/apikeys', errorStyle: 'google', token: options.token }),
      logging: createService({ name: 'google-logging', prefix: '/google/logging', errorStyle: 'google', token: options.token }),
      dns: createService({ name: 'google-dns', prefix: '/google/dns', errorStyle: 'google', token: options.token }),
    };
    this.services.push(this.github, this.google.apikeys, this.google.logging, this.google.dns);
    this.registerRoutes();
  }

  private registerRoutes(): void {
    const ctx: EmulatorContext = {
      clock: this.clock,
      storage: this.storage,
      fixture: this.fixture,
      options: this.options,
      apiUrl: () => this.apiUrl,
    };
    this.migrations = registerMigrationRoutes(this.github.router, ctx, { ...defaultMigrationOptions, ...this.options.migrations });
    this.imports = registerImportRoutes(this.github.router, ctx, {
      ...defaultImportOptions,
      ...this.options.imports,
      maintenanceWindows: [...(this.options.imports?.maintenanceWindows ?? [])],
    });
    this.feeds = registerFeedRoutes(this.github.router, ctx, { ...defaultFeedOptions, ...this.options.feeds, bursts: [...(this.options.feeds?.bursts ?? [])] });
    this.hooks = registerHookRoutes(this.github.router, ctx, {
      ...defaultHookOptions,
      ...this.options.hooks,
      spam: { ...defaultHookOptions.spam, ...this.options.hooks?.spam },
    });
    this.loggingEntries = registerLoggingEntryRoutes(this.google.logging.router);
    this.googleState = registerGoogleRoutes(this.google, ctx, this.options.google);
  }

  /** State of the Google modules (API keys, log buckets and operations, DNS zones), for tests and the demo. */
  googleState!: ReturnType<typeof registerGoogleRoutes>;

  /** State of the migration module, for tests and the demo to inspect. */
  migrations!: ReturnType<typeof registerMigrationRoutes>;

  /** State of the source-import module (imports, pushed results, maintenance), for tests and the demo. */
  imports!: ReturnType<typeof registerImportRoutes>;

  /** Activity feeds (events produced, dropped unseen, polls, early polls, 304s), for tests and benchmarks. */
  feeds!: ReturnType<typeof registerFeedRoutes>;

  /** Webhooks and their deliveries (seeding, redelivery log, "spammed" count). */
  hooks!: ReturnType<typeof registerHookRoutes>;

  /** Cloud Logging entries written through `entries:write`. */
  loggingEntries!: ReturnType<typeof registerLoggingEntryRoutes>;

  /** Replaces the fault rules (also `PUT /_emulator/faults`). */
  setFaults(rules: FaultRule[]): void {
    this.faultStates.splice(0, this.faultStates.length, ...rules.map((rule) => ({ rule, seen: 0, fired: 0 })));
  }

  resetStats(): void {
    Object.assign(this.stats, emptyStats());
    this.rateLimiter.resetHistory();
  }

  async listen(): Promise<this> {
    await this.storage.listen();
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 5_000;
    const host = this.options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.options.port ?? 0, host, resolve);
    });
    const { port } = this.server.address() as AddressInfo;
    this.apiUrl = `http://${host}:${port}`;
    return this;
  }

  /** Base URL of a mounted service (e.g. `google-logging`). */
  serviceUrl(name: string): string {
    const service = this.services.find((s) => s.name === name);
    if (!service) throw new Error(`no emulated service named ${name}`);
    return this.apiUrl + service.prefix;
  }

  async close(): Promise<void> {
    await this.storage.close();
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const now = this.clock();
    const url = new URL(req.url ?? '/', 'http://emulator');
    const method = (req.method ?? 'GET').toUpperCase();
    if (url.pathname.startsWith('/_emulator/')) return this.handleAdmin(method, url, req, res);

    const service = this.serviceFor(url.pathname);
    const path = url.pathname.slice(service.prefix.length) || '/';
    const send = (result: RouteResult, extraHeaders: Record<string, string> = {}) => {
      increment(this.stats.byStatus, String(result.status));
      const headers: Record<string, string> = {
        date: new Date(this.clock()).toUTCString(),
        'x-github-request-id': randomUUID(),
        ...extraHeaders,
        ...(result.headers ?? {}),
      };
      if (result.raw) {
        res.writeHead(result.status, headers);
        res.end(result.raw);
      } else if (result.body === undefined) {
        res.writeHead(result.status, headers);
        res.end();
      } else {
        res.writeHead(result.status, { 'content-type': 'application/json; charset=utf-8', ...headers });
        res.end(JSON.stringify(result.body));
      }
    };
    const fail = (status: number, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      send({ status, body: errorBody(service.errorStyle, status, message, extra) }, headers);

    this.stats.requests++;
    if (this.requestLog.length >= 10_000) this.requestLog.shift();
    this.requestLog.push({ method, path: url.pathname });
    const match = service.router.match(method, path);
    const routeKey = match && match !== 'method' ? `${method} ${service.prefix}${match.route.pattern}` : `${method} (unmatched)`;
    increment(this.stats.byRoute, routeKey);

    // Auth first, as the real service does: an unauthenticated caller learns nothing about what exists.
    const auth = req.headers.authorization ?? '';
    const token = /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim() || /^token\s+(.+)$/i.exec(auth)?.[1]?.trim();
    if (!token) return fail(401, 'Requires authentication');
    if (service.token !== undefined && token !== service.token) return fail(401, 'Bad credentials');

    const limiter = service.rateLimiter;
    const caller = token;
    const arrival = limiter?.arrival(caller, now) ?? 'open';
    limiter?.noteMethod(caller, method, now);
    if (arrival === 'while-limited') this.stats.requestsWhileLimited++;
    if (arrival === 'in-flight') this.stats.requestsInFlightWhenLimited++;
    if (match === undefined) return fail(404, 'Not Found', {}, limiter?.headers(caller, now) ?? {});
    if (match === 'method') return fail(405, 'Method Not Allowed', {}, limiter?.headers(caller, now) ?? {});
    const { route, params } = match;

    if (limiter) {
      const verdict = limiter.admit(caller, routeKey, route.options.points ?? 1, route.options.contentCreating ?? false, now);
      if (!verdict.ok) {
        this.stats.rateLimited[verdict.kind]++;
        const headers = limiter.headers(caller, now);
        if (verdict.retryAfterSeconds !== undefined) headers['retry-after'] = String(verdict.retryAfterSeconds);
        return fail(verdict.status, verdict.message, {}, headers);
      }
    }

    // A request holds a concurrency slot from admission until its answer is sent (slow faults and slow
    // handlers included), as on the real service.
    limiter?.enter(caller, now);
    try {
      const fault = pickFault(this.faultStates, method, route.pattern, path, Math.random, this.clock());
      if (fault) this.stats.faultsInjected++;
      // A fault before processing: the server never acted on the request.
      if (fault && !fault.afterProcessing && (await this.applyFault(fault, req, fail, send)) === 'answered') return;

      let body: unknown;
      try {
        body = await readJson(req);
      } catch {
        return fail(400, 'Problems parsing JSON', {}, limiter?.headers(caller, now) ?? {});
      }
      if (service.errorStyle === 'github') {
        const perPage = url.searchParams.get('per_page');
        if (perPage !== null && !(/^\d+$/.test(perPage) && Number(perPage) >= 1 && Number(perPage) <= 100)) {
          return fail(422, `Invalid request.\n\nper_page must be an integer between 1 and 100, got ${JSON.stringify(perPage)}.`, {}, limiter?.headers(caller, now) ?? {});
        }
      }

      let result: RouteResult;
      try {
        result = await route.handler({
          req,
          method,
          path,
          params,
          query: url.searchParams,
          body,
          token,
          headers: req.headers as Record<string, string | undefined>,
          now: this.clock(),
        });
      } catch (err) {
        const headers = limiter?.count(caller, now, true) ?? {};
        if (err instanceof EmulatorHttpError) return fail(err.status, err.message, err.extra, { ...headers, ...err.headers });
        console.error('[emulator] handler error', err);
        return fail(500, 'Server Error', {}, headers);
      }
      const counts = route.options.countsAgainstPrimary ? route.options.countsAgainstPrimary(result) : true;
      if (!counts) this.stats.notCounted++;
      const rateHeaders = limiter?.count(caller, now, counts) ?? {};
      // A fault after processing: the server acted, but the caller cannot know (lost or late answer).
      if (fault?.afterProcessing && (await this.applyFault(fault, req, fail, send, result)) === 'answered') return;
      send(result, rateHeaders);
    } finally {
      limiter?.leave(caller, now);
    }
  }

  /** Applies one fault: answers (status), drops the connection (reset) or holds the request (slow). */
  private async applyFault(
    fault: FaultRule,
    req: IncomingMessage,
    fail: (status: number, message: string, extra?: Record<string, unknown>, headers?: Record<string, string>) => void,
    send: (result: RouteResult, headers: Record<string, string>) => void,
    handled?: RouteResult,
  ): Promise<'answered' | 'continue'> {
    if (isMalformedRule(fault)) {
      const answer = malformedAnswer(fault, handled);
      send({ status: answer.status, raw: answer.raw, headers: { ...(handled?.headers ?? {}), 'content-type': answer.contentType } }, {});
      return 'answered';
    }
    if (fault.kind === 'reset') {
      req.socket.destroy();
      return 'answered';
    }
    if (fault.kind === 'status' && fault.html) {
      const status = fault.status ?? 502;
      send({ status, raw: Buffer.from(htmlErrorPage(status)), headers: { 'content-type': 'text/html; charset=utf-8' } }, {});
      return 'answered';
    }
    if (fault.kind === 'status') {
      const headers: Record<string, string> = fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
      const extra = fault.retryInfoSeconds !== undefined ? { details: [{ '@type': RETRY_INFO_TYPE, retryDelay: `${fault.retryInfoSeconds}s` }] } : {};
      fail(fault.status ?? 500, fault.status === 503 ? 'Service Unavailable' : fault.status === 429 ? 'Too Many Requests' : 'Server Error', extra, headers);
      return 'answered';
    }
    await new Promise((r) => setTimeout(r, fault.delayMs ?? 1000));
    return 'continue';
  }

  private serviceFor(pathname: string): ServiceDefinition {
    let best = this.github;
    for (const s of this.services) {
      if (s.prefix && (pathname === s.prefix || pathname.startsWith(`${s.prefix}/`)) && s.prefix.length > best.prefix.length) best = s;
    }
    return best;
  }

  /** Unauthenticated control endpoints for tests, the demo and benchmarks. */
  private async handleAdmin(method: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (method === 'GET' && url.pathname === '/_emulator/stats') return json(200, { ...this.stats, fleet: this.rateLimiter.fleetStats() });
    if (method === 'POST' && url.pathname === '/_emulator/stats/reset') {
      this.resetStats();
      return json(200, this.stats);
    }
    if (method === 'PUT' && url.pathname === '/_emulator/faults') {
      try {
        const rules = (await readJson(req)) as FaultRule[];
        if (!Array.isArray(rules)) return json(422, { message: 'body must be an array of fault rules' });
        this.setFaults(rules);
        return json(200, rules);
      } catch {
        return json(400, { message: 'Problems parsing JSON' });
      }
    }
    if (method === 'GET' && url.pathname === '/_emulator/config') {
      return json(200, { rateLimit: this.rateLimiter.config, apiUrl: this.apiUrl, storageUrl: this.storage.baseUrl });
    }
    return json(404, { message: 'Not Found' });
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  return JSON.parse(text);
}

/** Starts an emulator (API + storage origin) and resolves once both listen. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  return new Emulator(options).listen();
}
