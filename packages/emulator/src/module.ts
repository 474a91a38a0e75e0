/**
 * What an emulated API family plugs into the emulator with: one interface for every family. A module names
 * the options key it owns (`name`, also the key its state is read under: `emulator.migrations`), the
 * service it mounts under (`service`: prefix, error style, rate limits), its default options, and
 * `register`, which adds its routes to that service's router and returns the state tests inspect. A state
 * with a `durable` member (a snapshot/restore pair, `Durable`) survives a restart when the emulator has a
 * data directory (`persistence/store.ts`); the core saves and loads it, the module only says what it is.
 * The emulator core knows no family: it iterates the module list (`modules.ts`).
 */
import type { RateLimiter } from './rate-limiter';
import type { Router } from './router';
import type { ServiceSpec } from './service';
import type { StorageOrigin } from './storage/origin';
import type { Durable } from './persistence/durable';

export type { ServiceSpec } from './service';

/** What a module's `register` receives: shared infrastructure, never another module's state. */
export interface EmulatorContext {
  readonly clock: () => number;
  readonly storage: StorageOrigin;
  /** The rate limiter of the services that have one (`GET /rate_limit` reports a caller's window). */
  readonly rateLimiter: RateLimiter;
  /** Every option the emulator was given; a family reads its family-wide settings here (the GitHub fixture). */
  readonly options: Readonly<Record<string, unknown>>;
  /** The GitHub API's base URL as its links carry it: `apiPublicUrl`, or where it listens (known once listening). */
  apiUrl(): string;
  /** One value per emulator under `key`, created on first use: what the modules of one family share. */
  shared<T>(key: string, create: () => T): T;
  /** The router of another service, mounted on first use, for a module that serves several prefixes. */
  mount(service: ServiceSpec): Router;
}

export type { Durable } from './persistence/durable';

/** Replaces the contents of a Map, Set or array in place (modules keep their containers in `const`s). */
export function refill<K, V>(target: Map<K, V>, source: Map<K, V>): void;
export function refill<T>(target: Set<T> | T[], source: Iterable<T>): void;
export function refill(target: Map<unknown, unknown> | Set<unknown> | unknown[], source: Iterable<unknown>): void {
  const items = [...source];
  if (Array.isArray(target)) target.splice(0, target.length, ...items);
  else if (target instanceof Set) {
    target.clear();
    for (const item of items) target.add(item);
  } else {
    target.clear();
    for (const [k, v] of items as [unknown, unknown][]) target.set(k, v);
  }
}

/** Refills each container of `live` from the same-named one of `saved`. */
export function refillAll(live: Record<string, Map<unknown, unknown> | Set<unknown> | unknown[]>, saved: Record<string, Iterable<unknown>>): void {
  for (const [name, target] of Object.entries(live)) refill(target as unknown[], saved[name]);
}

type Container = Map<any, any> | Set<any> | unknown[]; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The durable state of a module that is only containers (kept in `const`s): saved whole, refilled by name. */
export function durableContainers<T extends Record<string, Container>>(live: T): Durable<T> {
  return { snapshot: () => live, restore: (saved) => refillAll(live, saved) };
}

/** One durable state made of several (a module that registers several APIs), each under its name. */
export function durableParts(parts: Record<string, Durable>): Durable<Record<string, unknown>> {
  return {
    snapshot: () => Object.fromEntries(Object.entries(parts).map(([name, part]) => [name, part.snapshot()])),
    restore(saved) {
      for (const [name, part] of Object.entries(parts)) if (name in saved) part.restore(saved[name]);
    },
  };
}

export interface EmulatorModule<Name extends string = string, Options extends object = object, State = unknown> {
  /** The options key (`new Emulator({ [name]: {...} })`) and the state accessor (`emulator[name]`). */
  readonly name: Name;
  /** The service whose router `register` receives. */
  readonly service: ServiceSpec;
  /** Default options; given options are merged over them (see `mergeModuleOptions`). */
  readonly defaults: Options;
  register(router: Router, ctx: EmulatorContext, options: Options): State;
}

// `any` so that modules of every options and state type fit one list (`register` takes its own options).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyModule = EmulatorModule<string, any, any>;

/**
 * What callers may give for a module's options: any subset; an object-valued option that has a default
 * may itself be partial (merged one level deep); arrays, functions and optional objects are taken whole.
 */
export type ModuleInput<Options> = {
  [K in keyof Options]?: Options[K] extends readonly unknown[] | ((...args: never[]) => unknown)
    ? Options[K]
    : Options[K] extends object
      ? undefined extends Options[K]
        ? Options[K]
        : Partial<Options[K]>
      : Options[K];
};

/** Each module's options, keyed by its name. */
export type ModuleOptions<M extends AnyModule> = { [K in M as K['name']]?: ModuleInput<K['defaults']> };

/** Each module's state, keyed by its name. */
export type ModuleStates<M extends AnyModule> = { readonly [K in M as K['name']]: ReturnType<K['register']> };

/** Declares a module with its name as a literal type, so `emulator[name]` is typed. */
export function defineModule<Name extends string, Options extends object, State>(module: EmulatorModule<Name, Options, State>): EmulatorModule<Name, Options, State> {
  return module;
}

/** A `{…}` object (JSON object, object literal): merged key by key, where arrays and class instances are replaced. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * A module's options for one emulator: given values over defaults, object-valued defaults merged one level
 * deep, and every object and array copied, so a module (or a test through its state) changing its options
 * never changes the shared defaults or another emulator's options.
 */
export function mergeModuleOptions<Options extends object>(defaults: Options, given: ModuleInput<Options> | undefined): Options {
  const out: Record<string, unknown> = {};
  const d = defaults as Record<string, unknown>;
  const g = (given ?? {}) as Record<string, unknown>;
  for (const key of new Set([...Object.keys(d), ...Object.keys(g)])) {
    const value = g[key] === undefined ? d[key] : g[key];
    if (isPlainObject(d[key]) && (isPlainObject(g[key]) || g[key] === undefined)) out[key] = { ...d[key], ...(g[key] as object | undefined) };
    else if (Array.isArray(value)) out[key] = [...(value as unknown[])];
    else out[key] = value;
  }
  return out as Options;
}
