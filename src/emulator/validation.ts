/**
 * Strict request validation, as the real service does it: unknown fields and wrong types are a 422 with
 * a message naming the field, never silently ignored.
 */
import { EmulatorHttpError } from './http-error';

export type FieldType = 'string' | 'boolean' | 'integer' | 'number' | 'string[]' | 'object' | 'array';

export interface BodySchema {
  fields: Record<string, FieldType>;
  required?: string[];
}

function typeOk(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string[]':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
  }
}

/** Validates a JSON body against a schema; throws a 422 (`status`) describing the first problem. */
export function validateBody(body: unknown, schema: BodySchema, status = 422): Record<string, unknown> {
  if (body === undefined) body = {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new EmulatorHttpError(status, 'Invalid request.\n\nBody must be a JSON object.');
  }
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(key in schema.fields)) throw new EmulatorHttpError(status, `Invalid request.\n\n"${key}" is not a permitted key.`);
  }
  for (const key of schema.required ?? []) {
    if (record[key] === undefined) throw new EmulatorHttpError(status, `Invalid request.\n\n"${key}" wasn't supplied.`);
  }
  for (const [key, type] of Object.entries(schema.fields)) {
    const value = record[key];
    if (value !== undefined && !typeOk(value, type)) {
      throw new EmulatorHttpError(status, `Invalid request.\n\nFor "${key}", ${JSON.stringify(value)} is not ${type === 'integer' ? 'an integer' : `a ${type}`}.`);
    }
  }
  return record;
}
