/**
 * GitHub's official OpenAPI description (`@octokit/openapi`, the api.github.com document) as a response validator:
 * the emulator's GitHub answers are checked against the schema GitHub publishes for that route and status, so a
 * field the real API always sends cannot be missing from what longhaul is tested against.
 *
 * The document is OpenAPI 3.0 (`nullable`, `$ref` into `#/components`); Ajv validates it with `strict: false`
 * (the document carries `x-*` and `example` keywords Ajv does not know) and compiles each route's schema once.
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

let loaded: { paths: OpenApiPaths; responses: Record<string, OpenApiResponse>; ajv: Ajv; templates: { template: string; pattern: RegExp }[] } | undefined;
const compiled = new Map<string, ValidateFunction | null>();

function load(): NonNullable<typeof loaded> {
  if (loaded) return loaded;
  const doc = JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as {
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
  loaded = { paths: doc.paths, responses: doc.components.responses, ajv, templates };
  return loaded;
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
  if (out.nullable !== true || out.type !== undefined) return out;
  const { nullable: _nullable, description, ...schema } = out;
  return { description, anyOf: [schema, { type: 'null' }] };
}

/** The description's path template for a concrete path (`/orgs/octo-org/migrations/7` → `/orgs/{org}/migrations/{migration_id}`). */
export function findTemplate(method: string, path: string): string | undefined {
  const { paths, templates } = load();
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

function validatorFor(method: string, template: string, status: number): ValidateFunction | null {
  const key = `${method.toUpperCase()} ${template} ${status}`;
  if (compiled.has(key)) return compiled.get(key)!;
  const { paths, responses } = load();
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
  const validate = compileSchema(content.schema);
  compiled.set(key, validate);
  return validate;
}

/** Compiles a schema of the description, its `#/components/…` references resolved against the loaded document. */
function compileSchema(schema: unknown): ValidateFunction {
  return load().ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${COMPONENTS_ID}#/components/`)) as object);
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
export function checkGithubAnswer(method: string, path: string, status: number, body: unknown): SchemaCheck {
  const template = path.includes('{') ? path : findTemplate(method, path);
  if (!template) throw new Error(`GitHub's OpenAPI description has no route for ${method.toUpperCase()} ${path}`);
  const validate = validatorFor(method, template, status);
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
export function checkGithubSchema(name: string, body: unknown): SchemaCheck {
  const key = `schema ${name}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = compileSchema({ $ref: `#/components/schemas/${name}` });
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
