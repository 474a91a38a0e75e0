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

/** Every failure type, grouped by who raises it. A group's keys are the names code uses (`FailureType.NotFound`). */
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
  /** Named credentials (`src/common/credential.ts`, `src/activities/context.ts`). */
  credential: {
    Invalid: { type: 'InvalidCredential', handling: 'permanent', meaning: 'a credential name in the input is not a valid name' },
    Unknown: { type: 'UnknownCredential', handling: 'permanent', meaning: 'no credential (GitHub, import or sink secret) of that name is configured on the worker; the message lists the configured names' },
    ReferenceRefused: { type: 'CredentialReferenceRefused', handling: 'permanent', meaning: 'an input named an environment variable or a file (`env:…`, `file:…`, a sink\'s `secretEnv`) instead of a credential configured on the workers: refused, nothing read' },
  },
  /** Paths from input (`src/common/data-paths.ts`, `src/activities/data-dir.ts`). */
  path: {
    OutsideDataDir: { type: 'PathOutsideDataDir', handling: 'permanent', meaning: "a path from input is absolute, climbs out with `..`, or resolves (links followed) outside the worker's data directory: refused, nothing written" },
  },
  /** The org migration (`src/processes/org-migration/model.ts`). */
  migration: {
    InvalidInput: { type: 'InvalidMigrationInput', handling: 'permanent', meaning: 'the migration input is not valid (nothing was sent)' },
    StartFailed: { type: 'MigrationStartFailed', handling: 'permanent', meaning: 'the export could not be started' },
    StartUnidentifiable: { type: 'MigrationStartUnidentifiable', handling: 'permanent', meaning: "after a start whose outcome is unknown, an export in the attempt window names no repositories this lookup can compare (an API version that leaves them out): it is neither adopted nor started again" },
    ExportFailed: { type: 'MigrationExportFailed', handling: 'permanent', meaning: 'GitHub reports the export failed' },
    TimedOut: { type: 'MigrationTimedOut', handling: 'permanent', meaning: "the export was not done within the poll's total time" },
    PollFailed: { type: 'MigrationPollFailed', handling: 'permanent', meaning: 'polling the export failed permanently, or for the whole outage budget' },
    UnlockFailed: { type: 'MigrationUnlockFailed', handling: 'permanent', meaning: 'some repositories could not be unlocked (`details[0].stillLocked` names them)' },
    ArchiveDeleteFailed: { type: 'MigrationArchiveDeleteFailed', handling: 'permanent', meaning: 'the archive could not be deleted on the server after the download' },
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
  /** The source import (`src/processes/source-import/model.ts`). */
  import: {
    InvalidInput: { type: 'InvalidImportInput', handling: 'permanent', meaning: 'the import input is not valid (nothing was sent)' },
    ApiUnavailable: { type: 'ImportApiUnavailable', handling: 'permanent', meaning: 'the start answered 404/410: the source-import API is not served there (GitHub.com retired it)' },
    StartRejected: { type: 'ImportStartRejected', handling: 'permanent', meaning: 'the start answered 422: the server refused the import' },
    SourceNotFound: { type: 'ImportSourceNotFound', handling: 'permanent', meaning: 'no source control was detected at the source URL' },
    ImportFailed: { type: 'ImportFailed', handling: 'permanent', meaning: 'the import failed on the server, after its restarts' },
    AnswerTimedOut: { type: 'ImportAnswerTimedOut', handling: 'permanent', meaning: 'no answer (credentials, a choice) arrived in time; the import is left waiting on the server' },
    TimedOut: { type: 'ImportTimedOut', handling: 'permanent', meaning: "the import was not done within the poll's total time" },
    PollFailed: { type: 'ImportPollFailed', handling: 'permanent', meaning: 'polls failed permanently or past the outage budget; the import may still run on the server' },
    ImportGone: { type: 'ImportGone', handling: 'permanent', meaning: 'the import no longer exists on the server (cancelled elsewhere?)' },
    InvalidChoice: { type: 'InvalidChoice', handling: 'permanent', meaning: "the answer to a source import's choice is not exactly one offered choice" },
    ChoiceFailed: { type: 'ChoiceFailed', handling: 'permanent', meaning: "an update's PATCH failed (recorded by the server or not, as the message says)" },
    CredentialReference: { type: 'CredentialReferenceError', handling: 'permanent', meaning: 'a named import credential is configured but cannot be read on the worker (a variable or `_FILE` missing or unreadable)' },
    MappingFailed: { type: 'MappingFailed', handling: 'permanent', meaning: 'an author mapping could not be applied' },
  },
  /** The Google operation workflows (`src/processes/google-operation/model.ts`). */
  googleOperation: {
    InvalidInput: { type: 'InvalidGoogleOperationInput', handling: 'permanent', meaning: 'the operation input is not valid (nothing was sent)' },
    OperationFailed: { type: 'GoogleOperationFailed', handling: 'permanent', meaning: 'the operation finished with an error (or a bucket operation ended FAILED)' },
    TimedOut: { type: 'GoogleOperationTimedOut', handling: 'permanent', meaning: "the operation was still running when the poll's total time ran out" },
    PollFailed: { type: 'GoogleOperationPollFailed', handling: 'permanent', meaning: 'polls failed permanently or past the outage budget; the operation may still run' },
    SendFailed: { type: 'GoogleOperationSendFailed', handling: 'permanent', meaning: 'the mutating call could not be made within its tries, or its unknown outcome not resolved' },
  },
  /** Feed polling (`src/processes/feed-poll/model.ts`). */
  feed: {
    InvalidInput: { type: 'InvalidFeedInput', handling: 'permanent', meaning: 'the feed, the poll request or the spool id is not valid' },
    PollFailed: { type: 'FeedPollFailed', handling: 'permanent', meaning: "the feed's cursor failed the poll (its cause says why)" },
    CursorStopping: { type: 'FeedCursorStopping', handling: 'back-off', meaning: "the feed's cursor is stopping or continued as new: the next attempt reaches its next run" },
    SpoolMissing: { type: 'FeedSpoolMissing', handling: 'permanent', meaning: "a poll's events are not in this worker's spool: the cursor stays, the next poll fetches them again" },
  },
  /** The HTTP sink of feed events (`src/processes/feed-poll/activities/sinks/http.ts`). */
  sink: {
    SecretMissing: { type: 'SinkSecretMissing', handling: 'permanent', meaning: 'the HTTP sink has no signing secret on the worker' },
    Rejected: { type: 'SinkRejected', handling: 'permanent', meaning: 'the sink refused the batch (4xx, or a redirect, which is not followed)' },
    Unavailable: { type: 'SinkUnavailable', handling: 'back-off', meaning: 'the sink is unreachable or answered 5xx, 408, 425 or 429' },
  },
  /** Webhook delivery repair (`src/processes/hook-repair/model.ts`). */
  hook: {
    InvalidInput: { type: 'InvalidHookInput', handling: 'permanent', meaning: 'the hook repair input is not valid (nothing was sent)' },
  },
  /** Organization backups (`src/processes/org-backup/model.ts`). */
  backup: {
    InvalidInput: { type: 'InvalidBackupInput', handling: 'permanent', meaning: 'the backup input is not valid (nothing was sent)' },
    ListingFailed: { type: 'BackupListingFailed', handling: 'permanent', meaning: "the organization's repositories could not be listed (the run wrote no manifest)" },
    ExportsFailed: { type: 'BackupExportsFailed', handling: 'permanent', meaning: 'an export failed for a reason halving cannot help (the store, a time bound): the run wrote no manifest' },
  },
  /** The rate governor (`src/processes/rate-governor/model.ts`). */
  governor: {
    InvalidInput: { type: 'InvalidGovernorInput', handling: 'permanent', meaning: "the rate governor's input is not valid (it ends before it grants anything)" },
  },
} as const satisfies Record<string, Record<string, FailureSpec>>;

type Groups = typeof FAILURES;

/** A group's type names by key (`{ NotFound: 'NotFoundError', … }`): what code writes instead of a string. */
export type FailureTypes<G extends Record<string, FailureSpec>> = { readonly [K in keyof G]: G[K]['type'] };

/** The type names of one group of the registry. */
export function failureTypes<N extends keyof Groups>(group: N): FailureTypes<Groups[N]> {
  return Object.fromEntries(Object.entries(FAILURES[group]).map(([key, spec]) => [key, spec.type])) as FailureTypes<Groups[N]>;
}

/** Every failure type of the registry, in its order. */
export const ALL_FAILURES: readonly FailureSpec[] = Object.values(FAILURES).flatMap((group) => Object.values(group) as FailureSpec[]);

const BY_TYPE: ReadonlyMap<string, FailureSpec> = new Map(ALL_FAILURES.map((spec) => [spec.type, spec]));

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
export function permanentTypes(group: keyof Groups): string[] {
  return (Object.values(FAILURES[group]) as FailureSpec[]).filter((spec) => spec.handling === 'permanent').map((spec) => spec.type);
}

/** The HTTP core's failure types (`FailureType.NotFound` …), for activities and workflows alike. */
export const FailureType = failureTypes('http');
export type FailureTypeName = (typeof FailureType)[keyof typeof FailureType];
