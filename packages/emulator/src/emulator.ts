/**
 * The platform emulator: a real HTTP server that behaves like the seeded APIs (state machines,
 * rate-limit headers, faults, strict validation), plus a separate storage origin for pre-signed
 * downloads. Tests start it in-process on port 0; `npm run emulator` runs it standalone.
 *
 * The core knows no API family: it mounts the modules of `modules.ts` (or `options.modules`), each on its
 * service, with its options (`options[module.name]` over the module's defaults) and keeps each module's
 * state under its name (`emulator.migrations`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { EmulatorHttpError } from './http-error';
import { defaultRateLimitConfig, RateLimiter, type RateLimitConfig } from './rate-limiter';
import { type FaultRule, type FaultState, pickFault } from './faults';
import { applyFault } from './fault-answer';
import { DEFAULT_MAX_REQUEST_BYTES, readRequestBody, refuseTooLarge, RequestTooLarge } from './request-body';
import { emptyStats, increment, type EmulatorStats } from './stats';
import { StorageOrigin } from './storage/origin';
import { createService, errorBody, type ServiceDefinition, type ServiceSpec } from './service';
import type { RouteResult } from './router';
import { mergeModuleOptions, type AnyModule, type Durable, type EmulatorContext, type ModuleOptions, type ModuleStates } from './module';
import { defaultModules, type DefaultModule, type FamilyOptions } from './modules';
import { StateStore } from './persistence/store';

export type { EmulatorContext } from './module';

/** The emulator's own options; each module's options sit beside them under the module's name. */
export interface CoreOptions {
  host?: string;
  /** API port; 0 picks a free one. */
  port?: number;
  /**
   * The GitHub API's public URL, which the links it builds carry (`url` fields, `Link` headers, a 301's
   * `Location`): the address clients reach it at through a reverse proxy, a container's published port or a host
   * name (a path is kept: `https://ghe.example/api/v3`); default the address it listens on.
   */
  apiPublicUrl?: string;
  /** Storage origin port; 0 picks a free one. */
  storagePort?: number;
  /**
   * The storage origin's public URL, which the archive's pre-signed links carry (the address clients reach it at
   * through a proxy, a container's published port or a host name); default the address it listens on.
   */
  storagePublicUrl?: string;
  /** When set, only this bearer token is accepted; otherwise any non-empty token is. */
  token?: string;
  /** Emulator time in epoch ms. */
  clock?: () => number;
  /**
   * Awaited before each API request is answered, so a clock that follows another server's time (a time-skipping
   * test server's, which jumps while nothing runs) is current when the request reads it.
   */
  clockSync?: () => Promise<unknown>;
  /**
   * A server clock that is off by this much (negative: behind), added to `clock` (or the host's time): its
   * `created_at`, `Date` and rate-limit reset times are then skewed against the caller's, as a real server's
   * may be. @format milliseconds
   */
  clockOffsetMs?: number;
  rateLimit?: Partial<Omit<RateLimitConfig, 'secondary'>> & { secondary?: Partial<RateLimitConfig['secondary']> };
  faults?: FaultRule[];
  /** Storage download throttle in bytes per second (0 = unthrottled). */
  storageBytesPerSecond?: number;
  /**
   * Directory whose `emulator-state.json` keeps the state of every module and the storage origin across a
   * restart (`persistence/store.ts`); without it the state lives in memory only (tests).
   */
  dataDir?: string;
  /** The cap on a request body; a larger one is answered 413 (default `DEFAULT_MAX_REQUEST_BYTES`, 32 MiB). @format bytes */
  maxRequestBytes?: number;
}

export type EmulatorOptions<M extends AnyModule = DefaultModule> = CoreOptions &
  FamilyOptions &
  ModuleOptions<M> & {
    /** The API families served (default `defaultModules`); one more is `[...defaultModules, mine]`. */
    modules?: readonly M[];
  };

class EmulatorServer<M extends AnyModule = DefaultModule> {
  readonly stats: EmulatorStats = emptyStats();
  readonly storage: StorageOrigin;
  /** The mounted services, in mounting order (`serviceUrl(name)` is one's base URL). */
  readonly services: ServiceDefinition[] = [];
  readonly clock: () => number;
  readonly rateLimiter: RateLimiter;
  /** Each module's state under its name (also `emulator[name]`). */
  readonly state: ModuleStates<M>;
  private readonly faultStates: FaultState[] = [];
  /**
   * The most recent API requests (method and concrete path, service prefix included, every origin; at most 10,000), so
   * tests can assert that no call named an id the process did not know (`/migrations/null/...`).
   */
  readonly requestLog: { method: string; path: string }[] = [];
  private server?: Server;
  /** Services served at the root of an origin of their own (`ServiceSpec.ownPort`): name → server and URL. */
  private readonly ownOrigins = new Map<string, { server: Server; url: string }>();
  /** Where the GitHub API listens (known once listening); its links carry `apiPublicUrl`. */
  /** The data directory's state file, when `dataDir` is given. */
  readonly persistence?: StateStore;
  apiUrl = '';

  constructor(readonly options: EmulatorOptions<M> = {}) {
    const clock = options.clock ?? Date.now;
    const offset = options.clockOffsetMs ?? 0;
    this.clock = offset === 0 ? clock : () => clock() + offset;
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
      publicUrl: options.storagePublicUrl,
    });
    this.setFaults(options.faults ?? []);
    this.state = this.registerModules(options.modules ?? (defaultModules as readonly AnyModule[]));
    if (options.dataDir) {
      const states = this.state as Record<string, { durable?: Durable }>;
      const parts = () => ({ storage: this.storage.durable, ...Object.fromEntries(Object.entries(states).flatMap(([name, s]) => (s?.durable ? [[name, s.durable]] : []))) });
      this.persistence = new StateStore(options.dataDir, parts);
      this.persistence.load();
    }
  }

  /** Registers every module on its service, in list order, and exposes its state under its name. */
  private registerModules(modules: readonly AnyModule[]): ModuleStates<M> {
    const options = this.options as Readonly<Record<string, unknown>>;
    const shared = new Map<string, unknown>();
    const ctx: EmulatorContext = {
      clock: this.clock,
      storage: this.storage,
      rateLimiter: this.rateLimiter,
      options,
      apiUrl: () => this.apiPublicUrl,
      shared: <T>(key: string, create: () => T): T => {
        if (!shared.has(key)) shared.set(key, create());
        return shared.get(key) as T;
      },
      mount: (spec) => this.mount(spec).router,
    };
    const states: Record<string, unknown> = {};
    for (const module of modules) {
      // A module's state becomes a property: it must not hide another module's or the emulator's own.
      if (module.name in states || module.name in this) throw new Error(`emulator module name '${module.name}' is already taken`);
      states[module.name] = module.register(this.mount(module.service).router, ctx, mergeModuleOptions(module.defaults, options[module.name] as object | undefined));
    }
    Object.assign(this, states);
    return states as ModuleStates<M>;
  }

  /** The service a spec names, mounted on first use (with the rate limiter and token it asks for). */
  private mount(spec: ServiceSpec): ServiceDefinition {
    const mounted = this.services.find((s) => s.name === spec.name);
    if (mounted) return mounted;
    const { rateLimited, ...rest } = spec;
    const limited = rateLimited && this.rateLimiter.config.enabled;
    const service = createService({ ...rest, rateLimiter: limited ? this.rateLimiter : undefined, token: this.options.token });
    this.services.push(service);
    return service;
  }

  /** A mounted service by name (e.g. `github`, `google-logging`). */
  service(name: string): ServiceDefinition {
    const service = this.services.find((s) => s.name === name);
    if (!service) throw new Error(`no emulated service named ${name}`);
    return service;
  }

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
    const api = await this.listenOn(this.options.port ?? 0, (req, res) => void this.handle(req, res));
    this.server = api.server;
    this.apiUrl = api.url;
    for (const service of this.services) {
      if (!service.ownPort) continue;
      this.ownOrigins.set(service.name, await this.listenOn(service.ownPort(this.options), (req, res) => void this.handle(req, res, service)));
    }
    return this;
  }

  private async listenOn(port: number, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
    const server = createServer(handler);
    server.keepAliveTimeout = 5_000;
    const host = this.options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    return { server, url: `http://${host}:${(server.address() as AddressInfo).port}` };
  }

  /** The address the GitHub API's links carry: the configured public URL, or where it listens. */
  get apiPublicUrl(): string {
    return this.options.apiPublicUrl?.replace(/\/+$/, '') ?? this.apiUrl;
  }

  /** Base URL of a mounted service (e.g. `google-logging`: the root of its own origin). */
  serviceUrl(name: string): string {
    const service = this.service(name);
    return (this.ownOrigins.get(name)?.url ?? this.apiUrl) + service.prefix;
  }

  async close(): Promise<void> {
    await this.persistence?.flush();
    await this.storage.close();
    const servers = [this.server, ...[...this.ownOrigins.values()].map((o) => o.server)].filter((s): s is Server => s !== undefined);
    await Promise.all(
      servers.map((server) => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      }),
    );
  }

  /** Answers one request: for `fixed`'s own origin, or on the API port for the service its path is under. */
  private async handle(req: IncomingMessage, res: ServerResponse, fixed?: ServiceDefinition): Promise<void> {
    // A sync that fails (the other server already stopped) leaves the clock at its last reading.
    await this.options.clockSync?.().catch(() => undefined);
    const now = this.clock();
    const url = new URL(req.url ?? '/', 'http://emulator');
    const method = (req.method ?? 'GET').toUpperCase();
    if (url.pathname.startsWith('/_emulator/')) return this.handleAdmin(method, url, req, res);

    const service = fixed ?? this.serviceFor(url.pathname);
    if (!service) {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ message: 'Not Found' }));
      return;
    }
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

    const headerProblem = service.checkHeaders?.(req.headers);
    if (headerProblem) return fail(400, headerProblem.message, headerProblem.extra);

    const limiter = service.rateLimiter;
    const caller = token;
    const arrival = limiter?.arrival(caller, now) ?? 'open';
    limiter?.noteMethod(caller, method, now, url.pathname);
    if (arrival === 'while-limited') this.stats.requestsWhileLimited++;
    if (arrival === 'in-flight') this.stats.requestsInFlightWhenLimited++;
    if (match === undefined) return fail(404, 'Not Found', {}, limiter?.headers(caller, now) ?? {});
    if (match === 'method') return fail(405, 'Method Not Allowed', {}, limiter?.headers(caller, now) ?? {});
    const { route, params } = match;

    if (limiter && !route.options.exemptFromLimits) {
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
      if (fault && !fault.afterProcessing && (await applyFault(fault, req, fail, send)) === 'answered') return;

      let body: unknown;
      try {
        body = await readJson(req, this.options.maxRequestBytes);
      } catch (err) {
        if (err instanceof RequestTooLarge) {
          return refuseTooLarge(req, res, errorBody(service.errorStyle, 413, `${err.message}`, {}));
        }
        return fail(400, 'Problems parsing JSON', {}, limiter?.headers(caller, now) ?? {});
      }
      const queryProblem = service.checkQuery?.(url.searchParams);
      if (queryProblem !== undefined) return fail(422, queryProblem, {}, limiter?.headers(caller, now) ?? {});

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
        this.persistence?.markDirty();
        const headers = limiter?.count(caller, now, true) ?? {};
        if (err instanceof EmulatorHttpError) return fail(err.status, err.message, err.extra, { ...headers, ...err.headers });
        console.error('[emulator] handler error', err);
        return fail(500, 'Server Error', {}, headers);
      }
      const counts = route.options.countsAgainstPrimary ? route.options.countsAgainstPrimary(result) : true;
      if (!counts) {
        this.stats.notCounted++;
        increment(this.stats.notCountedByRoute, routeKey);
      }
      const rateHeaders = limiter?.count(caller, now, counts) ?? {};
      // With a data directory, a change is on disk before the answer that reports it (see persistence/store.ts).
      await this.persistence?.afterRequest(method);
      // A fault after processing: the server acted, but the caller cannot know (lost or late answer).
      if ((fault?.afterProcessing || fault?.kind === 'link') && (await applyFault(fault, req, fail, send, result)) === 'answered') return;
      send(result, rateHeaders);
    } finally {
      limiter?.leave(caller, now);
    }
  }

  /** The API port's service with the longest prefix the path is under (a root service takes every other path). */
  private serviceFor(pathname: string): ServiceDefinition | undefined {
    let best: ServiceDefinition | undefined;
    for (const s of this.services) {
      if (s.ownPort) continue;
      const under = s.prefix === '' || pathname === s.prefix || pathname.startsWith(`${s.prefix}/`);
      if (under && (!best || s.prefix.length > best.prefix.length)) best = s;
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
        const rules = (await readJson(req, this.options.maxRequestBytes)) as FaultRule[];
        if (!Array.isArray(rules)) return json(422, { message: 'body must be an array of fault rules' });
        this.setFaults(rules);
        return json(200, rules);
      } catch {
        return json(400, { message: 'Problems parsing JSON' });
      }
    }
    if (method === 'GET' && url.pathname === '/_emulator/config') {
      const services = Object.fromEntries(this.services.map((s) => [s.name, this.serviceUrl(s.name)]));
      return json(200, { rateLimit: this.rateLimiter.config, apiUrl: this.apiUrl, apiPublicUrl: this.apiPublicUrl, storageUrl: this.storage.baseUrl, storagePublicUrl: this.storage.publicUrl, services });
    }
    return json(404, { message: 'Not Found' });
  }
}

async function readJson(req: IncomingMessage, maxBytes = DEFAULT_MAX_REQUEST_BYTES): Promise<unknown> {
  const text = (await readRequestBody(req, maxBytes)).toString('utf8');
  if (text.trim() === '') return undefined;
  return JSON.parse(text);
}

/** An emulator: the server, and each module's state under the module's name (`emulator.migrations`). */
export type Emulator<M extends AnyModule = DefaultModule> = EmulatorServer<M> & ModuleStates<M>;
// The constructor's instances carry the module states `registerModules` assigns, typed from the module list.
export const Emulator = EmulatorServer as unknown as new <M extends AnyModule = DefaultModule>(options?: EmulatorOptions<M>) => Emulator<M>;

/** Starts an emulator (API + storage origin) and resolves once both listen. */
export async function startEmulator<M extends AnyModule = DefaultModule>(options: EmulatorOptions<M> = {}): Promise<Emulator<M>> {
  return new Emulator<M>(options).listen();
}
