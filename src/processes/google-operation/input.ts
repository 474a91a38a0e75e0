/**
 * Inputs, results and validation of the Google operation workflows. Validation runs in the workflow before
 * any API call (and in the starter before starting one), so a malformed name never reaches Google.
 * Deterministic: no I/O.
 */
import * as v from 'valibot';
import { OperationPollEntries, operationPollCeiling, type CancelOutcome } from './model';
import { firstProblem, hasIssuesAt, notBoth, object, problemsOf, rule, wholeBetween } from '../../common/schema';
import type { CredentialChoice } from '../../common/credential';
import { sendOnceGraceSchema } from '../../common/send-once-grace';

/**
 * How every Google operation workflow polls, waits out outages and recovers an unknown outcome. Each input's
 * schema ends with `operationPollCeiling()` and `notBoth('sendOnceGraceMs', 'recoveryGraceMs')`.
 */
const RUN_OPTIONS = {
  ...OperationPollEntries,
  /**
   * @format milliseconds — after a mutating call whose outcome is unknown, how long lookups for what it did go
   * on before it is sent again. Default 180 000 (twice the call's 60 s timeout plus the server's own cutoff).
   */
  sendOnceGraceMs: sendOnceGraceSchema(60 * 60 * 1000),
  /** @deprecated The former name of `sendOnceGraceMs`, still read: inputs written before carry it. */
  recoveryGraceMs: sendOnceGraceSchema(60 * 60 * 1000),
};

export type OperationRunOptions = v.InferInput<ReturnType<typeof object<typeof RUN_OPTIONS>>> & CredentialChoice;

export type ApiKeyDeleteInput = v.InferInput<typeof ApiKeyDeleteInputSchema> & CredentialChoice;

export interface ApiKeyDeleteResult {
  name: string;
  /** The deletion's operation (absent when an earlier try's deletion was found instead). */
  operation?: string;
  /** The deleted key as the operation's response returned it (`name`, `uid`, `displayName`, `deleteTime`…). */
  key?: Record<string, unknown>;
  deleteTime?: string;
  /** Until when the key can still be retrieved (and undeleted): 30 days after deletion. */
  retrievableUntil?: string;
  note: string;
}

export type LogBucketCreateInput = v.InferInput<typeof LogBucketCreateInputSchema> & CredentialChoice;

/** Bucket fields an update may set; `updateMask` names which of them to apply. */
export const BUCKET_UPDATE_FIELDS = ['retentionDays', 'description', 'locked', 'analyticsEnabled'] as const;
export type BucketUpdateField = (typeof BUCKET_UPDATE_FIELDS)[number];

export type LogBucketUpdateInput = v.InferInput<typeof LogBucketUpdateInputSchema> & CredentialChoice;

export interface LogBucketResult {
  /** The bucket's full name. */
  bucket: string;
  operation: string;
  /** The operation's final state. */
  state: string;
  /** The bucket as the operation's response returned it. */
  response?: Record<string, unknown>;
  /** Present when the workflow was cancelled but the operation finished anyway. */
  cancel?: CancelOutcome;
}

export type DnsChangeInput = v.InferInput<typeof DnsChangeInputSchema> & CredentialChoice;

export interface DnsChangeResult {
  project: string;
  zone: string;
  changeId: string;
  status: string;
  additions: ResourceRecordSet[];
  deletions: ResourceRecordSet[];
}

const PROJECT = /^(?:[a-z][a-z0-9-]{4,28}[a-z0-9]|\d{1,20})$/;
const KEY_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const PARENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const LOCATION = /^(?:global|[a-z]{2,}(?:-[a-z0-9]+)*)$/;
const BUCKET_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const ZONE = /^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_NAME = /^(?:\*\.)?(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?\.)+$/;
export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CAA', 'CNAME', 'DNSKEY', 'DS', 'HTTPS', 'MX', 'NAPTR', 'NS', 'PTR', 'SOA', 'SPF', 'SRV', 'SSHFP', 'SVCB', 'TLSA', 'TXT'];

/** Bucket parent forms of Cloud Logging v2. */
export const BUCKET_PARENT_KINDS = ['projects', 'organizations', 'folders', 'billingAccounts'] as const;

const q = JSON.stringify;
const API_KEY_NAME = /^projects\/([^/]+)\/locations\/([^/]+)\/keys\/([^/]+)$/;
const ETAG = '{path}, when given, must be the etag read from the key (printable ASCII, no spaces)';
const PARENT_FORMS = `${BUCKET_PARENT_KINDS.map((k) => `${k}/ID`).join(' | ')} followed by /locations/LOCATION`;

/** An API key name (`projects/P/locations/global/keys/K`): each part that is wrong is named. */
const ApiKeyNameSchema = firstProblem(
  v.pipe(
    v.string('must be an API key name: projects/PROJECT/locations/global/keys/KEY'),
    v.nonEmpty('must be an API key name: projects/PROJECT/locations/global/keys/KEY'),
    v.regex(API_KEY_NAME, (issue) => `${q(issue.input)} is not an API key name: expected projects/PROJECT/locations/global/keys/KEY`),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const name = dataset.value;
      const [, project, location, key] = API_KEY_NAME.exec(name) ?? [];
      if (!PROJECT.test(project)) addIssue({ message: `{=}project ${q(project)} in ${q(name)} is not a project id or number` });
      if (location !== 'global') addIssue({ message: `{=}location ${q(location)} in ${q(name)} is not supported: API keys are global resources, the location must be "global"` });
      if (!KEY_ID.test(key)) addIssue({ message: `{=}key id ${q(key)} in ${q(name)} is not a valid key id` });
    }),
  ),
);

/** An API key deletion's input. */
export const ApiKeyDeleteInputSchema = v.pipe(
  object(
    {
      /** `projects/{project}/locations/global/keys/{key}`. */
      name: ApiKeyNameSchema,
      /** The etag the caller read; the deletion is refused (EtagMismatchError) if the key changed since. */
      etag: v.optional(v.pipe(v.string(ETAG), v.regex(/^[!-~]+$/, ETAG))),
      ...RUN_OPTIONS,
    },
    'input must be an object',
  ),
  operationPollCeiling(),
  notBoth('sendOnceGraceMs', 'recoveryGraceMs'),
);

export function apiKeyDeleteProblems(input: unknown): string[] {
  return problemsOf(ApiKeyDeleteInputSchema, input);
}

/** Parses a bucket parent; undefined when it is not one of the four forms. */
export function parseBucketParent(parent: string): { kind: string; id: string; location: string } | undefined {
  const m = /^([A-Za-z]+)\/([^/]+)\/locations\/([^/]+)$/.exec(parent);
  return m ? { kind: m[1], id: m[2], location: m[3] } : undefined;
}

/** Problems with a bucket parent (`projects/P/locations/L` or the organizations/folders/billingAccounts forms). */
export function bucketParentProblems(parent: string, field: string): string[] {
  const p = parseBucketParent(parent);
  if (!p) return [`${field} ${q(parent)} is not a bucket parent: expected ${PARENT_FORMS}`];
  const problems: string[] = [];
  if (!(BUCKET_PARENT_KINDS as readonly string[]).includes(p.kind)) problems.push(`${field} ${q(parent)} starts with ${q(p.kind)}; it must be one of ${BUCKET_PARENT_KINDS.join(', ')}`);
  if (!PARENT_ID.test(p.id)) problems.push(`${q(p.id)} in ${field} ${q(parent)} is not a valid ${p.kind} id`);
  if (!LOCATION.test(p.location)) problems.push(`location ${q(p.location)} in ${field} ${q(parent)} is not a location (global, us-central1, eu…)`);
  return problems;
}

const BucketIdSchema = v.custom<string>(
  (id) => typeof id === 'string' && BUCKET_ID.test(id),
  (issue) => `{=}bucket id ${q(issue.input)} is not valid: up to 100 letters, digits, underscores, hyphens and periods, starting with a letter or digit`,
);

/** The bucket fields a creation or an update may set. */
const BUCKET_FIELDS = {
  /** 1…3650. */
  retentionDays: v.optional(wholeBetween(1, 3650, 'must be an integer from 1 to 3650')),
  description: v.optional(v.pipe(v.string('must be a string of at most 8192 characters'), v.maxLength(8192, 'must be a string of at most 8192 characters'))),
};

/** A log bucket creation's input. */
export const LogBucketCreateInputSchema = v.pipe(
  object(
    {
      /** `{projects|organizations|folders|billingAccounts}/{id}/locations/{location}`. */
      parent: v.pipe(
        v.custom<string>((parent) => typeof parent === 'string' && parent !== '', `must be a bucket parent: ${PARENT_FORMS}`),
        v.rawCheck(({ dataset, addIssue }) => {
          if (dataset.typed) for (const message of bucketParentProblems(dataset.value, '{path}')) addIssue({ message });
        }),
      ),
      bucketId: BucketIdSchema,
      ...BUCKET_FIELDS,
      ...RUN_OPTIONS,
    },
    'input must be an object',
  ),
  operationPollCeiling(),
  notBoth('sendOnceGraceMs', 'recoveryGraceMs'),
);

export function bucketCreateProblems(input: unknown): string[] {
  return problemsOf(LogBucketCreateInputSchema, input);
}

/** Splits a bucket name into its parent and id; undefined when it is not `{parent}/buckets/{id}`. */
export function parseBucketName(name: string): { parent: string; bucketId: string } | undefined {
  const m = /^(.+)\/buckets\/([^/]+)$/.exec(name);
  return m ? { parent: m[1], bucketId: m[2] } : undefined;
}

/** A log bucket update's input: a bucket name, and the fields `updateMask` names (no other). */
export const LogBucketUpdateInputSchema = v.pipe(
  object(
    {
      /** `{parent}/buckets/{bucketId}`. */
      name: v.pipe(
        v.custom<string>(
          (name) => typeof name === 'string' && parseBucketName(name) !== undefined,
          (issue) => `${q(issue.input)} is not a bucket name: expected PARENT/buckets/BUCKET_ID`,
        ),
        v.rawCheck(({ dataset, addIssue }) => {
          if (!dataset.typed) return;
          const { parent, bucketId } = parseBucketName(dataset.value)!;
          for (const message of bucketParentProblems(parent, 'the parent of name')) addIssue({ message: `{=}${message}` });
          for (const issue of v.safeParse(BucketIdSchema, bucketId).issues ?? []) addIssue({ message: issue.message });
        }),
      ),
      updateMask: v.pipe(
        v.array(
          v.custom<string>(
            (field) => (BUCKET_UPDATE_FIELDS as readonly unknown[]).includes(field),
            (issue) => `{=}updateMask field ${q(issue.input)} is not updatable here (allowed: ${BUCKET_UPDATE_FIELDS.join(', ')})`,
          ),
          `must name at least one field (${BUCKET_UPDATE_FIELDS.join(', ')})`,
        ),
        v.minLength(1, `must name at least one field (${BUCKET_UPDATE_FIELDS.join(', ')})`),
      ),
      ...BUCKET_FIELDS,
      locked: v.optional(v.boolean('must be true or false')),
      analyticsEnabled: v.optional(v.boolean('must be true or false')),
      ...RUN_OPTIONS,
    },
    'input must be an object',
  ),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed || hasIssuesAt(dataset, 'updateMask')) return;
    const input = dataset.value;
    for (const field of BUCKET_UPDATE_FIELDS) {
      if (input[field] !== undefined && !input.updateMask.includes(field)) addIssue({ message: `${field} is set but not in updateMask, so it would be ignored` });
    }
  }),
  operationPollCeiling(),
  notBoth('sendOnceGraceMs', 'recoveryGraceMs'),
);

export function bucketUpdateProblems(input: unknown): string[] {
  return problemsOf(LogBucketUpdateInputSchema, input);
}

const RecordSetSchema = object(
  {
    name: v.custom<string>((name) => typeof name === 'string' && DNS_NAME.test(name), (issue) => `${q(issue.input)} must be a fully qualified DNS name ending in "."`),
    type: v.custom<string>((type) => typeof type === 'string' && DNS_RECORD_TYPES.includes(type), (issue) => `${q(issue.input)} is not a record type (${DNS_RECORD_TYPES.join(', ')})`),
    /** Seconds. */
    ttl: wholeBetween(0, 2_147_483_647, 'must be a non-negative integer number of seconds'),
    rrdatas: v.custom<string[]>(
      (values) => Array.isArray(values) && values.length > 0 && values.every((d) => typeof d === 'string' && d.trim() !== ''),
      'must list at least one record value',
    ),
  },
  'must be a record set',
);

/** A Cloud DNS resource record set: `NAME TYPE TTL RRDATA…`. */
export type ResourceRecordSet = v.InferInput<typeof RecordSetSchema>;

/** Record sets to add or delete: each valid, no name and type twice. */
const RecordSetsSchema = v.optional(
  v.pipe(
    v.array(RecordSetSchema, 'must be an array of record sets'),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const seen = new Set<string>();
      dataset.value.forEach((set, key) => {
        const name = `${set.name.toLowerCase()} ${set.type}`;
        if (seen.has(name)) addIssue({ message: `repeats ${name}`, path: [{ type: 'array', origin: 'value', input: dataset.value, key, value: set }] });
        seen.add(name);
      });
    }),
  ),
);

/** A Cloud DNS change's input: at least one addition or deletion. */
export const DnsChangeInputSchema = v.pipe(
  object(
    {
      project: v.custom<string>((p) => typeof p === 'string' && PROJECT.test(p), (issue) => `${q(issue.input)} is not a project id or number`),
      /** Managed zone name (not its DNS name). */
      zone: v.custom<string>(
        (z) => typeof z === 'string' && ZONE.test(z),
        (issue) => `${q(issue.input)} is not a managed zone name (lower-case letters, digits and hyphens, starting with a letter)`,
      ),
      additions: RecordSetsSchema,
      deletions: RecordSetsSchema,
      ...RUN_OPTIONS,
    },
    'input must be an object',
  ),
  rule(
    ['additions', 'deletions'],
    (input) => (input.additions?.length ?? 0) + (input.deletions?.length ?? 0) > 0,
    'a change needs at least one addition or deletion',
  ),
  operationPollCeiling(),
  notBoth('sendOnceGraceMs', 'recoveryGraceMs'),
);

export function dnsChangeProblems(input: unknown): string[] {
  return problemsOf(DnsChangeInputSchema, input);
}

/**
 * Parses a record set written as `NAME TYPE TTL RRDATA…` (e.g. `www.example.com. A 300 192.0.2.1 192.0.2.2`).
 * Double-quoted values stay one rrdata, quotes included, as TXT records need: `t.example.com. TXT 60 "a b"`.
 */
export function parseRrset(text: string): ResourceRecordSet {
  const tokens = text.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
  if (tokens.length < 4) throw new Error(`record set ${q(text)} must be "NAME TYPE TTL RRDATA…"`);
  const [name = '', type = '', ttl = '', ...rrdatas] = tokens;
  if (!/^\d+$/.test(ttl)) throw new Error(`record set ${q(text)}: TTL ${q(ttl)} must be a number of seconds`);
  return { name, type: type.toUpperCase(), ttl: Number(ttl), rrdatas };
}
