/**
 * The conditional status poll of GitHub's long processes (migration export, source import): `If-None-Match`
 * with the last answer's ETag through the HTTP core's support for it; a 304 comes back as "not modified"
 * (GitHub does not count it against the primary limit), a 200 as the summarised state with its new ETag.
 */
import { githubFor, type ActivityDeps } from './context';
import { expectShape, type Shape } from '../http/answer';
import type { QueryValue } from '../http/api-client';
import type { Polled } from '../common/poll-schedule';

export async function conditionalPoll<Body, T>(
  deps: ActivityDeps,
  req: { path: string; query?: Record<string, QueryValue>; etag?: string; shape: Shape },
  summarize: (body: Body) => T,
): Promise<Polled<T>> {
  const res = await githubFor(deps).request<Body>({ method: 'GET', path: req.path, query: req.query, ifNoneMatch: req.etag });
  const etag = res.headers.etag;
  if (res.notModified) return { notModified: true, etag: etag ?? req.etag };
  return { ...summarize(expectShape<Body>(res, 'GET', req.shape)), ...(etag ? { etag } : {}) };
}
