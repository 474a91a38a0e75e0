/**
 * Parse, don't trust (issue 13): every answer longhaul acts on is checked before it is used. The HTTP core
 * checks that a success body is JSON labelled as JSON (`answerProblem`); each activity then checks exactly the
 * fields it reads (`expectShape`, `expectList`) against its process's shapes, which live beside its
 * activities in `src/processes/<process>/` and are taken from the official response types
 * (`@octokit/openapi-types` `migration`, `import`, `hook-delivery-item`, `event`; Google's
 * `google.longrunning.Operation` and Cloud DNS `Change`). This file holds only the neutral machinery.
 *
 * A malformed answer is an `ApplicationFailure` of type `MalformedAnswer` naming the call and what was
 * wrong. It is retryable (a captive proxy's page or a truncated body may go away) within a small budget of
 * attempts, then non-retryable; workflows treat it as an unknown outcome (the server may have acted), never
 * as "nothing happened" and never as a value to carry on with.
 */
import * as v from 'valibot';
import { currentAttempt } from './attempt';
import { object, problemsOf } from '../common/schema';
import { ApplicationFailure } from '@temporalio/common';
import type { CallDescription } from './failures';
import { FailureType } from './retry-policy';

export const MALFORMED_ANSWER = FailureType.MalformedAnswer;

/** Attempts an activity makes on malformed answers before the failure becomes non-retryable. */
export const MALFORMED_ATTEMPTS = 4;

type FieldKind = 'string' | 'integer' | 'boolean' | 'object' | 'array';
type KindOf<K extends FieldKind> = K extends 'integer' ? number : K extends 'object' ? Record<string, unknown> : K extends 'array' ? unknown[] : K extends 'string' ? string : boolean;

/** A field of this kind, named in the answer's words when it has another: "the body's id is a string "7", not an integer". */
function kind<K extends FieldKind>(k: K) {
  return v.custom<KindOf<K>>((value) => hasKind(value, k), (issue) => `{=}{root}'s {key} is ${describe(issue.input)}, not ${/^[aeiou]/.test(k) ? 'an' : 'a'} ${k}`);
}

/** A field the answer must carry (not `null`). */
export function required<K extends FieldKind>(k: K) {
  return v.pipe(v.custom<KindOf<K>>((value) => value !== undefined && value !== null, '{=}{root} has no {key}'), kind(k));
}

/** A field the answer may leave out (or send as `null`). */
export function optional<K extends FieldKind>(k: K) {
  return v.nullish(kind(k));
}

/** An answer's object: the fields longhaul reads, each of its kind; other fields are left alone. */
export function answer<E extends v.ObjectEntries>(entries: E) {
  return object(entries, (issue) => `{=}{root} is ${describe(issue.input)}, not an object`);
}

/** An answer's schema: what an activity reads from a body (or from each item of a list). */
export type Shape = v.GenericSchema;

/** The failure for a malformed answer: retryable until `attempt` reaches the budget. `facts` join its details. */
export function malformedAnswerFailure(call: CallDescription, problem: string, attempt = currentAttempt(), facts: Record<string, unknown> = {}): ApplicationFailure {
  return ApplicationFailure.create({
    type: MALFORMED_ANSWER,
    message: `${call.method} ${call.url}: malformed answer: ${problem}`,
    nonRetryable: attempt >= MALFORMED_ATTEMPTS,
    details: [{ method: call.method, url: call.url, problem, ...facts }],
  });
}

/**
 * What is wrong with a success answer's body as a whole, if anything: a non-empty body must be JSON and
 * labelled JSON (an HTML sign-in page with 200 is not the API's answer, whatever its status says).
 */
export function answerProblem(contentType: string | undefined, text: string, parsed: unknown): string | undefined {
  if (text.trim() === '') return undefined;
  if (!/[/+]json\b/i.test(contentType ?? '')) {
    const html = /^\s*</.test(text) ? ' (an HTML page: a proxy or sign-in page?)' : '';
    return `content type ${contentType ? JSON.stringify(contentType) : 'missing'}, not JSON${html}`;
  }
  if (typeof parsed === 'string') return `the body is not valid JSON (${Buffer.byteLength(text)} bytes, truncated?)`;
  return undefined;
}

/** What is wrong with one object against a shape (empty when nothing), `where` naming it ("the body", "item 3"). */
export function shapeProblems(value: unknown, shape: Shape, where = 'the body'): string[] {
  return problemsOf(shape, value, where);
}

/** The body, checked against the shape; a `MalformedAnswer` failure naming the call and the problems otherwise. */
/** What the checks read of an answer (an `ApiResponse` of `api-client.ts`, which imports this file). */
export interface Answered {
  status: number;
  body: unknown;
  url: string;
}

export function expectShape<T>(res: Answered, method: string, shape: Shape): T {
  const problems = shapeProblems(res.body, shape);
  if (problems.length > 0) throw malformedAnswerFailure(callOf(res, method), `${res.status}: ${problems.join('; ')}`);
  return res.body as T;
}

/** An array body whose items all match the shape (the first few problems named). */
export function expectList<T>(res: Answered, method: string, itemShape: Shape): T[] {
  if (!Array.isArray(res.body)) throw malformedAnswerFailure(callOf(res, method), `${res.status}: the body is ${describe(res.body)}, not an array`);
  return expectItems<T>(res, method, res.body, itemShape, 'item');
}

/**
 * The items of a list the answer holds (the body itself, or a field of it such as Cloud DNS `changes`),
 * each checked against the shape (the first few problems named).
 */
export function expectItems<T>(res: Answered, method: string, items: readonly unknown[], itemShape: Shape, label: string): T[] {
  const problems = items.flatMap((item, i) => shapeProblems(item, itemShape, `${label} ${i}`));
  if (problems.length > 0) {
    const more = problems.length > 3 ? `; … (${problems.length - 3} more)` : '';
    throw malformedAnswerFailure(callOf(res, method), `${res.status}: ${problems.slice(0, 3).join('; ')}${more}`);
  }
  return items as T[];
}

function callOf(res: Answered, method: string): CallDescription {
  const url = new URL(res.url);
  return { method, url: `${url.origin}${url.pathname}` };
}

function hasKind(v: unknown, kind: FieldKind): boolean {
  if (kind === 'integer') return typeof v === 'number' && Number.isSafeInteger(v);
  if (kind === 'array') return Array.isArray(v);
  if (kind === 'object') return typeof v === 'object' && v !== null && !Array.isArray(v);
  return typeof v === kind;
}

function describe(v: unknown): string {
  if (v === undefined) return 'empty';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `a string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

