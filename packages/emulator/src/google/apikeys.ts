/**
 * API Keys v2 (spec 000 A): `DELETE /v2/{name=projects/*\/locations/*\/keys/*}` with an optional `etag`
 * returns an Operation; the key stays retrievable (`GET` shows its `deleteTime`) and undeletable for 30 days,
 * then is purged. A stale `etag` is a 409 `ABORTED`. Operations finish after `deleteOperationMs`.
 *
 * State advances lazily from the emulator clock (no timers), so tests with an injected clock are exact.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Router, RouteContext } from '../router';
import { durableContainers, type EmulatorContext } from '../module';
import type { GoogleFixture } from './fixture';
import { googleError, readBody, timestamp } from './errors';
import { APIKEYS, LONGRUNNING, writeAny, writeProto } from './proto-json';

export const DELETED_KEY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const KEY_TYPE = 'type.googleapis.com/google.api.apikeys.v2.Key';

export interface ApiKeyOptions {
  /** How long a delete (or undelete) operation runs before it is done; 0 answers done at once. @format milliseconds */
  deleteOperationMs: number;
  /** Deleting these key ids ends in an operation `error` (code 13) and the key is not deleted. */
  failKeyIds: string[];
}

export const defaultApiKeyOptions: ApiKeyOptions = { deleteOperationMs: 1_500, failKeyIds: [] };

export interface EmulatedApiKey {
  name: string;
  uid: string;
  displayName: string;
  createTime: number;
  updateTime: number;
  /** Bumped on every change; the etag derives from it. */
  version: number;
  deleteTime?: number;
}

interface KeyOperation {
  name: string;
  keyName: string;
  startedAt: number;
  doneAt: number;
  /** The operation ends with this error (and undoes the deletion) instead of succeeding. */
  fails: boolean;
  settled: boolean;
}

const isEmptyObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

export function registerApiKeyRoutes(router: Router, ctx: EmulatorContext, fixture: GoogleFixture, options: ApiKeyOptions) {
  const keys = new Map<string, EmulatedApiKey>();
  const operations = new Map<string, KeyOperation>();
  const start = ctx.clock();
  for (const k of fixture.apiKeys) {
    const name = `projects/${k.project}/locations/global/keys/${k.keyId}`;
    keys.set(name, { name, uid: randomUUID(), displayName: k.displayName, createTime: start, updateTime: start, version: 1 });
  }

  const etagOf = (key: EmulatedApiKey) => `W/"${createHash('sha256').update(`${key.uid}:${key.version}`).digest('base64').slice(0, 22)}=="`;

  /** A key's fields as the V2Key message has them. */
  const keyFields = (key: EmulatedApiKey) => ({
    name: key.name,
    uid: key.uid,
    displayName: key.displayName,
    createTime: timestamp(key.createTime),
    updateTime: timestamp(key.updateTime),
    deleteTime: key.deleteTime !== undefined ? timestamp(key.deleteTime) : undefined,
    etag: etagOf(key),
    restrictions: {},
  });

  const purged = (key: EmulatedApiKey, now: number) => key.deleteTime !== undefined && now - key.deleteTime >= DELETED_KEY_RETENTION_MS;

  /** The key named by the route, checked as the real service does: location first, then project, then key. */
  const findKey = (c: RouteContext): EmulatedApiKey => {
    const { project, location, key: keyId } = c.params;
    if (location !== 'global') {
      throw googleError(400, `Location '${location}' is not supported: API keys only support the location 'global'.`, { reason: 'LOCATION_NOT_SUPPORTED', domain: 'apikeys.googleapis.com' });
    }
    if (!fixture.parents.projects.includes(project)) {
      throw googleError(403, `Permission denied on resource project ${project}.`, { reason: 'CONSUMER_INVALID', domain: 'googleapis.com', metadata: { consumer: `projects/${project}` } });
    }
    const name = `projects/${project}/locations/global/keys/${keyId}`;
    const key = keys.get(name);
    if (!key || purged(key, c.now)) throw googleError(404, `Key '${name}' not found.`, { reason: 'API_KEY_NOT_FOUND', domain: 'apikeys.googleapis.com' });
    return key;
  };

  const startOperation = (key: EmulatedApiKey, now: number): KeyOperation => {
    const keyId = key.name.split('/').pop()!;
    const op: KeyOperation = {
      name: `operations/akmf.p7-${randomUUID()}`,
      keyName: key.name,
      startedAt: now,
      doneAt: now + options.deleteOperationMs,
      fails: options.failKeyIds.includes(keyId),
      settled: false,
    };
    operations.set(op.name, op);
    return op;
  };

  const operationObject = (op: KeyOperation, now: number) => {
    if (now < op.doneAt) return writeProto(LONGRUNNING.Operation, { name: op.name, done: false });
    if (op.fails) {
      if (!op.settled) {
        // The failed deletion leaves the key as it was.
        const key = keys.get(op.keyName)!;
        Object.assign(key, { deleteTime: undefined, version: key.version + 1 });
      }
      op.settled = true;
      return writeProto(LONGRUNNING.Operation, { name: op.name, done: true, error: { code: 13, message: `Internal error while deleting key '${op.keyName}'; the key was not deleted.` } });
    }
    return writeProto(LONGRUNNING.Operation, { name: op.name, done: true, response: writeAny(KEY_TYPE, APIKEYS.Key, keyFields(keys.get(op.keyName)!)) });
  };

  router.get('/v2/projects/:project/locations/:location/keys/:key', (c) => ({ status: 200, body: writeProto(APIKEYS.Key, keyFields(findKey(c))) }));

  router.delete('/v2/projects/:project/locations/:location/keys/:key', (c) => {
    // DeleteKey has no body (its `etag` is a query parameter); an empty object, which some clients send with
    // every request, is tolerated as Google's front end does. Anything else is refused.
    if (c.body !== undefined && !isEmptyObject(c.body)) throw googleError(400, 'The request body must be empty.', { status: 'INVALID_ARGUMENT' });
    const key = findKey(c);
    const etag = c.query.get('etag');
    if (etag !== null && etag !== etagOf(key)) {
      throw googleError(409, `The etag '${etag}' does not match the current etag of key '${key.name}'.`, { status: 'ABORTED', reason: 'ETAG_MISMATCH', domain: 'apikeys.googleapis.com' });
    }
    if (key.deleteTime !== undefined) {
      throw googleError(400, `Key '${key.name}' is already deleted.`, { status: 'FAILED_PRECONDITION', reason: 'API_KEY_ALREADY_DELETED', domain: 'apikeys.googleapis.com' });
    }
    key.deleteTime = c.now;
    key.updateTime = c.now;
    key.version++;
    return { status: 200, body: operationObject(startOperation(key, c.now), c.now) };
  });

  router.post('/v2/projects/:project/locations/:location/keys/:key:undelete', (c) => {
    // The body is an UndeleteKeyRequest (no fields): `{}` or none; anything else is the reader's 400.
    readBody(APIKEYS.UndeleteKeyRequest, c.body);
    const key = findKey(c);
    if (key.deleteTime === undefined) {
      throw googleError(400, `Key '${key.name}' is not deleted.`, { status: 'FAILED_PRECONDITION', reason: 'API_KEY_NOT_DELETED', domain: 'apikeys.googleapis.com' });
    }
    key.deleteTime = undefined;
    key.updateTime = c.now;
    key.version++;
    return { status: 200, body: operationObject(startOperation(key, c.now), c.now) };
  });

  router.get('/v2/operations/:operation', (c) => {
    const op = operations.get(`operations/${c.params.operation}`);
    if (!op) throw googleError(404, `Operation 'operations/${c.params.operation}' not found.`, { status: 'NOT_FOUND' });
    return { status: 200, body: operationObject(op, c.now) };
  });

  return {
    options,
    keys,
    /** The key's current etag (what a caller would have read). */
    etag(name: string): string {
      const key = keys.get(name);
      if (!key) throw new Error(`no emulated key ${name}`);
      return etagOf(key);
    },
    /** Changes a key as another client would (its etag changes). */
    modify(name: string, displayName: string): void {
      const key = keys.get(name);
      if (!key) throw new Error(`no emulated key ${name}`);
      key.displayName = displayName;
      key.updateTime = ctx.clock();
      key.version++;
    },
    /** Whether the key is deleted and still retrievable at emulator time. */
    isDeleted(name: string): boolean {
      const key = keys.get(name);
      return key?.deleteTime !== undefined && !purged(key, ctx.clock());
    },
    durable: durableContainers({ keys, operations }),
  };
}

export type ApiKeyState = ReturnType<typeof registerApiKeyRoutes>;
