/**
 * Google-style errors for the emulated Google services: the canonical `status` name, an `ErrorInfo` with a
 * machine-readable reason, a `BadRequest` with field violations, an optional `RetryInfo`, and (for Cloud DNS v1) the legacy `errors[]` array.
 */
import { EmulatorHttpError } from '../http-error';
import { ProtoJsonError, readProto, type ProtoMessage } from './proto-json';

export const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';
export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

export interface GoogleErrorOptions {
  /** Canonical status name when the HTTP status alone is ambiguous (409 → ALREADY_EXISTS or ABORTED). */
  status?: string;
  /** `ErrorInfo.reason`, e.g. `API_KEY_NOT_FOUND`. */
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
  /** `RetryInfo.retryDelay` in seconds. */
  retryDelaySeconds?: number;
  /** A `BadRequest` detail naming the offending request fields. */
  fieldViolations?: { field: string; description: string }[];
  /** Cloud DNS v1 style `errors: [{ domain, reason, message }]`. */
  legacyReason?: string;
}

/** The `extra` fields of a Google error body (merged into `error`). */
export function googleErrorExtra(message: string, opts: GoogleErrorOptions): Record<string, unknown> {
  const details: Record<string, unknown>[] = [];
  if (opts.reason) {
    details.push({ '@type': ERROR_INFO_TYPE, reason: opts.reason, domain: opts.domain ?? 'googleapis.com', metadata: opts.metadata ?? {} });
  }
  if (opts.fieldViolations) details.push({ '@type': BAD_REQUEST_TYPE, fieldViolations: opts.fieldViolations });
  if (opts.retryDelaySeconds !== undefined) details.push({ '@type': RETRY_INFO_TYPE, retryDelay: `${opts.retryDelaySeconds}s` });
  return {
    ...(opts.status ? { status: opts.status } : {}),
    ...(details.length > 0 ? { details } : {}),
    ...(opts.legacyReason ? { errors: [{ domain: 'global', reason: opts.legacyReason, message }] } : {}),
  };
}

export function googleError(httpStatus: number, message: string, opts: GoogleErrorOptions = {}): EmulatorHttpError {
  return new EmulatorHttpError(httpStatus, message, googleErrorExtra(message, opts));
}

/** RFC 3339 timestamp of emulator time. */
export function timestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/** A request body read as `message` (proto3 JSON, `proto-json.ts`); what the reader refuses is Google's 400 `INVALID_ARGUMENT`. */
export function readBody(message: ProtoMessage, body: unknown): Record<string, unknown> {
  try {
    return readProto(message, body);
  } catch (err) {
    if (err instanceof ProtoJsonError) throw googleError(400, err.message, { status: 'INVALID_ARGUMENT' });
    throw err;
  }
}
