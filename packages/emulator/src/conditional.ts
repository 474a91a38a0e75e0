/**
 * Conditional GETs as GitHub answers them: every answer carries an `ETag` that changes whenever the body
 * changes, a request whose `If-None-Match` names the current one gets `304 Not Modified` with no body, and a
 * 304 does not count against the primary rate limit (GitHub documents this for conditional requests).
 * Feeds, migration status and import status share this one rule.
 */
import { createHash } from 'node:crypto';
import type { RouteContext, RouteOptions, RouteResult } from './router';

/** Route options of a conditional GET: a 304 is not counted against the primary limit. */
export const NOT_MODIFIED_NOT_COUNTED: RouteOptions = { countsAgainstPrimary: (r: RouteResult) => r.status !== 304 };

/** Whether an `If-None-Match` header names `etag` (weak comparison, as RFC 9110 says for this header; `*` matches). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (v: string) => v.trim().replace(/^W\//, '');
  return header.split(',').some((v) => v.trim() === '*' || bare(v) === bare(etag));
}

/** A weak ETag of some text (the serialized body or what it is made of). */
export function weakEtag(text: string): string {
  return `W/"${createHash('sha1').update(text).digest('hex')}"`;
}

/** Answers `body` (200) or a 304 when the request's `If-None-Match` names the body's current ETag. */
export function conditionalJson(rc: Pick<RouteContext, 'headers'>, body: unknown, headers: Record<string, string> = {}): RouteResult {
  const etag = weakEtag(JSON.stringify(body));
  const all = { ...headers, etag, 'cache-control': 'private, max-age=60, s-maxage=60', vary: 'Accept, Authorization' };
  if (etagMatches(rc.headers['if-none-match'], etag)) return { status: 304, headers: all };
  return { status: 200, headers: all, body };
}
