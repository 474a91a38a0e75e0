/**
 * How the emulator answers a request a fault rule picked (`faults.ts` decides which rule applies): a status
 * (JSON, or a proxy's HTML page), a malformed answer, a redirect, a reset connection, or a delay before normal handling.
 */
import type { IncomingMessage } from 'node:http';
import { type FaultRule, isMalformedRule, malformedAnswer } from './faults';
import type { RouteResult } from './router';
import { RETRY_INFO_TYPE } from './google/errors';

/** The page a load balancer or proxy answers with when the API behind it is down: not the API's JSON. */
function htmlErrorPage(status: number): string {
  return `<html>\r\n<head><title>${status} Bad Gateway</title></head>\r\n<body>\r\n<center><h1>${status} Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n`;
}

/** Applies one fault: answers (status, redirect, malformed), drops the connection (reset) or holds the request (slow). */
export async function applyFault(
  fault: FaultRule,
  req: IncomingMessage,
  fail: (status: number, message: string, extra?: Record<string, unknown>, headers?: Record<string, string>) => void,
  send: (result: RouteResult, headers: Record<string, string>) => void,
  handled?: RouteResult,
): Promise<'answered' | 'continue'> {
  if (isMalformedRule(fault)) {
    const answer = malformedAnswer(fault, handled);
    send({ status: answer.status, raw: answer.raw, headers: { ...(handled?.headers ?? {}), 'content-type': answer.contentType } }, {});
    return 'answered';
  }
  if (fault.kind === 'link') {
    // Only once the handler answered: before that there is nothing to add the link to.
    if (!handled) return 'continue';
    send({ ...handled, headers: { ...(handled.headers ?? {}), link: `<${fault.link ?? req.url ?? '/'}>; rel="next"` } }, {});
    return 'answered';
  }
  if (fault.kind === 'redirect') {
    send({ status: fault.status ?? 302, headers: { location: fault.location ?? req.url ?? '/' } }, {});
    return 'answered';
  }
  if (fault.kind === 'reset') {
    req.socket.destroy();
    return 'answered';
  }
  if (fault.kind === 'status' && fault.html) {
    const status = fault.status ?? 502;
    send({ status, raw: Buffer.from(htmlErrorPage(status)), headers: { 'content-type': 'text/html; charset=utf-8' } }, {});
    return 'answered';
  }
  if (fault.kind === 'status') {
    const headers: Record<string, string> = fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
    const extra = fault.retryInfoSeconds !== undefined ? { details: [{ '@type': RETRY_INFO_TYPE, retryDelay: `${fault.retryInfoSeconds}s` }] } : {};
    fail(fault.status ?? 500, fault.status === 503 ? 'Service Unavailable' : fault.status === 429 ? 'Too Many Requests' : 'Server Error', extra, headers);
    return 'answered';
  }
  await new Promise((r) => setTimeout(r, fault.delayMs ?? 1000));
  return 'continue';
}
