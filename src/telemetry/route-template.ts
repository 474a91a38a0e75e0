/**
 * Route templates for metric labels: `/orgs/octo-org/migrations/4242/archive` becomes
 * `/orgs/{org}/migrations/{id}/archive`. A label per raw path would create one time series per org,
 * repository and migration id (unbounded cardinality), so every segment that names something is replaced.
 *
 * The rule is structural, not a table of routes: the segment(s) after a known collection name are
 * identifiers; any other segment is kept only when it looks like a fixed word (`archive`, `v2`,
 * `large_files`); anything else (numbers, dotted or dashed ids) becomes `{id}`. Google's custom methods
 * (`…/buckets:createAsync`, `…/operations/x:cancel`) keep their method suffix.
 */

/** Collection name → placeholder(s) for the segment(s) that follow it. */
const COLLECTIONS: Readonly<Record<string, readonly string[]>> = {
  orgs: ['{org}'],
  users: ['{user}'],
  // `/repos/{owner}/{repo}` at the top; `/orgs/{org}/migrations/{id}/repos/{repo}` below it.
  repos: ['{repo}'],
  networks: ['{owner}', '{repo}'],
  migrations: ['{id}'],
  hooks: ['{id}'],
  deliveries: ['{id}'],
  authors: ['{id}'],
  projects: ['{project}'],
  locations: ['{location}'],
  keys: ['{key}'],
  buckets: ['{bucket}'],
  logs: ['{log}'],
  operations: ['{operation}'],
  managedZones: ['{zone}'],
  changes: ['{change}'],
  rrsets: ['{name}', '{type}'],
};

const FIXED_WORD = /^(v\d+|[a-z][a-zA-Z_]*)$/;

export function routeTemplate(path: string): string {
  if (path === '(other origin)') return path;
  const segments = path.split('/').filter((s) => s.length > 0);
  const out: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const [name, method] = splitMethod(segments[i]);
    const placeholders = i === 0 && name === 'repos' ? ['{owner}', '{repo}'] : COLLECTIONS[name];
    out.push(FIXED_WORD.test(name) ? segments[i] : `{id}${method}`);
    if (!placeholders || method) continue;
    for (const placeholder of placeholders) {
      if (i + 1 >= segments.length) break;
      i++;
      out.push(`${placeholder}${splitMethod(segments[i])[1]}`);
    }
  }
  return `/${out.join('/')}`;
}

/** `name:method` → [`name`, `:method`]; a method suffix is a fixed word too (else dropped). */
function splitMethod(segment: string): [string, string] {
  const colon = segment.indexOf(':');
  if (colon < 0) return [segment, ''];
  const method = segment.slice(colon + 1);
  return [segment.slice(0, colon), FIXED_WORD.test(method) ? `:${method}` : ''];
}
