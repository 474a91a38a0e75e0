/**
 * Issue 30: the messages the emulated Google APIs read and answer (`packages/emulator/src/google/proto-json.ts`) against
 * the APIs' discovery documents — those google-api-python-client ships, from the conformance suite's cached
 * virtualenv (`test/python/python-env.ts`; the npm `googleapis` packages ship generated code, not the documents).
 * Every field the emulator declares exists in the document with the same proto3 JSON type (64-bit integers are
 * strings there, as the emulator writes them), and every field it treats as output-only is documented so: the
 * resources, the Operation and Status envelopes and the list responses it answers with.
 * The other direction, for the request messages the emulator reads (`REQUEST_MESSAGES`): every field the document
 * gives them, at every depth, is accepted by the reader and by the route (no 400 "Unknown name" or "Invalid value"),
 * unless it is a named exception below with its reason; an exception that no longer applies fails too.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { APIKEYS, DNS, LOGGING, LONGRUNNING, ProtoJsonError, readProto, REQUEST_MESSAGES, type ProtoField, type ProtoMessage } from '../../packages/emulator/src/google/proto-json';
import { startEmulator, type Emulator } from '@longhaul/emulator';
import { call, type RawResponse } from '../helpers/emulator-http';
import { ensurePythonEnv } from '../python/python-env';

type Api = keyof typeof REQUEST_MESSAGES;

/**
 * Documented fields of a request message the emulator deliberately does not accept, as `'<api> <Message>.<path>'`
 * → why. None today: every documented field of every message it reads is accepted (output-only ones ignored).
 */
const NOT_ACCEPTED: Record<string, string> = {};

interface DiscoverySchema {
  type?: string;
  format?: string;
  $ref?: string;
  description?: string;
  items?: DiscoverySchema;
  additionalProperties?: DiscoverySchema;
  properties?: Record<string, DiscoverySchema>;
  enum?: string[];
}

interface DiscoveryDocument {
  revision: string;
  schemas: Record<string, DiscoverySchema>;
}

async function discoveryDocument(api: Api): Promise<DiscoveryDocument> {
  return JSON.parse(await readFile(join(await discoveryDocuments(), `${api}.json`), 'utf8')) as DiscoveryDocument;
}

async function discoveryDocuments(): Promise<string> {
  const venv = dirname(dirname(await ensurePythonEnv()));
  const python = (await readdir(join(venv, 'lib'))).find((d) => d.startsWith('python3'));
  return join(venv, 'lib', python!, 'site-packages', 'googleapiclient', 'discovery_cache', 'documents');
}

/** Where a declared field's type departs from the document's. */
function typeProblems(field: ProtoField, schema: DiscoverySchema, at: string): string[] {
  const expectType = (type: string, format?: string) =>
    schema.type === type && (format === undefined || schema.format === format) ? [] : [`${at}: declared ${JSON.stringify(field)}, documented ${JSON.stringify({ type: schema.type, format: schema.format, $ref: schema.$ref })}`];
  if (typeof field === 'string') {
    switch (field) {
      case 'string':
      case 'enum':
        return expectType('string');
      case 'timestamp':
        return expectType('string', 'google-datetime');
      case 'fieldmask':
        return expectType('string', 'google-fieldmask');
      case 'int32':
        return expectType('integer', 'int32');
      case 'int64':
        return expectType('string', 'int64');
      case 'uint64':
        return expectType('string', 'uint64');
      case 'double':
        return expectType('number');
      case 'bool':
        return expectType('boolean');
      case 'string-map':
        return schema.type === 'object' && schema.additionalProperties?.type === 'string' ? [] : [`${at}: declared a map of strings, documented ${JSON.stringify(schema)}`];
      case 'struct':
        return schema.type === 'object' || schema.$ref !== undefined ? [] : [`${at}: declared an object, documented ${JSON.stringify(schema)}`];
    }
  }
  if ('repeated' in field) return schema.type === 'array' && schema.items ? typeProblems(field.repeated, schema.items, `${at}[]`) : [`${at}: declared repeated, documented ${JSON.stringify(schema)}`];
  return schema.$ref === field.message.name ? [] : [`${at}: declared message ${field.message.name}, documented ${JSON.stringify(schema)}`];
}

function messageProblems(doc: DiscoveryDocument, message: ProtoMessage): string[] {
  const schema = doc.schemas[message.name];
  if (!schema) return [`${message.name} is not in the document`];
  const problems: string[] = [];
  for (const [name, field] of Object.entries(message.fields)) {
    const documented = schema.properties?.[name];
    if (!documented) {
      problems.push(`${message.name}.${name} is not in the document`);
      continue;
    }
    problems.push(...typeProblems(field, documented, `${message.name}.${name}`));
    if (message.outputOnly?.includes(name) && !/output[ -]only/i.test(documented.description ?? '')) problems.push(`${message.name}.${name} is treated as output-only, which the document does not say`);
  }
  return problems;
}

/** A value of the documented type (a `$ref` filled with every field of its message, a few levels deep). */
function sampleOf(doc: DiscoveryDocument, schema: DiscoverySchema, depth = 0): unknown {
  if (schema.$ref) {
    if (depth > 3) return {};
    return Object.fromEntries(Object.entries(doc.schemas[schema.$ref]?.properties ?? {}).map(([name, s]) => [name, sampleOf(doc, s, depth + 1)]));
  }
  switch (schema.type) {
    case 'string':
      if (schema.format === 'google-datetime') return '2026-03-01T12:00:00Z';
      if (schema.format === 'google-duration') return '1s';
      if (schema.format === 'int64' || schema.format === 'uint64') return '1';
      return schema.enum?.[1] ?? 'x';
    case 'integer':
      return 1;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    case 'array':
      return [sampleOf(doc, schema.items ?? { type: 'string' }, depth)];
    case 'object':
      return schema.additionalProperties ? { k: sampleOf(doc, schema.additionalProperties, depth) } : {};
    default:
      return 'x';
  }
}

/** The message a declared field holds (through `repeated`), if any. */
const nestedMessage = (field: ProtoField | undefined): ProtoMessage | undefined =>
  field === undefined || typeof field === 'string' ? undefined : 'repeated' in field ? nestedMessage(field.repeated) : field.message;

/** Every documented field of `message` (at every depth of the messages it declares) that the reader refuses, by path. */
function refusedFields(doc: DiscoveryDocument, message: ProtoMessage, schemaName: string, at: string): Map<string, string> {
  const refused = new Map<string, string>();
  for (const [name, documented] of Object.entries(doc.schemas[schemaName]?.properties ?? {})) {
    const path = `${at}.${name}`;
    const nested = nestedMessage(message.fields[name]);
    const ref = documented.$ref ?? documented.items?.$ref;
    // A field holding a message the emulator declares is probed empty here, then field by field below.
    const probe = nested && ref ? (documented.type === 'array' ? [{}] : {}) : sampleOf(doc, documented);
    try {
      readProto(message, { [name]: probe });
    } catch (err) {
      if (!(err instanceof ProtoJsonError)) throw err;
      refused.set(path, err.message);
      continue;
    }
    if (nested && ref) for (const [p, why] of refusedFields(doc, nested, ref, path)) refused.set(p, why);
  }
  return refused;
}

let emulator: Emulator | undefined;
afterAll(async () => emulator?.close());

/** A 400 of the body reader (rather than of the route's own checks). */
const readerRefused = (res: RawResponse) => res.status === 400 && /Unknown name|Invalid value at|Invalid JSON payload/.test(res.text);

describe('the emulator’s Google messages against the discovery documents', () => {
  const groups: Record<Api, ProtoMessage[]> = {
    'logging.v2': [...Object.values(LOGGING), ...Object.values(LONGRUNNING)],
    'dns.v1': Object.values(DNS),
    'apikeys.v2': [...Object.values(APIKEYS), ...Object.values(LONGRUNNING)],
  };

  it.each(Object.entries(groups))('%s: every declared field exists with its proto3 JSON type', { timeout: 5 * 60_000 }, async (api, messages) => {
    const doc = await discoveryDocument(api as Api);
    const problems = messages.flatMap((m) => messageProblems(doc, m));
    expect(problems).toEqual([]);
    console.log(`${api} (revision ${doc.revision}): ${messages.map((m) => `${m.name} (${Object.keys(m.fields).length} fields)`).join(', ')} match`);
  });

  it.each(Object.keys(REQUEST_MESSAGES))('%s: every documented field of the request messages the emulator reads is accepted', { timeout: 5 * 60_000 }, async (api) => {
    const doc = await discoveryDocument(api as Api);
    const refused = new Map<string, string>();
    let checked = 0;
    for (const message of REQUEST_MESSAGES[api as Api]) {
      for (const [path, why] of refusedFields(doc, message, message.name, `${api} ${message.name}`)) refused.set(path, why);
      checked += Object.keys(doc.schemas[message.name]?.properties ?? {}).length;
    }
    const unexcused = [...refused].filter(([path]) => !(path in NOT_ACCEPTED)).map(([path, why]) => `${path}: ${why}`);
    const stale = Object.keys(NOT_ACCEPTED).filter((path) => path.startsWith(`${api} `) && !refused.has(path));
    expect(unexcused).toEqual([]);
    expect(stale, 'exceptions for fields that are accepted now (or no longer documented): remove them').toEqual([]);
    console.log(`${api}: ${REQUEST_MESSAGES[api as Api].map((m) => m.name).join(', ')}: ${checked} top-level documented fields (and those of the messages they hold) accepted`);
  });

  it('each route that reads a body accepts one carrying every documented field of its request message', { timeout: 5 * 60_000 }, async () => {
    let now = Date.UTC(2026, 2, 1, 12, 0, 0);
    emulator = await startEmulator({ clock: () => now, google: { apikeys: { deleteOperationMs: 0 } } });
    const [logging, dns, keys] = await Promise.all((['logging.v2', 'dns.v1', 'apikeys.v2'] as const).map(discoveryDocument));
    type Sample = Record<string, unknown>;
    const full = (doc: DiscoveryDocument, name: string) => sampleOf(doc, { $ref: name }) as Sample;
    const answers: [string, RawResponse][] = [];
    const send = async (what: string, service: string, method: string, path: string, body?: unknown) => {
      const res = await call(emulator!.serviceUrl(service), method, path, { body });
      answers.push([what, res]);
      return res;
    };
    const parent = '/v2/projects/demo-project/locations/global';
    const bucket = full(logging, 'LogBucket');
    const pending = (await send('buckets.createAsync (LogBucket)', 'google-logging', 'POST', `${parent}/buckets:createAsync?bucketId=cancelled`, bucket)).json as { name: string };
    await send('operations.cancel (CancelOperationRequest)', 'google-logging', 'POST', `/v2/${pending.name}:cancel`, full(logging, 'CancelOperationRequest'));
    await send('buckets.createAsync (LogBucket)', 'google-logging', 'POST', `${parent}/buckets:createAsync?bucketId=documented`, bucket);
    now += 60_000;
    await send('buckets.updateAsync (LogBucket)', 'google-logging', 'POST', `${parent}/buckets/documented:updateAsync?updateMask=description`, bucket);
    // The payload fields are a oneof (one per entry, as the API requires): three entries carry one each.
    const logName = 'projects/demo-project/logs/documented';
    const entry = { ...full(logging, 'LogEntry'), logName };
    const payloads = ['jsonPayload', 'textPayload', 'protoPayload'];
    const entries = payloads.map((keep) => Object.fromEntries(Object.entries(entry).filter(([name]) => name === keep || !payloads.includes(name))));
    await send('entries.write (WriteLogEntriesRequest)', 'google-logging', 'POST', '/v2/entries:write', { ...full(logging, 'WriteLogEntriesRequest'), logName, entries });
    // Record sets the zone can take: a new one added, the fixture's www A deleted (its current data).
    const rrset = full(dns, 'ResourceRecordSet');
    const change = {
      ...full(dns, 'Change'),
      additions: [{ ...rrset, name: 'documented.demo.example.com.', type: 'TXT' }],
      deletions: [{ ...rrset, name: 'www.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.10'] }],
    };
    await send('changes.create (Change)', 'google-dns', 'POST', '/dns/v1/projects/demo-project/managedZones/demo-zone/changes', change);
    const key = '/v2/projects/demo-project/locations/global/keys/demo-key-1';
    await send('keys.delete', 'google-apikeys', 'DELETE', key);
    await send('keys.undelete (V2UndeleteKeyRequest)', 'google-apikeys', 'POST', `${key}:undelete`, full(keys, 'V2UndeleteKeyRequest'));
    expect(answers.filter(([, res]) => readerRefused(res)).map(([what, res]) => `${what}: ${res.text}`)).toEqual([]);
    expect(answers.filter(([, res]) => res.status !== 200).map(([what, res]) => `${what}: ${res.status} ${res.text}`)).toEqual([]);
    console.log(answers.map(([what, res]) => `${what}: ${res.status}`).join('; '));
  });
});
