/**
 * Strict request validation, as the real service does it: unknown fields and wrong types are a 422 with
 * a message naming the field, never silently ignored. Each route's body is a valibot schema (`requestBody`),
 * its type derived from it; the problem named is the one GitHub names first: an unknown key, then a missing
 * one, then a wrong type. The messages are GitHub's, written here (`{key}` stands for the field's name); none
 * comes from longhaul's own schemas, which judge the same bodies on the caller's side.
 */
import * as v from 'valibot';
import { EmulatorHttpError } from './http-error';

/** Any valibot schema. */
type Schema = v.GenericSchema;

type Kind = 'string' | 'boolean' | 'integer' | 'number' | 'string[]' | 'object' | 'array';

const KINDS: { [K in Kind]: (value: unknown) => boolean } = {
  string: (value) => typeof value === 'string',
  boolean: (value) => typeof value === 'boolean',
  integer: (value) => Number.isInteger(value),
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  'string[]': (value) => Array.isArray(value) && value.every((item) => typeof item === 'string'),
  object: (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  array: (value) => Array.isArray(value),
};

/** A field of this kind: `For "name", 5 is not a string.` otherwise. */
function kind<T>(k: Kind) {
  return v.custom<T>((value) => KINDS[k](value), (issue) => `For "{key}", ${JSON.stringify(issue.input)} is not ${k === 'integer' ? 'an integer' : `a ${k}`}.`);
}

export const text = () => kind<string>('string');
export const flag = () => kind<boolean>('boolean');
export const texts = () => kind<string[]>('string[]');
export const jsonObject = () => kind<Record<string, unknown>>('object');

/** A field the body must carry: `"name" wasn't supplied.` otherwise. */
export function given<S extends Schema>(schema: S) {
  return v.pipe(v.custom<v.InferInput<S>>((value) => value !== undefined, `"{key}" wasn't supplied.`), schema);
}

/** A request body: a JSON object with these fields and no other. */
export function requestBody<E extends v.ObjectEntries>(entries: E) {
  const known = v.strictObject(entries, (issue) => {
    if (issue.expected === 'never') return `"{key}" is not a permitted key.`;
    const key = String((issue.path?.at(-1) as { key?: unknown } | undefined)?.key);
    return v.safeParse(entries[key], undefined).issues?.[0]?.message ?? `"{key}" wasn't supplied.`;
  });
  return v.pipe(v.custom<v.InferInput<typeof known>>((body) => KINDS.object(body), 'Body must be a JSON object.'), known);
}

/** GitHub's order: an unknown key, then a missing one, then a wrong type. */
const ORDER = [/is not a permitted key\.$/, /wasn't supplied\.$/, /./];

/** Each issue's message with the field's name in place of `{key}` (a top-level field: request bodies are flat). */
function problemsOf(schema: Schema, value: unknown): string[] {
  const result = v.safeParse(schema, value);
  if (result.success) return [];
  return result.issues.map((issue) => issue.message.replace('{key}', String((issue.path?.at(-1) as { key?: unknown } | undefined)?.key ?? '')));
}

/** The body, checked against its schema; a 422 (`status`) naming the first problem otherwise. */
export function validateBody<S extends Schema>(body: unknown, schema: S, status = 422): v.InferOutput<S> {
  const value = body === undefined ? {} : body;
  const problems = problemsOf(schema, value);
  if (problems.length > 0) {
    const rank = (problem: string) => ORDER.findIndex((pattern) => pattern.test(problem));
    const [first] = [...problems].sort((a, b) => rank(a) - rank(b));
    throw new EmulatorHttpError(status, `Invalid request.\n\n${first}`);
  }
  return value as v.InferOutput<S>;
}
