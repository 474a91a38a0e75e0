/**
 * Where a feed's new events go (the sink of a feed's Schedule or one-off poll): the configuration,
 * its validation (credentials in a sink URL are refused: the secret is named, never carried) and the
 * starter's `--sink` syntax.
 *
 * Deterministic: shared by workflows, activities, the starter and tests.
 */
import { credentialInUrlProblems } from '../../common/url-secrets';

/** Where a feed's new events go. Secrets are named, never carried: the activity reads them itself. */
export type SinkConfig =
  | {
      kind: 'file';
      /** JSON-lines file; relative paths resolve under the worker's data directory. Default `feeds/<feed>.jsonl`. */
      path?: string;
    }
  | {
      kind: 'http';
      url: string;
      /** Environment variable (or `<NAME>_FILE`) holding the HMAC-SHA256 secret. Default `LONGHAUL_SINK_SECRET`. */
      secretEnv?: string;
    }
  | {
      kind: 'logging';
      /** `projects/P`, `organizations/O`, `folders/F` or `billingAccounts/B`. */
      parent: string;
      /** Log id under the parent. Default `longhaul-feeds`. */
      logId?: string;
    };

export const DEFAULT_SINK_SECRET_ENV = 'LONGHAUL_SINK_SECRET';
export const DEFAULT_LOG_ID = 'longhaul-feeds';

/** The default JSON-lines file of a feed: `feeds/repos_octo-org_alpha_events.jsonl`. */
export function defaultSinkFile(feedPath: string): string {
  return `feeds/${feedPath.replace(/^\//, '').replace(/\//g, '_')}.jsonl`;
}

/** Every problem with a sink configuration (empty when valid). */
export function sinkProblems(sink: SinkConfig): string[] {
  const problems: string[] = [];
  if (!sink || typeof sink !== 'object') return ['sink must be an object'];
  switch (sink.kind) {
    case 'file':
      if (sink.path !== undefined && (typeof sink.path !== 'string' || sink.path.trim() === '')) problems.push('file sink path must be a non-empty string');
      break;
    case 'http': {
      let url: URL | undefined;
      try {
        url = new URL(sink.url);
      } catch {
        problems.push(`http sink url ${JSON.stringify(sink.url)} is not a URL`);
      }
      if (url && url.protocol !== 'http:' && url.protocol !== 'https:') problems.push('http sink url must be http(s)');
      if (url) problems.push(...credentialInUrlProblems(sink.url, 'the http sink url'));
      if (sink.secretEnv !== undefined && !/^[A-Z_][A-Z0-9_]*$/.test(sink.secretEnv)) problems.push('secretEnv must be an environment variable name');
      break;
    }
    case 'logging':
      if (!/^(projects|organizations|folders|billingAccounts)\/[^/]+$/.test(sink.parent ?? '')) {
        problems.push('logging sink parent must be projects/P, organizations/O, folders/F or billingAccounts/B');
      }
      if (sink.logId !== undefined && !/^[A-Za-z0-9._\-/]{1,512}$/.test(sink.logId)) problems.push('logId may contain letters, digits, . _ - / only');
      break;
    default:
      problems.push(`unknown sink kind ${JSON.stringify((sink as { kind?: unknown }).kind)}`);
  }
  return problems;
}

/**
 * Parses the starter's `--sink` value: `file`, `file:PATH`, an `http(s)://` URL, or
 * `logging:projects/P[/logs/LOG_ID]`.
 */
export function parseSinkSpec(spec: string, secretEnv?: string): SinkConfig | { problem: string } {
  const s = spec.trim();
  if (s === 'file') return { kind: 'file' };
  if (s.startsWith('file:')) return { kind: 'file', path: s.slice('file:'.length) };
  if (/^https?:\/\//.test(s)) return { kind: 'http', url: s, ...(secretEnv ? { secretEnv } : {}) };
  const logging = /^logging:((?:projects|organizations|folders|billingAccounts)\/[^/]+)(?:\/logs\/(.+))?$/.exec(s);
  if (logging) return { kind: 'logging', parent: logging[1], ...(logging[2] ? { logId: logging[2] } : {}) };
  return { problem: `--sink ${JSON.stringify(spec)}: expected file, file:PATH, http(s)://URL or logging:projects/P[/logs/LOG_ID]` };
}
