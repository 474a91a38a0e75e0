/**
 * Where a feed's new events go (the sink of a feed's Schedule or one-off poll): the configuration,
 * its validation (credentials in a sink URL are refused: the secret is named, never carried) and the
 * starter's `--sink` syntax.
 *
 * Deterministic: shared by workflows, activities, the starter and tests.
 */
import * as v from 'valibot';
import type { ApplicationFailure } from '@temporalio/common';
import { credentialInUrlProblems } from '../../common/url-secrets';
import { problemsOf, shape } from '../../common/schema';
import { configuredNameSchema, credentialReferenceRefused, DEFAULT_SINK_SECRET, DEFAULT_SINK_SECRET_VARIABLE, SINK_SECRETS_SETTING } from '../../common/credential';
import { dataPathRefusal } from '../../common/data-paths';

/** Where a feed's new events go. Secrets are named, never carried: the activity reads them itself. */
export type SinkConfig = v.InferInput<typeof SinkSchema>;

export { DEFAULT_SINK_SECRET };
export const DEFAULT_LOG_ID = 'longhaul-feeds';

/** The default JSON-lines file of a feed: `feeds/repos_octo-org_alpha_events.jsonl`. */
export function defaultSinkFile(feedPath: string): string {
  return `feeds/${feedPath.replace(/^\//, '').replace(/\//g, '_')}.jsonl`;
}

/** The URL of an http sink, or undefined when it is none. */
function parsedUrl(url: unknown): URL | undefined {
  try {
    return new URL(url as string);
  } catch {
    return undefined;
  }
}

/** A sink configuration; its messages name the sink's field in words (`http sink url`, `logId`). */
export const SinkSchema = v.variant(
  'kind',
  [
    shape({
      kind: v.literal('file'),
      /**
       * JSON-lines file, relative to the worker's data directory (absolute paths and `..` are refused, and links
       * leading out of it: `sinkTrustRefusal`, `activities/data-dir.ts`). Default `feeds/<feed>.jsonl`.
       */
      path: v.optional(v.pipe(v.string('{=}file sink path must be a non-empty string'), v.check((path) => path.trim() !== '', '{=}file sink path must be a non-empty string'))),
    }),
    shape({
      kind: v.literal('http'),
      url: v.pipe(
        v.custom<string>((url) => parsedUrl(url) !== undefined, (issue) => `{=}http sink url ${JSON.stringify(issue.input)} is not a URL`),
        v.rawCheck(({ dataset, addIssue }) => {
          if (!dataset.typed) return;
          if (!['http:', 'https:'].includes(parsedUrl(dataset.value)!.protocol)) addIssue({ message: '{=}http sink url must be http(s)' });
          for (const message of credentialInUrlProblems(dataset.value, 'the http sink url')) addIssue({ message: `{=}${message}` });
        }),
      ),
      /**
       * The name of the HMAC-SHA256 signing secret, configured on the workers: `default` (`LONGHAUL_SINK_SECRET`)
       * unless given, or one of `LONGHAUL_SINK_SECRETS` (`LONGHAUL_SINK_<NAME>_SECRET` or its `_FILE`).
       */
      secret: v.optional(configuredNameSchema('a sink signing secret', SINK_SECRETS_SETTING)),
      /**
       * @deprecated 0.4.0's way: the environment variable holding the secret, which let an input pick any variable
       * of the worker. Only `LONGHAUL_SINK_SECRET` (the default secret's variable) is still read, as `default`;
       * any other is refused (`sinkTrustRefusal`). Kept in the schema so Schedules written before still parse.
       */
      secretEnv: v.optional(v.custom<string>((name) => /^[A-Z_][A-Z0-9_]*$/.test(name as string), '{=}secretEnv must be an environment variable name')),
    }),
    shape({
      kind: v.literal('logging'),
      /** `projects/P`, `organizations/O`, `folders/F` or `billingAccounts/B`. */
      parent: v.custom<string>(
        (parent) => /^(projects|organizations|folders|billingAccounts)\/[^/]+$/.test((parent ?? '') as string),
        '{=}logging sink parent must be projects/P, organizations/O, folders/F or billingAccounts/B',
      ),
      /** Log id under the parent. Default `longhaul-feeds`. */
      logId: v.optional(v.custom<string>((id) => /^[A-Za-z0-9._\-/]{1,512}$/.test(id as string), '{=}logId may contain letters, digits, . _ - / only')),
    }),
  ],
  (issue) => (issue.expected === 'Object' ? '{=}sink must be an object' : `{=}unknown sink kind ${JSON.stringify(issue.input)}`),
);

/** Every problem with a sink configuration (empty when valid), the trust rules included (`sinkTrustRefusal`). */
export function sinkProblems(sink: unknown): string[] {
  const problems = problemsOf(SinkSchema, sink);
  const refused = problems.length === 0 ? sinkTrustRefusal(sink as SinkConfig) : undefined;
  return refused ? [refused.message] : problems;
}

/** The secret an http sink is signed with: `secret`, else `default` (also for the default's own `secretEnv`). */
export function sinkSecretName(sink: { secret?: string; secretEnv?: string }): string {
  return sink.secret ?? DEFAULT_SINK_SECRET;
}

/**
 * What a sink may no longer carry, as the typed refusal: a file `path` outside the data directory
 * (`PathOutsideDataDir`), or a `secretEnv` other than the default secret's variable
 * (`CredentialReferenceRefused`, saying which command fixes a Schedule that carries one). Undefined when none.
 */
export function sinkTrustRefusal(sink: SinkConfig | undefined, feed = 'FEED'): ApplicationFailure | undefined {
  if (sink?.kind === 'file') return dataPathRefusal(sink.path, 'file sink path');
  if (sink?.kind === 'http' && sink.secretEnv !== undefined && sink.secretEnv !== DEFAULT_SINK_SECRET_VARIABLE) {
    const refused = credentialReferenceRefused('the http sink\'s secretEnv', SINK_SECRETS_SETTING);
    refused.message +=
      `. A Schedule written by 0.4.0 with --sink-secret-env fails each run until it is updated: configure the secret as ` +
      `LONGHAUL_SINK_SECRETS=NAME with LONGHAUL_SINK_<NAME>_SECRET (or _FILE) on the workers, then run ` +
      `longhaul feed-schedule --feed ${feed} --sink ${sink.url} --sink-secret NAME`;
    return refused;
  }
  return undefined;
}

/**
 * Parses the starter's `--sink` value: `file`, `file:PATH`, an `http(s)://` URL, or
 * `logging:projects/P[/logs/LOG_ID]`.
 */
export function parseSinkSpec(spec: string, secret?: string): SinkConfig | { problem: string } {
  const s = spec.trim();
  if (s === 'file') return { kind: 'file' };
  if (s.startsWith('file:')) return { kind: 'file', path: s.slice('file:'.length) };
  if (/^https?:\/\//.test(s)) return { kind: 'http', url: s, ...(secret ? { secret } : {}) };
  const logging = /^logging:((?:projects|organizations|folders|billingAccounts)\/[^/]+)(?:\/logs\/(.+))?$/.exec(s);
  if (logging) return { kind: 'logging', parent: logging[1], ...(logging[2] ? { logId: logging[2] } : {}) };
  return { problem: `--sink ${JSON.stringify(spec)}: expected file, file:PATH, http(s)://URL or logging:projects/P[/logs/LOG_ID]` };
}
