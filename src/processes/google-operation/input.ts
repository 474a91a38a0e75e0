/**
 * Inputs, results and validation of the Google operation workflows. Validation runs in the workflow before
 * any API call (and in the starter before starting one), so a malformed name never reaches Google.
 * Deterministic: no I/O.
 */
import { operationPollProblems, type CancelOutcome, type OutageBounds, type PollBounds } from './model';
import type { CredentialChoice } from '../../common/credential';
import { sendOnceGraceProblems, type SendOnceGraceInput } from '../../common/send-once-grace';

/**
 * How every Google operation workflow polls, waits out outages and recovers an unknown outcome
 * (`sendOnceGraceMs`: default 180 000, twice the call's 60 s timeout plus the server's own cutoff).
 */
export interface OperationRunOptions extends CredentialChoice, SendOnceGraceInput {
  poll?: PollBounds;
  /** How long failed polls (and lookups) are waited out: default 6 h of consecutive failure, backoff 5 s doubling to 3 min. */
  outage?: OutageBounds;
  /** @deprecated The former name of `sendOnceGraceMs`, still read: inputs written before carry it. */
  recoveryGraceMs?: number;
}

export interface ApiKeyDeleteInput extends OperationRunOptions {
  /** `projects/{project}/locations/global/keys/{key}`. */
  name: string;
  /** The etag the caller read; the deletion is refused (EtagMismatchError) if the key changed since. */
  etag?: string;
}

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

export interface LogBucketCreateInput extends OperationRunOptions {
  /** `{projects|organizations|folders|billingAccounts}/{id}/locations/{location}`. */
  parent: string;
  bucketId: string;
  /** 1…3650. */
  retentionDays?: number;
  description?: string;
}

/** Bucket fields an update may set; `updateMask` names which of them to apply. */
export const BUCKET_UPDATE_FIELDS = ['retentionDays', 'description', 'locked', 'analyticsEnabled'] as const;
export type BucketUpdateField = (typeof BUCKET_UPDATE_FIELDS)[number];

export interface LogBucketUpdateInput extends OperationRunOptions {
  /** `{parent}/buckets/{bucketId}`. */
  name: string;
  updateMask: string[];
  retentionDays?: number;
  description?: string;
  locked?: boolean;
  analyticsEnabled?: boolean;
}

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

/** A Cloud DNS resource record set. */
export interface ResourceRecordSet {
  /** Fully qualified, with the trailing dot: `www.example.com.`. */
  name: string;
  type: string;
  /** Seconds. */
  ttl: number;
  rrdatas: string[];
}

export interface DnsChangeInput extends OperationRunOptions {
  project: string;
  /** Managed zone name (not its DNS name). */
  zone: string;
  additions?: ResourceRecordSet[];
  deletions?: ResourceRecordSet[];
}

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

/** Problems with an API key name (`projects/P/locations/global/keys/K`). */
export function apiKeyNameProblems(name: unknown): string[] {
  if (typeof name !== 'string' || name === '') return ['name must be an API key name: projects/PROJECT/locations/global/keys/KEY'];
  const m = /^projects\/([^/]+)\/locations\/([^/]+)\/keys\/([^/]+)$/.exec(name);
  if (!m) return [`name ${q(name)} is not an API key name: expected projects/PROJECT/locations/global/keys/KEY`];
  const problems: string[] = [];
  if (!PROJECT.test(m[1])) problems.push(`project ${q(m[1])} in ${q(name)} is not a project id or number`);
  if (m[2] !== 'global') problems.push(`location ${q(m[2])} in ${q(name)} is not supported: API keys are global resources, the location must be "global"`);
  if (!KEY_ID.test(m[3])) problems.push(`key id ${q(m[3])} in ${q(name)} is not a valid key id`);
  return problems;
}

export function apiKeyDeleteProblems(input: ApiKeyDeleteInput): string[] {
  const problems = apiKeyNameProblems(input?.name);
  if (input?.etag !== undefined && (typeof input.etag !== 'string' || !/^[!-~]+$/.test(input.etag))) {
    problems.push('etag, when given, must be the etag read from the key (printable ASCII, no spaces)');
  }
  return [...problems, ...runOptionProblems(input)];
}

/** Parses a bucket parent; undefined when it is not one of the four forms. */
export function parseBucketParent(parent: string): { kind: string; id: string; location: string } | undefined {
  const m = /^([A-Za-z]+)\/([^/]+)\/locations\/([^/]+)$/.exec(parent);
  return m ? { kind: m[1], id: m[2], location: m[3] } : undefined;
}

/** Problems with a bucket parent (`projects/P/locations/L` or the organizations/folders/billingAccounts forms). */
export function bucketParentProblems(parent: unknown, field = 'parent'): string[] {
  const expected = `${BUCKET_PARENT_KINDS.map((k) => `${k}/ID`).join(' | ')} followed by /locations/LOCATION`;
  if (typeof parent !== 'string' || parent === '') return [`${field} must be a bucket parent: ${expected}`];
  const p = parseBucketParent(parent);
  if (!p) return [`${field} ${q(parent)} is not a bucket parent: expected ${expected}`];
  const problems: string[] = [];
  if (!(BUCKET_PARENT_KINDS as readonly string[]).includes(p.kind)) problems.push(`${field} ${q(parent)} starts with ${q(p.kind)}; it must be one of ${BUCKET_PARENT_KINDS.join(', ')}`);
  if (!PARENT_ID.test(p.id)) problems.push(`${q(p.id)} in ${field} ${q(parent)} is not a valid ${p.kind} id`);
  if (!LOCATION.test(p.location)) problems.push(`location ${q(p.location)} in ${field} ${q(parent)} is not a location (global, us-central1, eu…)`);
  return problems;
}

function bucketIdProblems(bucketId: unknown): string[] {
  if (typeof bucketId !== 'string' || !BUCKET_ID.test(bucketId)) {
    return [`bucket id ${q(bucketId)} is not valid: up to 100 letters, digits, underscores, hyphens and periods, starting with a letter or digit`];
  }
  return [];
}

function bucketFieldProblems(input: { retentionDays?: unknown; description?: unknown; locked?: unknown; analyticsEnabled?: unknown }): string[] {
  const problems: string[] = [];
  const r = input.retentionDays;
  if (r !== undefined && !(Number.isInteger(r) && (r as number) >= 1 && (r as number) <= 3650)) problems.push('retentionDays must be an integer from 1 to 3650');
  if (input.description !== undefined && (typeof input.description !== 'string' || input.description.length > 8192)) problems.push('description must be a string of at most 8192 characters');
  for (const flag of ['locked', 'analyticsEnabled'] as const) {
    if (input[flag] !== undefined && typeof input[flag] !== 'boolean') problems.push(`${flag} must be true or false`);
  }
  return problems;
}

export function bucketCreateProblems(input: LogBucketCreateInput): string[] {
  return [...bucketParentProblems(input?.parent), ...bucketIdProblems(input?.bucketId), ...bucketFieldProblems(input ?? {}), ...runOptionProblems(input)];
}

/** Splits a bucket name into its parent and id; undefined when it is not `{parent}/buckets/{id}`. */
export function parseBucketName(name: string): { parent: string; bucketId: string } | undefined {
  const m = /^(.+)\/buckets\/([^/]+)$/.exec(name);
  return m ? { parent: m[1], bucketId: m[2] } : undefined;
}

export function bucketUpdateProblems(input: LogBucketUpdateInput): string[] {
  const problems: string[] = [];
  const parsed = typeof input?.name === 'string' ? parseBucketName(input.name) : undefined;
  if (!parsed) problems.push(`name ${q(input?.name)} is not a bucket name: expected PARENT/buckets/BUCKET_ID`);
  else problems.push(...bucketParentProblems(parsed.parent, 'the parent of name'), ...bucketIdProblems(parsed.bucketId));
  const mask = input?.updateMask;
  if (!Array.isArray(mask) || mask.length === 0) problems.push(`updateMask must name at least one field (${BUCKET_UPDATE_FIELDS.join(', ')})`);
  else {
    for (const field of mask) {
      if (!(BUCKET_UPDATE_FIELDS as readonly string[]).includes(field)) problems.push(`updateMask field ${q(field)} is not updatable here (allowed: ${BUCKET_UPDATE_FIELDS.join(', ')})`);
    }
    for (const field of BUCKET_UPDATE_FIELDS) {
      if (input[field] !== undefined && !mask.includes(field)) problems.push(`${field} is set but not in updateMask, so it would be ignored`);
    }
  }
  return [...problems, ...bucketFieldProblems(input ?? {}), ...runOptionProblems(input)];
}

function rrsetProblems(sets: unknown, field: string): string[] {
  if (sets === undefined) return [];
  if (!Array.isArray(sets)) return [`${field} must be an array of record sets`];
  const problems: string[] = [];
  const seen = new Set<string>();
  sets.forEach((s: Partial<ResourceRecordSet>, i) => {
    const at = `${field}[${i}]`;
    if (typeof s?.name !== 'string' || !DNS_NAME.test(s.name)) problems.push(`${at}.name ${q(s?.name)} must be a fully qualified DNS name ending in "."`);
    if (typeof s?.type !== 'string' || !DNS_RECORD_TYPES.includes(s.type)) problems.push(`${at}.type ${q(s?.type)} is not a record type (${DNS_RECORD_TYPES.join(', ')})`);
    if (!Number.isInteger(s?.ttl) || (s.ttl as number) < 0 || (s.ttl as number) > 2_147_483_647) problems.push(`${at}.ttl must be a non-negative integer number of seconds`);
    if (!Array.isArray(s?.rrdatas) || s.rrdatas.length === 0 || s.rrdatas.some((d) => typeof d !== 'string' || d.trim() === '')) {
      problems.push(`${at}.rrdatas must list at least one record value`);
    }
    const key = `${String(s?.name).toLowerCase()} ${s?.type}`;
    if (seen.has(key)) problems.push(`${at} repeats ${key}`);
    seen.add(key);
  });
  return problems;
}

export function dnsChangeProblems(input: DnsChangeInput): string[] {
  const problems: string[] = [];
  if (typeof input?.project !== 'string' || !PROJECT.test(input.project)) problems.push(`project ${q(input?.project)} is not a project id or number`);
  if (typeof input?.zone !== 'string' || !ZONE.test(input.zone)) problems.push(`zone ${q(input?.zone)} is not a managed zone name (lower-case letters, digits and hyphens, starting with a letter)`);
  problems.push(...rrsetProblems(input?.additions, 'additions'), ...rrsetProblems(input?.deletions, 'deletions'));
  if ((input?.additions?.length ?? 0) + (input?.deletions?.length ?? 0) === 0) problems.push('a change needs at least one addition or deletion');
  return [...problems, ...runOptionProblems(input)];
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

/** Problems with the options every Google operation input shares. */
function runOptionProblems(input: OperationRunOptions | undefined): string[] {
  const problems = operationPollProblems(input?.poll, input?.outage);
  problems.push(...sendOnceGraceProblems(input?.sendOnceGraceMs, { name: 'recoveryGraceMs', value: input?.recoveryGraceMs }, 60 * 60 * 1000));
  return problems;
}
