/**
 * The `filter` of Cloud Logging's `GET /v2/{parent}/locations/{location}/operations`, which the real API
 * requires: it must name a `request_type` (`request_type = "CreateBucket"`; the documented types are
 * CopyLogEntries, CreateBucket and UpdateBucket, and the emulator also takes the method names
 * CreateBucketAsync and UpdateBucketAsync), and may add `operation_start_time` / `operation_finish_time`
 * comparisons (`>=`, `>`, `<=`, `<`; a timestamp with a time of day must be quoted) and `operation_state`
 * (`=`, `!=`), joined by the case-sensitive keyword `AND`. A listing without it is a 400 INVALID_ARGUMENT,
 * so a caller that forgets it fails here as it would in production.
 */
import { googleError } from './errors';

/** What a filter is matched against: one operation as the listing sees it. */
export interface FilterableOperation {
  requestType: 'CreateBucket' | 'UpdateBucket';
  startTime: number;
  /** Absent while the operation runs. */
  finishTime?: number;
  /** Without the `OPERATION_STATE_` prefix (`SUCCEEDED`). */
  state: string;
}

const REQUEST_TYPES: Record<string, FilterableOperation['requestType'] | 'CopyLogEntries'> = {
  CopyLogEntries: 'CopyLogEntries',
  CreateBucket: 'CreateBucket',
  CreateBucketAsync: 'CreateBucket',
  UpdateBucket: 'UpdateBucket',
  UpdateBucketAsync: 'UpdateBucket',
};
const STATES = ['SCHEDULED', 'WAITING_FOR_PERMISSIONS', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'PENDING'];
const TERM = /^([A-Za-z_]+)\s*(>=|<=|!=|=|>|<)\s*(.+)$/;

function invalid(description: string): Error {
  return googleError(400, `Invalid filter: ${description}`, { status: 'INVALID_ARGUMENT', fieldViolations: [{ field: 'filter', description }] });
}

function unquote(value: string): { text: string; quoted: boolean } {
  const m = /^"(.*)"$/.exec(value.trim());
  return m ? { text: m[1], quoted: true } : { text: value.trim(), quoted: false };
}

/** A timestamp in the forms the API documents (RFC 3339 / ISO 8601, a date alone, `+0000` offsets). */
function timeOf(field: string, raw: string): number {
  const { text, quoted } = unquote(raw);
  const hasTime = text.includes('T') || text.includes(':');
  if (hasTime && !quoted) throw invalid(`the timestamp of ${field} contains a time, so it must be quoted: ${field}>="${text}"`);
  const ms = Date.parse(text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (Number.isNaN(ms)) throw invalid(`"${text}" is not an RFC 3339 or ISO 8601 timestamp (${field}).`);
  return ms;
}

function compare(a: number, op: string, b: number): boolean {
  return op === '>=' ? a >= b : op === '>' ? a > b : op === '<=' ? a <= b : a < b;
}

/** Parses a listing's filter into a predicate; a missing or malformed filter is the API's 400. */
export function operationFilter(filter: string | null): (op: FilterableOperation) => boolean {
  if (filter === null || filter.trim() === '') {
    throw invalid('the filter is required and must specify the request_type, e.g. request_type = "CreateBucket".');
  }
  const tests: ((op: FilterableOperation) => boolean)[] = [];
  let requestType: string | undefined;
  for (const term of filter.trim().split(/\s+AND\s+/)) {
    const m = TERM.exec(term.trim());
    if (!m) throw invalid(`cannot parse "${term.trim()}"; terms are field, operator and value, joined by AND.`);
    const [, field, op, raw] = m;
    if (field === 'request_type') {
      const type = REQUEST_TYPES[unquote(raw).text];
      if (op !== '=' || type === undefined) throw invalid(`request_type supports only "=" with one of ${Object.keys(REQUEST_TYPES).join(', ')}.`);
      if (requestType !== undefined) throw invalid('request_type may be given once.');
      requestType = type;
      tests.push((o) => o.requestType === type);
    } else if (field === 'operation_start_time' || field === 'operation_finish_time') {
      if (!['>=', '>', '<=', '<'].includes(op)) throw invalid(`${field} supports >=, >, <= and <.`);
      const at = timeOf(field, raw);
      tests.push(field === 'operation_start_time' ? (o) => compare(o.startTime, op, at) : (o) => o.finishTime !== undefined && compare(o.finishTime, op, at));
    } else if (field === 'operation_state') {
      const state = unquote(raw).text.replace(/^OPERATION_STATE_/, '');
      if ((op !== '=' && op !== '!=') || !STATES.includes(state)) throw invalid(`operation_state supports = and != with one of ${STATES.join(', ')}.`);
      tests.push((o) => (o.state === state) === (op === '='));
    } else {
      throw invalid(`unsupported field "${field}"; supported are request_type, operation_start_time, operation_finish_time and operation_state.`);
    }
  }
  if (requestType === undefined) throw invalid('the filter must specify the request_type, e.g. request_type = "CreateBucket".');
  return (op) => tests.every((t) => t(op));
}
