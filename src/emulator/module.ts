/**
 * What an emulated API family plugs into the emulator with: one interface for every family. A module names
 * the options key it owns (`name`, also the key its state is read under: `emulator.migrations`), the
 * service it mounts under (`service`: prefix, error style, rate limits), its default options, and
 * `register`, which adds its routes to that service's router and returns the state tests inspect.
 * The emulator core knows no family: it iterates the module list (`modules.ts`).
 */
import type { Router } from './router';
import type { ServiceSpec } from './service';
import type { StorageOrigin } from './storage/origin';

export type { ServiceSpec } from './service';

/** What a module's `register` receives: shared infrastructure, never another module's state. */
export interface EmulatorContext {
  readonly clock: () => number;
  readonly storage: StorageOrigin;
  /** Every option the emulator was given; a family reads its family-wide settings here (the GitHub fixture). */
  readonly options: Readonly<Record<string, unknown>>;
  /** The API base URL (known once listening). */
  apiUrl(): string;
  /** One value per emulator under `key`, created on first use: what the modules of one family share. */
  shared<T>(key: string, create: () => T): T;
  /** The router of another service, mounted on first use, for a module that serves several prefixes. */
  mount(service: ServiceSpec): Router;
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
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
