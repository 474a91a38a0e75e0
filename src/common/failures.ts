/**
 * The failure taxonomy: every failure type longhaul raises or reacts to, each named once, with its one
 * classification and what it means. The HTTP core, the workflow kit, the processes, the CLI and the docs' table
 * (docs/failures.md, checked by a unit test) all read this registry; none keeps a list of its own.
 *
 * A type's `handling` says how the failure is met:
 * - `permanent`: the answer is final; retrying cannot help, the call (or the process) fails at once;
 * - `wait-as-told`: the server said how long to wait (a rate limit); the retry comes after that wait;
 * - `back-off`: transient trouble (a 5xx, a reset connection); the activity retries with backoff;
 * - `outage`: the activity gave up on transient trouble, but the service may answer later: recurring work waits it
 *   out within its outage budget, and no process treats it as a final answer.
 *
 * Pure and deterministic: imported by workflows and activities alike.
 */

/** How a failure is met: see the module's comment. */
export type FailureHandling = 'permanent' | 'wait-as-told' | 'back-off' | 'outage';

/** One failure type: its stable name (what `nonRetryableErrorTypes` and callers match on), handling and meaning. */
export interface FailureSpec {
  readonly type: string;
  readonly handling: FailureHandling;
  /** One line for the docs' table: what happened. */
  readonly meaning: string;
}

/** A group of failure types: the names code uses (`FailureType.NotFound`) and each type's spec. */
export type FailureGroup = Readonly<Record<string, FailureSpec>>;

/**
 * The layers' failure types, grouped by who raises them. A group's keys are the names code uses
 * (`FailureType.NotFound`). Each process's own groups are in its folder (`src/processes/<name>/failures.ts`, made
 * by `failureGroup` below); together they are the registry.
 */
export const FAILURES = {
  /** The HTTP core (`src/http`): what an answer, or its absence, means. */
  http: {
    BadRequest: { type: 'BadRequestError', handling: 'permanent', meaning: '400 (Google `INVALID_ARGUMENT`): the request is not valid' },
    Authentication: { type: 'AuthenticationError', handling: 'permanent', meaning: '401 (Google `UNAUTHENTICATED`): the credential is missing, wrong or expired' },
    Forbidden: { type: 'ForbiddenError', handling: 'permanent', meaning: '403 that is not a rate limit (Google `PERMISSION_DENIED`): not allowed' },
    NotFound: { type: 'NotFoundError', handling: 'permanent', meaning: '404 (Google `NOT_FOUND`): no such resource, or not visible to the credential' },
    Conflict: { type: 'ConflictError', handling: 'permanent', meaning: '409: the resource is in a state that refuses the call' },
    Gone: { type: 'GoneError', handling: 'permanent', meaning: '410: the resource existed and is gone' },
    ValidationFailed: { type: 'ValidationFailedError', handling: 'permanent', meaning: '422: the API refused the request body' },
    ClientError: { type: 'ClientError', handling: 'permanent', meaning: 'another 4xx (405, 451, …) that no retry changes' },
    AlreadyExists: { type: 'AlreadyExistsError', handling: 'permanent', meaning: 'Google `ALREADY_EXISTS`: the resource to create is there' },
    FailedPrecondition: { type: 'FailedPreconditionError', handling: 'permanent', meaning: 'Google `FAILED_PRECONDITION`: the resource is not in the state the call needs' },
    EtagMismatch: { type: 'EtagMismatchError', handling: 'permanent', meaning: 'Google 409 `ABORTED` on a call with an etag: the resource changed since it was read' },
    UnexpectedResponse: { type: 'UnexpectedResponseError', handling: 'permanent', meaning: 'an answer of a kind the call never gets (no redirect where one is due, a status instead of the archive, a redirect a sink does not follow)' },
    ForeignOrigin: { type: 'ForeignOriginRefusedError', handling: 'permanent', meaning: "the call (its URL, a redirect or a `Link`) leads to another origin than the API's: refused, nothing sent there" },
    OutboundRefused: { type: 'OutboundAddressRefused', handling: 'permanent', meaning: "an address the worker did not configure (a storage redirect, a sink URL, a `Link`) is refused by the outbound policy (not https, or unspecified, link-local, multicast, broadcast, reserved, or loopback/private without reason); `details[0].rule` names the rule, nothing was sent" },
    TooManyRedirects: { type: 'TooManyRedirectsError', handling: 'permanent', meaning: 'the API redirected more than 5 times (a redirect loop)' },
    PrimaryRateLimit: { type: 'PrimaryRateLimitError', handling: 'wait-as-told', meaning: "the rate-limit window is spent (`x-ratelimit-remaining: 0`): retried after its reset, on the server's clock" },
    SecondaryRateLimit: { type: 'SecondaryRateLimitError', handling: 'wait-as-told', meaning: "GitHub's secondary limit (or a bare 429): retried after `retry-after`, else 60 s doubling" },
    ResourceExhausted: { type: 'ResourceExhaustedError', handling: 'wait-as-told', meaning: 'Google 429 `RESOURCE_EXHAUSTED`: retried after `retry-after` / `RetryInfo`' },
    Server: { type: 'ServerError', handling: 'back-off', meaning: '5xx: the service is in trouble; retried with backoff' },
    Network: { type: 'NetworkError', handling: 'back-off', meaning: 'no answer (reset, timeout, DNS): retried with backoff' },
    TransientExhausted: { type: 'TransientRetriesExhaustedError', handling: 'outage', meaning: 'the HTTP core stopped retrying 5xx or network failures: an outage' },
    RateLimitExhausted: { type: 'RateLimitRetriesExhaustedError', handling: 'outage', meaning: 'the HTTP core stopped retrying a rate limit: waiting longer would help' },
    MalformedAnswer: { type: 'MalformedAnswer', handling: 'outage', meaning: "a success status whose body is not the API's answer (a proxy's HTML page, truncated JSON, a field missing, a body past its cap)" },
  },
  /** Any activity, as workflows read its failure (`src/common/activity-failures.ts`). */
  activity: {
    Timeout: { type: 'ActivityTimeout', handling: 'outage', meaning: 'an activity timed out (start-to-close or heartbeat): the call may have happened' },
  },
  /** Recurring work's outage watch (`src/workflows/kit/outage-watch.ts`). */
  outage: {
    OutageBudgetExhausted: { type: 'OutageBudgetExhausted', handling: 'permanent', meaning: 'recurring work stayed in an outage past its outage budget: the run fails' },
  },
  /** Quiet polls (`src/common/quiet-poll-schedule.ts`): one activity that polls until something changes. */
  quietPoll: {
    Unchanged: { type: 'QuietPollUnchanged', handling: 'wait-as-told', meaning: "a poll saw no change: Temporal retries at the schedule's next poll (benign, logged at debug)" },
    Ended: { type: 'QuietPollEnded', handling: 'permanent', meaning: "the poll failed; its cause is the poll's own failure, which the workflow judges" },
  },
  /** Named credentials (`src/common/credential.ts`, `src/activities/context.ts`, `src/activities/named-secrets.ts`). */
  credential: {
    Invalid: { type: 'InvalidCredential', handling: 'permanent', meaning: 'a credential name in the input is not a valid name' },
    Unknown: { type: 'UnknownCredential', handling: 'permanent', meaning: 'no credential (GitHub, import or sink secret) of that name is configured on the worker; the message lists the configured names' },
    Unreadable: { type: 'CredentialReferenceError', handling: 'permanent', meaning: 'a named import credential is configured but cannot be read on the worker (a variable or `_FILE` missing or unreadable)' },
    ReferenceRefused: { type: 'CredentialReferenceRefused', handling: 'permanent', meaning: 'an input named an environment variable or a file (`env:…`, `file:…`, a sink\'s `secretEnv`) instead of a credential configured on the workers: refused, nothing read' },
  },
  /** Paths from input (`src/common/data-paths.ts`, `src/activities/data-dir.ts`). */
  path: {
    OutsideDataDir: { type: 'PathOutsideDataDir', handling: 'permanent', meaning: "a path from input is absolute, climbs out with `..`, or resolves (links followed) outside the worker's data directory: refused, nothing written" },
  },
  /** The migration archive's download (the archive module, `src/archive/storage/checks.ts`). */
  archive: {
    NotAnArchive: { type: 'ArchiveNotAnArchive', handling: 'permanent', meaning: 'storage answered with something that is not the archive (HTML, JSON, no gzip magic)' },
    LocationUnusable: { type: 'ArchiveLocationUnusable', handling: 'permanent', meaning: 'the archive URL (Location or a storage redirect) is not an http(s) URL' },
    RedirectLoop: { type: 'ArchiveRedirectLoop', handling: 'permanent', meaning: 'storage redirects in a circle, or more than 5 times' },
    TransferBroken: { type: 'ArchiveTransferBroken', handling: 'permanent', meaning: 'the transfer kept breaking off without making progress' },
    AccessDenied: { type: 'ArchiveAccessDenied', handling: 'permanent', meaning: 'storage refused the pre-signed URL even after fresh ones (403)' },
    Gone: { type: 'ArchiveGone', handling: 'permanent', meaning: 'storage has no such object (the archive was deleted)' },
    Changed: { type: 'ArchiveChanged', handling: 'back-off', meaning: 'storage answered another object (length or validator) than the one an upload began with: the next attempt starts over from the archive as it is' },
    WriteFailed: { type: 'ArchiveWriteFailed', handling: 'back-off', meaning: 'writing the `.part` file failed; the next attempt resumes from the bytes kept' },
    Busy: { type: 'ArchiveDownloadBusy', handling: 'back-off', meaning: "another live process holds the download's lock file" },
  },
  /** Archive uploads to an object store (`src/archive/object-store/errors.ts`). */
  objectStore: {
    DestinationInvalid: { type: 'ArchiveDestinationInvalid', handling: 'permanent', meaning: 'the destination is not one (unknown scheme, bad bucket name)' },
    DestinationCredential: { type: 'ArchiveDestinationCredential', handling: 'permanent', meaning: 'the destination URL carries a credential' },
    BucketNotFound: { type: 'ArchiveBucketNotFound', handling: 'permanent', meaning: 'the bucket or container does not exist' },
    AccessDenied: { type: 'ArchiveStoreAccessDenied', handling: 'permanent', meaning: 'the store refused the credentials or the operation (401/403)' },
    StoreNotConfigured: { type: 'ArchiveStoreNotConfigured', handling: 'permanent', meaning: 'the worker has no usable configuration for the store (no region, no account)' },
    StoreUnreachable: { type: 'ArchiveStoreUnreachable', handling: 'permanent', meaning: "the check of the destination before the export failed transiently past the outage budget (nothing was started)" },
    SizeMismatch: { type: 'ArchiveSizeMismatch', handling: 'permanent', meaning: 'the source delivered more or fewer bytes than announced' },
  },
} as const satisfies Record<string, Record<string, FailureSpec>>;

/** Who raises each layer group's failures: the "Raised by" column of docs/failures.md. */
const LAYER_RAISED_BY: Readonly<Record<keyof typeof FAILURES, string>> = {
  http: 'HTTP core',
  activity: 'any activity',
  outage: 'recurring runs',
  quietPoll: 'quiet polls',
  credential: 'credentials',
  path: 'data paths',
  archive: 'archive download',
  objectStore: 'archive upload',
};

/** A group of the registry: its name, who raises it (the docs' words) and its types. */
export interface RegisteredGroup {
  readonly name: string;
  readonly raisedBy: string;
  readonly specs: FailureGroup;
}

/**
 * The registry: the layers' groups, then each process's as its `failures.ts` is loaded. Loading is what completes
 * it, and it is the same wherever longhaul runs: the workflow bundle's entry loads every process's `failures.ts`
 * before any workflow runs (`workflowsEntry`, src/processes/index.ts), and the worker and the `longhaul` program load every
 * process's descriptor (src/processes/index.ts), which holds its groups. So `meansOutage` judges a process's type
 * (a feed's `FeedCursorStopping`, a sink's `SinkUnavailable`) in the sandbox as in an activity. Module state in
 * the sandbox is per workflow and written only while modules load: deterministic.
 */
const GROUPS = new Map<string, RegisteredGroup>();
const BY_TYPE = new Map<string, FailureSpec>();
const GROUP_OF = new WeakMap<FailureGroup, RegisteredGroup>();

function register(name: string, raisedBy: string, specs: FailureGroup): void {
  if (GROUPS.get(name)?.specs === specs) return;
  if (GROUPS.has(name)) throw new Error(`failure group ${JSON.stringify(name)} is defined twice: give the new one another name`);
  const clash = Object.values(specs).find((spec) => BY_TYPE.has(spec.type));
  if (clash) throw new Error(`failure type ${JSON.stringify(clash.type)} of group ${JSON.stringify(name)} is already in the registry: a type has one meaning`);
  const group = { name, raisedBy, specs };
  GROUPS.set(name, group);
  GROUP_OF.set(specs, group);
  for (const spec of Object.values(specs)) BY_TYPE.set(spec.type, spec);
}

for (const [name, specs] of Object.entries(FAILURES)) register(name, LAYER_RAISED_BY[name as keyof typeof FAILURES], specs);

/**
 * A process's group of failure types, added to the registry as its module loads (each process's `failures.ts`):
 * `name` is the group's name in the registry (unique), `raisedBy` the docs' words for who raises it. A name or a
 * type already in the registry is refused (a type has one meaning).
 */
export function failureGroup<const G extends Record<string, FailureSpec>>(name: string, raisedBy: string, specs: G): G {
  register(name, raisedBy, specs);
  return specs;
}

/** The registry's entry of a group (its name and who raises it); undefined for a table that is not a group of it. */
export function registeredGroup(specs: FailureGroup): RegisteredGroup | undefined {
  return GROUP_OF.get(specs);
}

/** Every group of the registry, in the order they were added (the layers' first). */
export function failureGroups(): readonly RegisteredGroup[] {
  return [...GROUPS.values()];
}

/** A group's type names by key (`{ NotFound: 'NotFoundError', … }`): what code writes instead of a string. */
export type FailureTypes<G extends FailureGroup> = { readonly [K in keyof G]: G[K]['type'] };

/** The type names of one group of the registry (`failureTypes(FAILURES.http)`, `failureTypes(MIGRATION_FAILURES)`). */
export function failureTypes<G extends FailureGroup>(group: G): FailureTypes<G> {
  return Object.fromEntries(Object.entries(group).map(([key, spec]) => [key, spec.type])) as FailureTypes<G>;
}

/** Every failure type of the registry, in its order. */
export function allFailures(): FailureSpec[] {
  return [...GROUPS.values()].flatMap((group) => Object.values(group.specs));
}

/** How a failure of this type is met; `undefined` for a type not in the registry. */
export function failureHandling(type: string | null | undefined): FailureHandling | undefined {
  return type ? BY_TYPE.get(type)?.handling : undefined;
}

/**
 * Whether a failure of this type means the service may answer later (`back-off` or `outage`): recurring work
 * waits it out, and no workflow takes it for a final answer even when the activity gave up on it.
 */
export function meansOutage(type: string | null | undefined): boolean {
  const handling = failureHandling(type);
  return handling === 'back-off' || handling === 'outage';
}

/** The permanent failure types of a group, in its order (e.g. for `nonRetryableErrorTypes`). */
export function permanentTypes(group: FailureGroup): string[] {
  return Object.values(group).filter((spec) => spec.handling === 'permanent').map((spec) => spec.type);
}

/** The HTTP core's failure types (`FailureType.NotFound` …), for activities and workflows alike. */
export const FailureType = failureTypes(FAILURES.http);
export type FailureTypeName = (typeof FailureType)[keyof typeof FailureType];
