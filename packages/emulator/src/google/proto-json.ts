/**
 * The proto3 JSON mapping as Google's JSON front end applies it, one reader and one writer for every emulated
 * Google route. A message is described by its fields and their proto types (`ProtoMessage`, below for the
 * messages the emulator reads and answers; `test/integration/google-proto-schemas.test.ts` checks each against
 * the API's discovery document).
 *
 * Reading: a field is accepted by its lowerCamelCase JSON name or its original proto name (`retentionDays` or
 * `retention_days`), at every depth; integer fields take a number or a decimal string (`"300"`, as the mapping
 * allows and clients send for 64-bit values); output-only fields of a resource sent back are ignored; an unknown
 * field or a value of the wrong type is a `ProtoJsonError` naming its path, as Google's 400 does.
 * Writing: lowerCamelCase names, 64-bit integers as decimal strings, unset (undefined) fields left out.
 */
import { jsonName } from './json-names';

export type ProtoScalar = 'string' | 'bool' | 'int32' | 'int64' | 'uint64' | 'double' | 'timestamp' | 'enum' | 'fieldmask';

/** A field's type: a scalar, a nested message, a repeated field, a `map<string, string>` or a free JSON object (`Struct`, `Any`). */
export type ProtoField = ProtoScalar | 'struct' | 'string-map' | { message: ProtoMessage } | { repeated: ProtoField };

export interface ProtoMessage {
  /** The message's name in the discovery document (`LogBucket`), for errors and the schema check. */
  name: string;
  /** Fields by JSON name. */
  fields: Record<string, ProtoField>;
  /** Fields the service sets: ignored when a client sends them. */
  outputOnly?: readonly string[];
}

export class ProtoJsonError extends Error {
  override readonly name = 'ProtoJsonError';
}

const INTEGER = /^-?\d+$/;
const BOUNDS: Partial<Record<ProtoScalar, [number, number]>> = { int32: [-(2 ** 31), 2 ** 31 - 1], int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER], uint64: [0, Number.MAX_SAFE_INTEGER] };

const where = (at: string) => (at ? ` at '${at}'` : '');

function readScalar(type: ProtoScalar, value: unknown, at: string): unknown {
  const bad = () => new ProtoJsonError(`Invalid value${where(at)} (${type.toUpperCase()}), ${JSON.stringify(value)}`);
  switch (type) {
    case 'int32':
    case 'int64':
    case 'uint64': {
      const n = typeof value === 'string' && INTEGER.test(value.trim()) ? Number(value) : value;
      const [min, max] = BOUNDS[type]!;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) throw bad();
      return n;
    }
    case 'double': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || Number.isNaN(n)) throw bad();
      return n;
    }
    case 'bool':
      if (typeof value !== 'boolean') throw bad();
      return value;
    default:
      if (typeof value !== 'string') throw bad();
      return value;
  }
}

function readField(type: ProtoField, value: unknown, at: string): unknown {
  if (value === null) return undefined; // proto3 JSON: null is the field's default (unset)
  if (typeof type === 'string') {
    if (type === 'struct') {
      if (typeof value !== 'object' || Array.isArray(value)) throw new ProtoJsonError(`Invalid value${where(at)}: expected an object`);
      return value;
    }
    if (type === 'string-map') {
      if (typeof value !== 'object' || Array.isArray(value)) throw new ProtoJsonError(`Invalid value${where(at)}: expected a map of strings`);
      for (const [k, v] of Object.entries(value)) if (typeof v !== 'string') throw new ProtoJsonError(`Invalid value at '${at}[${k}]' (TYPE_STRING), ${JSON.stringify(v)}`);
      return value;
    }
    return readScalar(type, value, at);
  }
  if ('repeated' in type) {
    if (!Array.isArray(value)) throw new ProtoJsonError(`Invalid value${where(at)}: expected a list`);
    return value.map((item, i) => readField(type.repeated, item, `${at}[${i}]`));
  }
  return readProto(type.message, value, at);
}

/** A message read from a request body: JSON names, integers as numbers, output-only fields dropped. */
export function readProto(message: ProtoMessage, value: unknown, at = ''): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ProtoJsonError(`Invalid JSON payload received${where(at)}: expected an object (${message.name})`);
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(value)) {
    const name = jsonName(key);
    const type = message.fields[name];
    if (type === undefined) throw new ProtoJsonError(`Invalid JSON payload received. Unknown name "${key}"${where(at)}: Cannot find field.`);
    if (message.outputOnly?.includes(name)) continue;
    const read = readField(type, raw, at ? `${at}.${name}` : name);
    if (read !== undefined) out[name] = read;
  }
  return out;
}

function writeField(type: ProtoField, value: unknown): unknown {
  if (typeof type === 'string') {
    if ((type === 'int64' || type === 'uint64') && (typeof value === 'number' || typeof value === 'bigint')) return String(value);
    return value;
  }
  if ('repeated' in type) return (value as unknown[]).map((item) => writeField(type.repeated, item));
  return writeProto(type.message, value as Record<string, unknown>);
}

/** A message as an answer: only its own fields (an unknown one is a bug of the emulator), 64-bit integers as strings. */
export function writeProto(message: ProtoMessage, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(value)) {
    if (raw === undefined) continue;
    const type = message.fields[name];
    if (type === undefined) throw new Error(`the emulator answers ${message.name} with a field '${name}' the message does not have`);
    out[name] = writeField(type, raw);
  }
  return out;
}

// The messages the emulated Google APIs read and answer (field names and types as in each API's discovery document).

const message = (name: string, fields: Record<string, ProtoField>, outputOnly: readonly string[] = []): ProtoMessage => ({ name, fields, outputOnly });
const repeated = (field: ProtoField): ProtoField => ({ repeated: field });
const of = (m: ProtoMessage): ProtoField => ({ message: m });

/** A message packed in a `google.protobuf.Any` (an Operation's `metadata` or `response`): its `@type` first, then its fields. */
export function writeAny(typeUrl: string, message: ProtoMessage, value: Record<string, unknown>): Record<string, unknown> {
  return { '@type': typeUrl, ...writeProto(message, value) };
}

/** `google.rpc.Status` and `google.longrunning.Operation`, as the Logging and API Keys documents both declare them. */
export const LONGRUNNING = (() => {
  const Status = message('Status', { code: 'int32', message: 'string', details: repeated('struct') });
  const Operation = message('Operation', { name: 'string', metadata: 'struct', done: 'bool', error: of(Status), response: 'struct' });
  return { Status, Operation };
})();

export const LOGGING = (() => {
  const IndexConfig = message('IndexConfig', { fieldPath: 'string', type: 'enum', createTime: 'timestamp' }, ['createTime']);
  const CmekSettings = message('CmekSettings', { name: 'string', kmsKeyName: 'string', kmsKeyVersionName: 'string', serviceAccountId: 'string' }, ['name', 'kmsKeyVersionName', 'serviceAccountId']);
  const LogBucket = message(
    'LogBucket',
    {
      name: 'string',
      description: 'string',
      createTime: 'timestamp',
      updateTime: 'timestamp',
      retentionDays: 'int32',
      locked: 'bool',
      lifecycleState: 'enum',
      analyticsEnabled: 'bool',
      restrictedFields: repeated('string'),
      indexConfigs: repeated(of(IndexConfig)),
      cmekSettings: of(CmekSettings),
    },
    ['createTime', 'updateTime', 'lifecycleState'],
  );
  const MonitoredResource = message('MonitoredResource', { type: 'string', labels: 'string-map' });
  const LogEntry = message(
    'LogEntry',
    {
      logName: 'string',
      resource: of(MonitoredResource),
      protoPayload: 'struct',
      textPayload: 'string',
      jsonPayload: 'struct',
      timestamp: 'timestamp',
      receiveTimestamp: 'timestamp',
      severity: 'enum',
      insertId: 'string',
      httpRequest: 'struct',
      labels: 'string-map',
      operation: 'struct',
      trace: 'string',
      spanId: 'string',
      traceSampled: 'bool',
      sourceLocation: 'struct',
      split: 'struct',
      otel: 'struct',
      // Output-only fields a client may send back from an entry it read: accepted and ignored.
      metadata: 'struct',
      apphub: 'struct',
      apphubDestination: 'struct',
      apphubSource: 'struct',
      errorGroups: repeated('struct'),
    },
    ['receiveTimestamp', 'metadata', 'apphub', 'apphubDestination', 'apphubSource', 'errorGroups'],
  );
  const WriteLogEntriesRequest = message('WriteLogEntriesRequest', {
    logName: 'string',
    resource: of(MonitoredResource),
    labels: 'string-map',
    entries: repeated(of(LogEntry)),
    partialSuccess: 'bool',
    dryRun: 'bool',
  });
  const CreateBucketRequest = message('CreateBucketRequest', { parent: 'string', bucketId: 'string', bucket: of(LogBucket) });
  const UpdateBucketRequest = message('UpdateBucketRequest', { name: 'string', bucket: of(LogBucket), updateMask: 'fieldmask' });
  const BucketMetadata = message('BucketMetadata', {
    startTime: 'timestamp',
    endTime: 'timestamp',
    state: 'enum',
    createBucketRequest: of(CreateBucketRequest),
    updateBucketRequest: of(UpdateBucketRequest),
  });
  const ListBucketsResponse = message('ListBucketsResponse', { buckets: repeated(of(LogBucket)), nextPageToken: 'string' });
  const ListOperationsResponse = message('ListOperationsResponse', { operations: repeated(of(LONGRUNNING.Operation)), nextPageToken: 'string', unreachable: repeated('string') });
  const CancelOperationRequest = message('CancelOperationRequest', {});
  const WriteLogEntriesResponse = message('WriteLogEntriesResponse', {});
  const Empty = message('Empty', {});
  return {
    LogBucket,
    MonitoredResource,
    LogEntry,
    WriteLogEntriesRequest,
    WriteLogEntriesResponse,
    IndexConfig,
    CmekSettings,
    CreateBucketRequest,
    UpdateBucketRequest,
    BucketMetadata,
    ListBucketsResponse,
    ListOperationsResponse,
    CancelOperationRequest,
    Empty,
  };
})();

export const DNS = (() => {
  const ResourceRecordSet = message('ResourceRecordSet', { kind: 'string', name: 'string', type: 'string', ttl: 'int32', rrdatas: repeated('string'), signatureRrdatas: repeated('string'), routingPolicy: 'struct' });
  // A Change a client read and sends back carries the fields the service set: ignored.
  const Change = message(
    'Change',
    { kind: 'string', additions: repeated(of(ResourceRecordSet)), deletions: repeated(of(ResourceRecordSet)), id: 'string', startTime: 'string', status: 'enum', isServing: 'bool' },
    ['id', 'startTime', 'status'],
  );
  const ManagedZone = message('ManagedZone', { kind: 'string', name: 'string', dnsName: 'string', description: 'string', id: 'uint64', creationTime: 'string', visibility: 'enum', nameServers: repeated('string') }, ['creationTime']);
  const ChangesListResponse = message('ChangesListResponse', { kind: 'string', changes: repeated(of(Change)), nextPageToken: 'string' });
  const ResourceRecordSetsListResponse = message('ResourceRecordSetsListResponse', { kind: 'string', rrsets: repeated(of(ResourceRecordSet)), nextPageToken: 'string' });
  return { ResourceRecordSet, Change, ManagedZone, ChangesListResponse, ResourceRecordSetsListResponse };
})();

export const APIKEYS = (() => {
  const Key = message(
    'V2Key',
    { name: 'string', uid: 'string', displayName: 'string', keyString: 'string', createTime: 'timestamp', updateTime: 'timestamp', deleteTime: 'timestamp', annotations: 'string-map', restrictions: 'struct', etag: 'string', serviceAccountEmail: 'string' },
    ['uid', 'keyString', 'createTime', 'updateTime', 'deleteTime'],
  );
  const UndeleteKeyRequest = message('V2UndeleteKeyRequest', {});
  return { Key, UndeleteKeyRequest };
})();

/**
 * The request messages the emulated routes read, by API: `google-proto-schemas.test.ts` checks that every field
 * each API's document gives them (at every depth) is accepted, not refused as an unknown name.
 */
export const REQUEST_MESSAGES: Record<'logging.v2' | 'dns.v1' | 'apikeys.v2', readonly ProtoMessage[]> = {
  'logging.v2': [LOGGING.LogBucket, LOGGING.WriteLogEntriesRequest, LOGGING.CancelOperationRequest],
  'dns.v1': [DNS.Change],
  'apikeys.v2': [APIKEYS.UndeleteKeyRequest],
};
