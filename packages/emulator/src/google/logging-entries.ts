/**
 * Cloud Logging `POST /v2/entries:write` (spec 000), mounted on the emulator's Google logging service:
 * validates entries the way the API does (a `logName` of a known parent form, a monitored resource, one
 * payload, string label values), applies request-level defaults, and stores them. Entries with the same
 * `logName`, `insertId` and `timestamp` are one entry (Cloud Logging's de-duplication), so a retried
 * write stores nothing twice. Tests read the store back through the returned inspection API.
 */
import type { Router, RouteContext, RouteResult } from '../router';
import { EmulatorHttpError } from '../http-error';
import { refill, type Durable } from '../module';
import { LOGGING, ProtoJsonError, readProto, writeProto } from './proto-json';

export interface StoredLogEntry {
  logName: string;
  resource: { type: string; labels?: Record<string, string> };
  timestamp: string;
  receiveTimestamp: string;
  insertId: string;
  labels: Record<string, string>;
  severity?: string;
  jsonPayload?: Record<string, unknown>;
  textPayload?: string;
}

const LOG_NAME = /^(projects|organizations|folders|billingAccounts)\/[^/]+\/logs\/[^/]+$/;
/** The API accepts at most this many entries per call (and ~10 MB). */
const MAX_ENTRIES = 1000;

function invalid(message: string): EmulatorHttpError {
  return new EmulatorHttpError(400, message);
}

export function registerLoggingEntryRoutes(router: Router) {
  const entries: StoredLogEntry[] = [];
  const index = new Set<string>();
  let writes = 0;
  let duplicatesDropped = 0;

  const write = ({ body, now }: RouteContext): RouteResult => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('request body must be a JSON object');
    let req: Record<string, unknown>;
    try {
      req = readProto(LOGGING.WriteLogEntriesRequest, body);
    } catch (err) {
      if (err instanceof ProtoJsonError) throw invalid(err.message);
      throw err;
    }
    const requested = (req.entries as Record<string, unknown>[] | undefined) ?? [];
    if (requested.length === 0) throw invalid('entries must be a non-empty list');
    if (requested.length > MAX_ENTRIES) throw invalid(`at most ${MAX_ENTRIES} entries per request`);
    const defaultLabels = (req.labels as Record<string, string> | undefined) ?? {};
    const prepared: StoredLogEntry[] = requested.map((e, i) => {
      const logName = (e.logName ?? req.logName) as string | undefined;
      if (typeof logName !== 'string' || !LOG_NAME.test(logName)) throw invalid(`entries[${i}].logName must be projects/P/logs/LOG_ID (or an organization, folder or billing account)`);
      const resource = (e.resource ?? req.resource) as StoredLogEntry['resource'] | undefined;
      if (!resource || typeof resource.type !== 'string') throw invalid(`entries[${i}].resource.type is required`);
      const payloads = ['jsonPayload', 'textPayload', 'protoPayload'].filter((p) => e[p] !== undefined);
      if (payloads.length > 1) throw invalid(`entries[${i}] has more than one payload`);
      if (e.jsonPayload !== undefined && (typeof e.jsonPayload !== 'object' || e.jsonPayload === null || Array.isArray(e.jsonPayload))) throw invalid(`entries[${i}].jsonPayload must be an object`);
      const timestamp = e.timestamp === undefined ? new Date(now).toISOString() : String(e.timestamp);
      if (Number.isNaN(Date.parse(timestamp))) throw invalid(`entries[${i}].timestamp is not an RFC 3339 timestamp`);
      return {
        logName,
        resource,
        timestamp: new Date(Date.parse(timestamp)).toISOString(),
        receiveTimestamp: new Date(now).toISOString(),
        insertId: typeof e.insertId === 'string' && e.insertId !== '' ? e.insertId : `emu-${now}-${entries.length + i}`,
        labels: { ...defaultLabels, ...(e.labels as Record<string, string> | undefined) },
        severity: e.severity as string | undefined,
        jsonPayload: e.jsonPayload as Record<string, unknown> | undefined,
        textPayload: e.textPayload as string | undefined,
      };
    });
    writes++;
    if (req.dryRun === true) return { status: 200, body: writeProto(LOGGING.WriteLogEntriesResponse, {}) };
    for (const entry of prepared) {
      const key = `${entry.logName}\u0000${entry.insertId}\u0000${entry.timestamp}`;
      if (index.has(key)) {
        duplicatesDropped++;
        continue;
      }
      index.add(key);
      entries.push(entry);
    }
    return { status: 200, body: writeProto(LOGGING.WriteLogEntriesResponse, {}) };
  };

  router.post('/v2/entries:write', write);

  return {
    /** Stored entries, in the order written (optionally of one log). */
    entries(logName?: string): StoredLogEntry[] {
      return entries.filter((e) => logName === undefined || e.logName === logName);
    },
    /** Accepted `entries:write` calls. */
    writes: () => writes,
    /** Entries not stored because an identical one (logName, insertId, timestamp) already was. */
    duplicatesDropped: () => duplicatesDropped,
    durable: {
      snapshot: () => ({ entries, index, writes, duplicatesDropped }),
      restore(saved) {
        refill(entries, saved.entries);
        refill(index, saved.index);
        ({ writes, duplicatesDropped } = saved);
      },
    } satisfies Durable<{ entries: typeof entries; index: typeof index; writes: number; duplicatesDropped: number }>,
  };
}
