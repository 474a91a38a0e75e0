/**
 * Cloud Logging v2 log buckets and their long-running operations (spec 000 B), under all four parent forms
 * (`projects`, `organizations`, `folders`, `billingAccounts` + `/locations/L`):
 *
 * - `POST {parent}/buckets:createAsync?bucketId=` and `POST {name}:updateAsync?updateMask=` return an Operation
 *   whose `BucketMetadata.state` moves SCHEDULED → WAITING_FOR_PERMISSIONS → RUNNING → SUCCEEDED (or FAILED for
 *   `failBucketIds`) on configurable timing;
 * - `POST {operation}:cancel` takes effect after `cancelEffectMs` (state CANCELLED, `error.code` 1) or, with
 *   `cancel: 'too-late'`, is accepted but the operation finishes anyway; a done operation refuses it;
 * - `GET {parent}/operations` (its `filter` required, see `operation-filter.ts`), `GET {operation}`,
 *   `GET {parent}/buckets[/{id}]`.
 *
 * A bucket exists (lifecycle `CREATING`) as soon as its create operation starts, so a second create is
 * `ALREADY_EXISTS`; a failed or cancelled create removes it. State advances lazily from the emulator clock.
 */
import { randomUUID } from 'node:crypto';
import type { Router, RouteContext } from '../router';
import { durableContainers, type EmulatorContext } from '../module';
import { EmulatorHttpError } from '../http-error';
import type { GoogleFixture } from './fixture';
import { googleError, readBody, timestamp } from './errors';
import { operationFilter, type FilterableOperation } from './operation-filter';
import { maskPaths } from './json-names';
import { LOGGING, LONGRUNNING, writeAny, writeProto } from './proto-json';

const METADATA_TYPE = 'type.googleapis.com/google.logging.v2.BucketMetadata';
const BUCKET_TYPE = 'type.googleapis.com/google.logging.v2.LogBucket';
const PARENT_KINDS = ['projects', 'organizations', 'folders', 'billingAccounts'] as const;
type ParentKind = (typeof PARENT_KINDS)[number];

export type OperationState = 'SCHEDULED' | 'WAITING_FOR_PERMISSIONS' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

export interface LogBucketOptions {
  /** Time in each state before the next. @format milliseconds */
  scheduledMs: number;
  waitingForPermissionsMs: number;
  runningMs: number;
  /** Operations on these bucket ids end FAILED. */
  failBucketIds: string[];
  /** Whether `:cancel` takes effect, or arrives too late (accepted, but the operation finishes anyway). */
  cancel: 'takes-effect' | 'too-late';
  /** How long after `:cancel` the operation ends CANCELLED (cancellation is asynchronous). @format milliseconds */
  cancelEffectMs: number;
}

export const defaultLogBucketOptions: LogBucketOptions = {
  scheduledMs: 500,
  waitingForPermissionsMs: 500,
  runningMs: 2_000,
  failBucketIds: [],
  cancel: 'takes-effect',
  cancelEffectMs: 300,
};

interface BucketFields {
  description?: string;
  retentionDays: number;
  locked: boolean;
  analyticsEnabled: boolean;
}

export interface EmulatedBucket extends BucketFields {
  name: string;
  createTime: number;
  updateTime: number;
  lifecycleState: 'CREATING' | 'ACTIVE' | 'UPDATING';
}

export interface EmulatedBucketOperation {
  name: string;
  kind: 'create' | 'update';
  bucketName: string;
  /** `createBucketRequest` or `updateBucketRequest` as the metadata reports it. */
  request: Record<string, unknown>;
  /** The fields an update applies when it succeeds. */
  patch: Partial<BucketFields>;
  startedAt: number;
  /** When it finishes unless cancelled first. */
  endsAt: number;
  willFail: boolean;
  cancelRequestedAt?: number;
  /** When a cancellation takes effect (if before `endsAt`). */
  cancelAt?: number;
  settled: boolean;
}

const UPDATABLE = ['description', 'retentionDays', 'locked', 'analyticsEnabled', 'restrictedFields', 'indexConfigs'];

export function registerLogBucketRoutes(router: Router, ctx: EmulatorContext, fixture: GoogleFixture, options: LogBucketOptions) {
  const buckets = new Map<string, EmulatedBucket>();
  const operations = new Map<string, EmulatedBucketOperation>();

  const stateOf = (op: EmulatedBucketOperation, now: number): OperationState => {
    if (op.cancelAt !== undefined && op.cancelAt < op.endsAt && now >= op.cancelAt) return 'CANCELLED';
    const elapsed = now - op.startedAt;
    if (elapsed < options.scheduledMs) return 'SCHEDULED';
    if (elapsed < options.scheduledMs + options.waitingForPermissionsMs) return 'WAITING_FOR_PERMISSIONS';
    if (now < op.endsAt) return 'RUNNING';
    return op.willFail ? 'FAILED' : 'SUCCEEDED';
  };
  const isDone = (s: OperationState) => s === 'SUCCEEDED' || s === 'FAILED' || s === 'CANCELLED';

  /** Applies the effects of operations that finished by `now` (lazily, in start order). */
  const settle = (now: number) => {
    for (const op of operations.values()) {
      if (op.settled) continue;
      const state = stateOf(op, now);
      if (!isDone(state)) continue;
      op.settled = true;
      const bucket = buckets.get(op.bucketName);
      if (!bucket) continue;
      const at = op.cancelAt !== undefined && state === 'CANCELLED' ? op.cancelAt : op.endsAt;
      if (op.kind === 'create') {
        if (state === 'SUCCEEDED') Object.assign(bucket, { lifecycleState: 'ACTIVE', updateTime: at });
        else buckets.delete(op.bucketName);
      } else {
        if (state === 'SUCCEEDED') Object.assign(bucket, op.patch, { updateTime: at });
        bucket.lifecycleState = 'ACTIVE';
      }
    }
  };

  /** A bucket's fields as the LogBucket message has them. */
  const bucketFields = (b: EmulatedBucket) => ({
    name: b.name,
    description: b.description,
    createTime: timestamp(b.createTime),
    updateTime: timestamp(b.updateTime),
    retentionDays: b.retentionDays,
    locked: b.locked,
    lifecycleState: b.lifecycleState,
    analyticsEnabled: b.analyticsEnabled,
  });
  const bucketObject = (b: EmulatedBucket) => writeProto(LOGGING.LogBucket, bucketFields(b));

  const operationObject = (op: EmulatedBucketOperation, now: number) => {
    const state = stateOf(op, now);
    const done = isDone(state);
    const endedAt = state === 'CANCELLED' ? op.cancelAt! : op.endsAt;
    const metadata = writeAny(METADATA_TYPE, LOGGING.BucketMetadata, {
      startTime: timestamp(op.startedAt),
      endTime: done ? timestamp(endedAt) : undefined,
      state: `OPERATION_STATE_${state}`,
      [op.kind === 'create' ? 'createBucketRequest' : 'updateBucketRequest']: op.request,
    });
    const bucket = state === 'SUCCEEDED' ? buckets.get(op.bucketName) : undefined;
    return writeProto(LONGRUNNING.Operation, {
      name: op.name,
      metadata,
      done,
      response: state === 'SUCCEEDED' ? writeAny(BUCKET_TYPE, LOGGING.LogBucket, bucket ? bucketFields(bucket) : { name: op.bucketName }) : undefined,
      error:
        state === 'FAILED'
          ? { code: 9, message: `Bucket ${op.bucketName} could not be ${op.kind === 'create' ? 'created' : 'updated'}: the destination rejected the configuration.` }
          : state === 'CANCELLED'
            ? { code: 1, message: 'Operation was cancelled.' }
            : undefined,
    });
  };

  const filterable = (op: EmulatedBucketOperation, now: number): FilterableOperation => {
    const state = stateOf(op, now);
    const finishTime = !isDone(state) ? undefined : state === 'CANCELLED' ? op.cancelAt : op.endsAt;
    return { requestType: op.kind === 'create' ? 'CreateBucket' : 'UpdateBucket', startTime: op.startedAt, finishTime, state };
  };

  /** `{kind}/{id}/locations/{location}`, checked: unknown kinds are 404, unknown ids are PERMISSION_DENIED. */
  const parentOf = (c: RouteContext, permission: string): string => {
    const { kind, pid, location } = c.params;
    if (!(PARENT_KINDS as readonly string[]).includes(kind)) throw new EmulatorHttpError(404, 'Not Found');
    const parent = `${kind}/${pid}/locations/${location}`;
    if (!fixture.parents[kind as ParentKind].includes(pid)) {
      throw googleError(403, `Permission '${permission}' denied on resource '${kind}/${pid}' (or it may not exist).`, {
        reason: 'IAM_PERMISSION_DENIED',
        domain: 'iam.googleapis.com',
        metadata: { permission, resource: `${kind}/${pid}` },
      });
    }
    if (!/^(?:global|[a-z]{2,}(?:-[a-z0-9]+)*)$/.test(location)) throw googleError(400, `Invalid location: ${location}`, { status: 'INVALID_ARGUMENT' });
    settle(c.now);
    return parent;
  };

  const bodyOf = (c: RouteContext): Record<string, unknown> => readBody(LOGGING.LogBucket, c.body);

  const checkRetention = (days: unknown) => {
    if (days !== undefined && !((days as number) >= 1 && (days as number) <= 3650)) {
      throw googleError(400, `retentionDays must be between 1 and 3650, got ${String(days)}.`, { status: 'INVALID_ARGUMENT' });
    }
  };

  const findBucket = (c: RouteContext, permission: string): EmulatedBucket => {
    const name = `${parentOf(c, permission)}/buckets/${c.params.bucket}`;
    const bucket = buckets.get(name);
    if (!bucket) throw googleError(404, `Bucket ${name} does not exist.`, { status: 'NOT_FOUND' });
    return bucket;
  };

  const startOperation = (parent: string, op: Omit<EmulatedBucketOperation, 'name' | 'endsAt' | 'settled' | 'willFail'>): EmulatedBucketOperation => {
    const bucketId = op.bucketName.split('/').pop()!;
    const full: EmulatedBucketOperation = {
      ...op,
      name: `${parent}/operations/${randomUUID().replace(/-/g, '').slice(0, 20)}`,
      endsAt: op.startedAt + options.scheduledMs + options.waitingForPermissionsMs + options.runningMs,
      willFail: options.failBucketIds.includes(bucketId),
      settled: false,
    };
    operations.set(full.name, full);
    return full;
  };

  const base = '/v2/:kind/:pid/locations/:location';

  router.post(`${base}/buckets:createAsync`, (c) => {
    const parent = parentOf(c, 'logging.buckets.create');
    const bucketId = c.query.get('bucketId');
    if (!bucketId) throw googleError(400, 'bucketId is required.', { status: 'INVALID_ARGUMENT' });
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(bucketId)) {
      throw googleError(400, `Invalid bucket id "${bucketId}": bucket ids contain up to 100 letters, digits, underscores, hyphens and periods and start with a letter or digit.`, { status: 'INVALID_ARGUMENT' });
    }
    const body = bodyOf(c);
    checkRetention(body.retentionDays);
    const name = `${parent}/buckets/${bucketId}`;
    if (buckets.has(name)) throw googleError(409, `Bucket ${name} already exists.`, { status: 'ALREADY_EXISTS' });
    buckets.set(name, {
      name,
      description: body.description as string | undefined,
      retentionDays: (body.retentionDays as number | undefined) ?? 30,
      locked: (body.locked as boolean | undefined) ?? false,
      analyticsEnabled: (body.analyticsEnabled as boolean | undefined) ?? false,
      createTime: c.now,
      updateTime: c.now,
      lifecycleState: 'CREATING',
    });
    const op = startOperation(parent, { kind: 'create', bucketName: name, request: { parent, bucketId, bucket: body }, patch: {}, startedAt: c.now });
    return { status: 200, body: operationObject(op, c.now) };
  });

  router.post(`${base}/buckets/:bucket:updateAsync`, (c) => {
    const bucket = findBucket(c, 'logging.buckets.update');
    const mask = maskPaths(c.query.get('updateMask'));
    if (mask.length === 0) throw googleError(400, 'updateMask is required and must name at least one field.', { status: 'INVALID_ARGUMENT' });
    const unknown = mask.filter((f) => !UPDATABLE.includes(f));
    if (unknown.length > 0) throw googleError(400, `Invalid updateMask: ${unknown.join(', ')} cannot be updated.`, { status: 'INVALID_ARGUMENT' });
    const body = bodyOf(c);
    checkRetention(body.retentionDays);
    if (bucket.lifecycleState !== 'ACTIVE') {
      throw googleError(400, `Bucket ${bucket.name} is ${bucket.lifecycleState.toLowerCase()}; wait for its operation to finish.`, { status: 'FAILED_PRECONDITION' });
    }
    if (bucket.locked && (mask.includes('retentionDays') || (mask.includes('locked') && body.locked === false))) {
      throw googleError(400, `Bucket ${bucket.name} is locked: its retention cannot change and it cannot be unlocked.`, { status: 'FAILED_PRECONDITION', reason: 'BUCKET_LOCKED', domain: 'logging.googleapis.com' });
    }
    const patch: Partial<BucketFields> = {};
    for (const field of mask) if (field in LOGGING.LogBucket.fields && field !== 'name') (patch as Record<string, unknown>)[field] = body[field];
    bucket.lifecycleState = 'UPDATING';
    const parent = bucket.name.replace(/\/buckets\/[^/]+$/, '');
    const op = startOperation(parent, { kind: 'update', bucketName: bucket.name, request: { name: bucket.name, bucket: body, updateMask: mask.join(',') }, patch, startedAt: c.now });
    return { status: 200, body: operationObject(op, c.now) };
  });

  router.get(`${base}/buckets/:bucket`, (c) => ({ status: 200, body: bucketObject(findBucket(c, 'logging.buckets.get')) }));

  router.get(`${base}/buckets`, (c) => {
    const parent = parentOf(c, 'logging.buckets.list');
    const listed = [...buckets.values()].filter((b) => b.name.startsWith(`${parent}/buckets/`)).map(bucketFields);
    return { status: 200, body: writeProto(LOGGING.ListBucketsResponse, { buckets: listed }) };
  });

  router.get(`${base}/operations`, (c) => {
    const parent = parentOf(c, 'logging.operations.list');
    const matches = operationFilter(c.query.get('filter'));
    const all = [...operations.values()].filter((op) => op.name.startsWith(`${parent}/operations/`) && matches(filterable(op, c.now))).reverse();
    const pageSize = Math.min(100, Math.max(1, Number(c.query.get('pageSize') ?? 50) || 50));
    const offset = Number(c.query.get('pageToken') ?? 0) || 0;
    const page = all.slice(offset, offset + pageSize);
    const next = offset + pageSize < all.length ? String(offset + pageSize) : undefined;
    return { status: 200, body: writeProto(LOGGING.ListOperationsResponse, { operations: page.map((op) => operationObject(op, c.now)), nextPageToken: next }) };
  });

  const findOperation = (c: RouteContext, permission: string): EmulatedBucketOperation => {
    const name = `${parentOf(c, permission)}/operations/${c.params.operation}`;
    const op = operations.get(name);
    if (!op) throw googleError(404, `Operation ${name} does not exist.`, { status: 'NOT_FOUND' });
    return op;
  };

  router.get(`${base}/operations/:operation`, (c) => ({ status: 200, body: operationObject(findOperation(c, 'logging.operations.get'), c.now) }));

  router.post(`${base}/operations/:operation:cancel`, (c) => {
    // The body is a CancelOperationRequest (no fields): `{}` or none; anything else is the reader's 400, as the
    // front end refuses a body before the method runs.
    readBody(LOGGING.CancelOperationRequest, c.body);
    const op = findOperation(c, 'logging.operations.cancel');
    if (isDone(stateOf(op, c.now))) throw googleError(400, `Operation ${op.name} has already finished and cannot be cancelled.`, { status: 'FAILED_PRECONDITION' });
    op.cancelRequestedAt ??= c.now;
    if (options.cancel === 'takes-effect') op.cancelAt ??= c.now + options.cancelEffectMs;
    return { status: 200, body: writeProto(LOGGING.Empty, {}) };
  });

  return {
    options,
    buckets,
    operations,
    /** The operation's state at emulator time. */
    state(operationName: string): OperationState | undefined {
      const op = operations.get(operationName);
      return op ? stateOf(op, ctx.clock()) : undefined;
    },
    /** The bucket at emulator time (after settling finished operations). */
    bucket(name: string): EmulatedBucket | undefined {
      settle(ctx.clock());
      return buckets.get(name);
    },
    durable: durableContainers({ buckets, operations }),
  };
}

export type LogBucketState = ReturnType<typeof registerLogBucketRoutes>;
