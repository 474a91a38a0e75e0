/**
 * Issue 30: the messages the emulated Google APIs read and answer (`src/emulator/google/proto-json.ts`) against
 * the APIs' discovery documents — those google-api-python-client ships, from the conformance suite's cached
 * virtualenv (`test/python/python-env.ts`; the npm `googleapis` packages ship generated code, not the documents).
 * Every field the emulator declares exists in the document with the same proto3 JSON type (64-bit integers are
 * strings there, as the emulator writes them), and every field it treats as output-only is documented so.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APIKEYS, DNS, LOGGING, type ProtoField, type ProtoMessage } from '../../src/emulator/google/proto-json';
import { ensurePythonEnv } from '../python/python-env';

interface DiscoverySchema {
  type?: string;
  format?: string;
  $ref?: string;
  description?: string;
  items?: DiscoverySchema;
  additionalProperties?: DiscoverySchema;
  properties?: Record<string, DiscoverySchema>;
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

function messageProblems(doc: { schemas: Record<string, DiscoverySchema> }, message: ProtoMessage): string[] {
  const schema = doc.schemas[message.name];
  if (!schema?.properties) return [`${message.name} is not in the document`];
  const problems: string[] = [];
  for (const [name, field] of Object.entries(message.fields)) {
    const documented = schema.properties[name];
    if (!documented) {
      problems.push(`${message.name}.${name} is not in the document`);
      continue;
    }
    problems.push(...typeProblems(field, documented, `${message.name}.${name}`));
    if (message.outputOnly?.includes(name) && !/output[ -]only/i.test(documented.description ?? '')) problems.push(`${message.name}.${name} is treated as output-only, which the document does not say`);
  }
  return problems;
}

describe('the emulator’s Google messages against the discovery documents', () => {
  it.each([
    ['logging.v2', Object.values(LOGGING)],
    ['dns.v1', Object.values(DNS)],
    ['apikeys.v2', Object.values(APIKEYS)],
  ])('%s: every declared field exists with its proto3 JSON type', { timeout: 5 * 60_000 }, async (api, messages) => {
    const doc = JSON.parse(await readFile(join(await discoveryDocuments(), `${api}.json`), 'utf8')) as { revision: string; schemas: Record<string, DiscoverySchema> };
    const problems = messages.flatMap((m) => messageProblems(doc, m));
    expect(problems).toEqual([]);
    console.log(`${api} (revision ${doc.revision}): ${messages.map((m) => `${m.name} (${Object.keys(m.fields).length} fields)`).join(', ')} match`);
  });
});
