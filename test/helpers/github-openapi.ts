/**
 * GitHub's official OpenAPI description (`@octokit/openapi`, the api.github.com document) as a response validator:
 * the emulator's GitHub answers are checked against the schema GitHub publishes for that route and status, so a
 * field the real API always sends cannot be missing from what longhaul is tested against.
 *
 * The document is OpenAPI 3.0 (`nullable`, `$ref` into `#/components`); Ajv validates it with `strict: false`
 * (the document carries `x-*` and `example` keywords Ajv does not know) and compiles each route's schema once.
 *
 * One description per REST API version. The package publishes the 2022-11-28 document and marks every 2026-03-10
 * breaking change on the node it changes (`x-github-breaking-changes`: `{changeset, version, patch}`, the patch a
 * JSON Patch list, RFC 6902, or a JSON merge patch, RFC 7386); the 2026-03-10 document is that one with those
 * patches applied. A property a patch removes becomes the schema `false` rather than disappearing, so an answer
 * that still carries it fails under 2026-03-10 (the description allows unknown properties otherwise).
 */
import { readFileSync } from 'node:fs';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

interface OpenApiResponse {
  /** Shared answers (`#/components/responses/not_found`) are references. */
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}
interface OpenApiOperation {
  operationId?: string;
  responses?: Record<string, OpenApiResponse>;
}
type OpenApiPaths = Record<string, Record<string, OpenApiOperation>>;

const COMPONENTS_ID = 'github-openapi';

export type GithubApiVersion = '2022-11-28' | '2026-03-10';

interface Loaded {
  paths: OpenApiPaths;
  responses: Record<string, OpenApiResponse>;
  ajv: Ajv;
  templates: { template: string; pattern: RegExp }[];
  compiled: Map<string, ValidateFunction | null>;
}
const loaded = new Map<GithubApiVersion, Loaded>();
/** The version the calls below check against when none is named (a test file checks the other one by naming it). */
let current: GithubApiVersion = '2022-11-28';

/** Makes `version` the description the calls without a version argument check against. */
export function useGithubApiVersion(version: GithubApiVersion): void {
  current = version;
}

function load(version: GithubApiVersion = current): Loaded {
  const done = loaded.get(version);
  if (done) return done;
  const published = JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as unknown;
  const doc = (version === '2022-11-28' ? published : applyBreakingChanges(published, version)) as {
    paths: OpenApiPaths;
    components: { responses: Record<string, OpenApiResponse> };
  };
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ $id: COMPONENTS_ID, components: nullableWithoutType(doc.components) });
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    // `{org}` matches one path segment; templates are tried most literal first (see findTemplate).
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  const entry: Loaded = { paths: doc.paths, responses: doc.components.responses, ajv, templates, compiled: new Map() };
  loaded.set(version, entry);
  return entry;
}

interface BreakingChange {
  changeset: string;
  version: string;
  patch: { op: string; path: string; value?: unknown }[] | Record<string, unknown>;
}

/** The document with every breaking change of `version` applied where it is marked (see the header). */
export function applyBreakingChanges(node: unknown, version: string): unknown {
  if (Array.isArray(node)) return node.map((n) => applyBreakingChanges(n, version));
  if (typeof node !== 'object' || node === null) return node;
  let out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (k !== 'x-github-breaking-changes') out[k] = applyBreakingChanges(v, version);
  const changes = ((node as Record<string, unknown>)['x-github-breaking-changes'] ?? []) as BreakingChange[];
  for (const change of changes.filter((c) => c.version === version)) {
    out = (Array.isArray(change.patch) ? jsonPatch(out, change.patch) : mergePatch(out, change.patch)) as Record<string, unknown>;
  }
  return out;
}

/** RFC 7386, except that a removed property of a schema's `properties` becomes `false` (forbidden). */
function mergePatch(target: unknown, patch: unknown, parentKey = ''): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      if (parentKey === 'properties') out[k] = false;
      else delete out[k];
    } else out[k] = mergePatch(out[k], v, k);
  }
  return out;
}

/** RFC 6902's add, remove and replace (the operations the description uses); a removed property becomes `false`. */
function jsonPatch(target: unknown, ops: { op: string; path: string; value?: unknown }[]): unknown {
  const doc = JSON.parse(JSON.stringify(target)) as Record<string, unknown>;
  for (const { op, path, value } of ops) {
    const keys = path.split('/').slice(1).map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = keys.pop()!;
    let parent: unknown = doc;
    for (const k of keys) parent = (parent as Record<string, unknown>)?.[k];
    if (typeof parent !== 'object' || parent === null) continue;
    if (op === 'remove') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else if (keys[keys.length - 1] === 'properties') (parent as Record<string, unknown>)[last] = false;
      else delete (parent as Record<string, unknown>)[last];
    } else if (op === 'add' && Array.isArray(parent)) parent.splice(last === '-' ? parent.length : Number(last), 0, value);
    else (parent as Record<string, unknown>)[last] = value;
  }
  return doc;
}

/**
 * The description marks 128 schemas `nullable` without a `type` (`{nullable: true, allOf: [{$ref: …}]}`, GitHub's
 * way of saying "this object or null"); Ajv refuses to compile those, so they become `anyOf: [schema, null]`.
 */
function nullableWithoutType(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableWithoutType);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = nullableWithoutType(v);
  // A nullable enum (a discussion's `state_reason`) lists no null, which Ajv's `enum` then refuses: null is allowed.
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
  if (out.nullable !== true || out.type !== undefined) return out;
  const { nullable: _nullable, description, ...schema } = out;
  return { description, anyOf: [schema, { type: 'null' }] };
}

/** The description's path template for a concrete path (`/orgs/octo-org/migrations/7` → `/orgs/{org}/migrations/{migration_id}`). */
export function findTemplate(method: string, path: string, version: GithubApiVersion = current): string | undefined {
  const { paths, templates } = load(version);
  const bare = path.split('?')[0];
  const matches = templates.filter((t) => t.pattern.test(bare) && paths[t.template][method.toLowerCase()]);
  // A literal segment beats a parameter: `/orgs/{org}/migrations` must not lose to `/orgs/{org}/{x}`-like templates.
  matches.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  return matches[0]?.template;
}

/** Whether the description documents this status for the route (the shared error answers are not on every route). */
export function documentsStatus(method: string, path: string, status: number): boolean {
  const template = path.includes('{') ? path : findTemplate(method, path);
  return template !== undefined && load().paths[template][method.toLowerCase()]?.responses?.[String(status)] !== undefined;
}

/** Every status the description lists for a route template (`['200', '301', '403', '404']`), sorted. */
export function documentedStatuses(method: string, template: string): string[] {
  return Object.keys(load().paths[template]?.[method.toLowerCase()]?.responses ?? {}).sort();
}

function validatorFor(method: string, template: string, status: number, version: GithubApiVersion): ValidateFunction | null {
  const key = `${method.toUpperCase()} ${template} ${status}`;
  const { paths, responses, compiled } = load(version);
  if (compiled.has(key)) return compiled.get(key)!;
  const operation = paths[template]?.[method.toLowerCase()];
  if (!operation) throw new Error(`GitHub's OpenAPI description has no ${method.toUpperCase()} ${template}`);
  const documented = operation.responses?.[String(status)];
  if (!documented) throw new Error(`GitHub's OpenAPI description has no ${status} answer for ${method.toUpperCase()} ${template}`);
  const response = documented.$ref ? responses[documented.$ref.replace('#/components/responses/', '')] : documented;
  const content = response.content && (response.content['application/json'] ?? Object.values(response.content)[0]);
  if (!content?.schema) {
    compiled.set(key, null);
    return null;
  }
  const validate = compileSchema(content.schema, version);
  compiled.set(key, validate);
  return validate;
}

/** Compiles a schema of the description, its `#/components/…` references resolved against the loaded document. */
function compileSchema(schema: unknown, version: GithubApiVersion): ValidateFunction {
  return load(version).ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${COMPONENTS_ID}#/components/`)) as object);
}

export interface SchemaCheck {
  template: string;
  valid: boolean;
  /** Readable errors (`/repositories/0 must have required property 'assignees_url'`), empty when valid. */
  errors: string[];
}

/**
 * Validates one answer body against the description's schema for its route and status. `path` may be concrete
 * (`/orgs/octo-org/migrations/7`) or a template. A status the description documents without a body (204, 302)
 * is valid only when there is no body.
 */
export function checkGithubAnswer(method: string, path: string, status: number, body: unknown, version: GithubApiVersion = current): SchemaCheck {
  const template = path.includes('{') ? path : findTemplate(method, path, version);
  if (!template) throw new Error(`GitHub's OpenAPI description has no route for ${method.toUpperCase()} ${path}`);
  const validate = validatorFor(method, template, status, version);
  if (!validate) {
    const empty = body === undefined || body === null || body === '';
    // A redirect's text body (GitHub repeats the `Location` URL there) is not the JSON content the description describes.
    if (status >= 300 && status < 400 && typeof body === 'string') return { template, valid: true, errors: [] };
    return { template, valid: empty, errors: empty ? [] : ['the description documents no body for this status'] };
  }
  const valid = validate(body) as boolean;
  return { template, valid, errors: valid ? [] : describe(validate.errors ?? []) };
}

/**
 * Validates a body against one named schema of the description (`basic-error`): for answers the description
 * documents in general but not on every route, such as rate-limit errors.
 */
export function checkGithubSchema(name: string, body: unknown, version: GithubApiVersion = current): SchemaCheck {
  const key = `schema ${name}`;
  const { compiled } = load(version);
  let validate = compiled.get(key);
  if (!validate) {
    validate = compileSchema({ $ref: `#/components/schemas/${name}` }, version);
    compiled.set(key, validate);
  }
  const valid = validate(body) as boolean;
  return { template: `#/components/schemas/${name}`, valid, errors: valid ? [] : describe(validate.errors ?? []) };
}

function describe(errors: ErrorObject[]): string[] {
  const seen = new Set<string>();
  for (const e of errors) seen.add(`${e.instancePath || '/'} ${e.message ?? e.keyword}${e.params && 'missingProperty' in e.params ? '' : ` ${JSON.stringify(e.params)}`}`);
  return [...seen];
}
