/**
 * longhaul's schemas, written with valibot (chosen by `npm run bench:schema`: the smallest bundle and the
 * fastest cold start of zod 4, valibot and TypeBox, and it runs in the workflow sandbox). Workflow inputs,
 * Update arguments, API answers and the emulator's request bodies are each one schema, and their TypeScript
 * types are derived from it (`v.InferInput`). Deterministic: workflows import it.
 *
 * One formatter turns valibot's issues into longhaul's messages, which name the field by its path and say
 * what is allowed: `poll.initialIntervalMs must be between 1000 and 604800000 ms (got 1)`. A schema's own
 * messages are written without the field (`must be true or false`): the formatter puts the path in front.
 * A message may place the path itself with `{path}` (`{path} "x" is not a valid repository name`) and name a
 * sibling field with `{.name}` (`must be at least {.initialIntervalMs}` → `poll.initialIntervalMs`); a message
 * that names its own subject starts with `{=}` and is kept as it is (`{=}author mapping for "x": …`), naming
 * the root and the field's key if it needs to with `{root}` and `{key}` (`{=}{root} has no {key}`: "the body
 * has no id", as answers are told).
 */
import * as v from 'valibot';

/** Any valibot schema. */
export type Schema = v.GenericSchema;


/** `poll.maxIntervalMs`, `additions[0].ttl`: the issue's path under `root`. */
export function issuePath(issue: v.BaseIssue<unknown>, root = ''): string {
  let path = root;
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key;
    path = typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${String(key)}` : String(key);
  }
  return path;
}

/** The last step of a path: `.field` or `[index]`. */
const LEAF = /(?:\.[^.[\]]+|\[\d+\])$/;

/** The issue in longhaul's words: the field's path, then what is allowed. */
export function issueMessage(issue: v.BaseIssue<unknown>, root = ''): string {
  const path = issuePath(issue, root);
  const parent = LEAF.test(path) ? path.replace(LEAF, '') : '';
  const text = issue.message.startsWith('Invalid ') ? `must be ${issue.expected ?? 'valid'} (got ${issue.received})` : issue.message;
  const placed = text.includes('{path}') || text.startsWith('{=}');
  const key = String((issue.path?.at(-1) as { key?: unknown } | undefined)?.key ?? '');
  const words: Record<string, string> = { '{path}': path, '{root}': root, '{key}': key };
  // Sibling names are not looked for in quoted values (the input, echoed: a feed template's `{owner}`).
  const message = text
    .replace(/^\{=\}/, '')
    .replace(/\{(?:path|root|key)\}/g, (match) => words[match])
    .replace(/"(?:[^"\\]|\\.)*"|\{\.(\w+)\}/g, (match, name?: string) => (name === undefined ? match : parent ? `${parent}.${name}` : name));
  return placed || !path ? message : `${path} ${message}`;
}

/** Every problem of `value` against the schema, in longhaul's words (empty when it is valid). */
export function problemsOf(schema: Schema, value: unknown, root = ''): string[] {
  const result = v.safeParse(schema, value);
  return result.success ? [] : result.issues.map((issue) => issueMessage(issue, root));
}

/** The first failing check of a field's pipe only: one message per field, as a person fixes them. */
export function firstProblem<S extends Schema>(schema: S) {
  return v.config(schema, { abortPipeEarly: true });
}

/**
 * An object with these entries; `message` when it is none. A required entry that is missing is judged like one
 * given as `undefined`, with its own message. Arrays count as objects (as `typeof` has it): `object` refuses them.
 */
export function shape<E extends v.ObjectEntries>(entries: E, message = 'must be an object') {
  const missing = (issue: v.BaseIssue<unknown>): string => {
    const key = (issue.path?.at(-1) as { key?: unknown } | undefined)?.key;
    const entry = typeof key === 'string' && Object.hasOwn(entries, key) ? entries[key] : undefined;
    return (entry && v.safeParse(entry, undefined).issues?.[0]?.message) ?? message;
  };
  return v.object(entries, missing);
}

/** An object (not an array, not null) with these entries, as `shape`; `message` when it is not one. */
export function object<E extends v.ObjectEntries>(entries: E, message: string | ((issue: v.CustomIssue) => string) = 'must be an object') {
  const shaped = shape(entries, typeof message === 'string' ? message : 'must be an object');
  return v.pipe(
    v.custom<v.InferInput<typeof shaped>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), message),
    shaped,
  );
}

/** Whether the fields named have a problem already (a rule over them is then left out: one thing at a time). */
export function hasIssuesAt(dataset: { issues?: readonly v.BaseIssue<unknown>[] }, ...keys: string[]): boolean {
  return (dataset.issues ?? []).some((issue) => keys.includes(String((issue.path?.[0] as { key?: unknown } | undefined)?.key)));
}

/**
 * A rule over some fields of an object (`keys`), checked once those fields are valid in themselves (one thing
 * at a time, as a person fixes them); its message names the field `at`, or the object when there is none.
 */
export function rule<T extends object>(keys: readonly string[], requirement: (value: T) => boolean, message: string | ((value: T) => string), at?: string) {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    const value = dataset.value as T;
    const refusedWhole = (dataset.issues ?? []).some((issue) => !issue.path?.length);
    if (typeof value !== 'object' || value === null || refusedWhole || hasIssuesAt(dataset, ...keys) || requirement(value)) return;
    const text = typeof message === 'string' ? message : message(value);
    const field = at === undefined ? undefined : (value as Record<string, unknown>)[at];
    addIssue({ message: text, ...(at === undefined ? {} : { path: [{ type: 'object', origin: 'value', input: value as Record<string, unknown>, key: at, value: field }] }) });
  });
}

/**
 * Refuses an object that gives a field under its name and under its former name, which is still read: one or
 * the other, whatever else is wrong with either (`give earlyWaitMs or graceMs (its former name), not both`).
 */
export function notBoth<T extends object>(name: keyof T & string, former: keyof T & string) {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    const value = dataset.value as Record<string, unknown> | null;
    if (typeof value === 'object' && value !== null && value[name] !== undefined && value[former] !== undefined) {
      addIssue({ message: `{=}give ${name} or ${former} (its former name), not both` });
    }
  });
}

/** A number of milliseconds from `min` to `max` (and finite): `message` for any miss. */
export function msBetween(min: number, max: number, message: string) {
  return firstProblem(v.pipe(v.number(message), v.finite(message), v.minValue(min, message), v.maxValue(max, message)));
}

/** Whole numbers from `min` to `max`: `message` for any miss (`Number.isInteger`: other types are misses too). */
export function wholeBetween(min: number, max: number, message: string) {
  return firstProblem(v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message)));
}

/** A finite number above 0. */
export function positiveNumber(message = 'must be a positive number') {
  return firstProblem(v.pipe(v.number(message), v.finite(message), v.gtValue(0, message)));
}

/** A finite number of at least 0. */
export function nonNegativeNumber(message = 'must be a non-negative number') {
  return firstProblem(v.pipe(v.number(message), v.finite(message), v.minValue(0, message)));
}

/** `true` or `false`. */
export function flag(message = 'must be true or false') {
  return v.boolean(message);
}
