/**
 * Google's error model in the HTTP core: body parsing (RetryInfo, ErrorInfo, BadRequest), the Google retry
 * policy as a pure decision, and the Google client over undici's MockAgent with an injected clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { googleRetryPolicy, parseDurationMs, parseGoogleErrorBody, etagMismatchMessage } from '../../src/http/google';
import { decideNetworkRetry, decideRetry, FailureType, githubRetryPolicy, type ResponseFacts } from '../../src/http/retry-policy';
import { createGoogleClient } from '../../src/http/google';
import type { HttpFailureDetails } from '../../src/http/failures';
import { failureOf } from '../helpers/failures';

const START = Date.UTC(2026, 2, 1, 12, 0, 0);
const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

function googleBody(code: number, status: string, message: string, details: unknown[] = []) {
  return { error: { code, status, message, details } };
}

function facts(status: number, body: unknown, headers: Record<string, string> = {}): ResponseFacts {
  return { status, headers, ...parseGoogleErrorBody(body) };
}

describe('parseDurationMs', () => {
  it('reads protobuf JSON durations in seconds, fractional ones included', () => {
    expect(parseDurationMs('4s')).toBe(4000);
    expect(parseDurationMs('0.5s')).toBe(500);
    expect(parseDurationMs('1.000340012s')).toBe(1000);
  });

  it('reads the object form with seconds and nanos', () => {
    expect(parseDurationMs({ seconds: '2', nanos: 500_000_000 })).toBe(2500);
    expect(parseDurationMs({ seconds: 3 })).toBe(3000);
  });

  it('rejects values that are not durations', () => {
    expect(parseDurationMs('4')).toBeUndefined();
    expect(parseDurationMs('-1s')).toBeUndefined();
    expect(parseDurationMs(4)).toBeUndefined();
    expect(parseDurationMs({})).toBeUndefined();
  });
});

describe('parseGoogleErrorBody', () => {
  it('reads the message, the canonical status, ErrorInfo.reason and RetryInfo.retryDelay', () => {
    const parsed = parseGoogleErrorBody(
      googleBody(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for quota metric', [
        { '@type': ERROR_INFO, reason: 'RATE_LIMIT_EXCEEDED', domain: 'googleapis.com', metadata: { quota_limit: 'WriteRequestsPerMinute' } },
        { '@type': RETRY_INFO, retryDelay: '4s' },
      ]),
    );
    expect(parsed).toEqual({ message: 'Quota exceeded for quota metric', apiStatus: 'RESOURCE_EXHAUSTED', reason: 'RATE_LIMIT_EXCEEDED', bodyRetryDelayMs: 4000 });
  });

  it('falls back to the legacy errors[].reason, then to the status, when there is no ErrorInfo', () => {
    expect(parseGoogleErrorBody({ error: { code: 409, message: 'exists', errors: [{ domain: 'global', reason: 'alreadyExists' }] } }).reason).toBe('alreadyExists');
    expect(parseGoogleErrorBody(googleBody(404, 'NOT_FOUND', 'gone')).reason).toBe('NOT_FOUND');
  });

  it('appends BadRequest field violations to the message', () => {
    const parsed = parseGoogleErrorBody(
      googleBody(400, 'INVALID_ARGUMENT', 'Invalid bucket', [
        { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'bucket.retention_days', description: 'must be at most 3650' }] },
      ]),
    );
    expect(parsed.message).toBe('Invalid bucket — bucket.retention_days: must be at most 3650');
  });

  it('accepts the array form and ignores bodies that are not Google errors', () => {
    expect(parseGoogleErrorBody([googleBody(503, 'UNAVAILABLE', 'try later')]).apiStatus).toBe('UNAVAILABLE');
    expect(parseGoogleErrorBody('<html>bad gateway</html>')).toEqual({});
    expect(parseGoogleErrorBody({ message: 'github style' })).toEqual({});
  });
});

describe('googleRetryPolicy', () => {
  const ctx = { nowMs: START, attempt: 1 };

  it('waits as long as RetryInfo asks on 429 RESOURCE_EXHAUSTED', () => {
    const d = decideRetry(facts(429, googleBody(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded', [{ '@type': RETRY_INFO, retryDelay: '0.5s' }])), ctx, googleRetryPolicy);
    expect(d).toMatchObject({ kind: 'retry', type: FailureType.ResourceExhausted, delayMs: 500, blockedUntilMs: START + 500, status: 429 });
  });

  it('lets retry-after win over RetryInfo', () => {
    const d = decideRetry(facts(429, googleBody(429, 'RESOURCE_EXHAUSTED', 'q', [{ '@type': RETRY_INFO, retryDelay: '4s' }]), { 'retry-after': '7' }), ctx, googleRetryPolicy);
    expect(d).toMatchObject({ kind: 'retry', delayMs: 7000 });
  });

  it('backs off exponentially from 5 s on 429 without any hint, and gives up after the bounded attempts', () => {
    const f = facts(429, googleBody(429, 'RESOURCE_EXHAUSTED', 'q'));
    expect(decideRetry(f, { nowMs: START, attempt: 1 }, googleRetryPolicy)).toMatchObject({ kind: 'retry', delayMs: 5000 });
    expect(decideRetry(f, { nowMs: START, attempt: 3 }, googleRetryPolicy)).toMatchObject({ kind: 'retry', delayMs: 20_000 });
    expect(decideRetry(f, { nowMs: START, attempt: googleRetryPolicy.maxRateLimitAttempts }, googleRetryPolicy)).toMatchObject({
      kind: 'permanent',
      type: FailureType.RateLimitExhausted,
    });
  });

  it('retries 503 UNAVAILABLE honouring RetryInfo, and 504 and 500 with backoff', () => {
    const unavailable = facts(503, googleBody(503, 'UNAVAILABLE', 'The service is currently unavailable.', [{ '@type': RETRY_INFO, retryDelay: '3s' }]));
    expect(decideRetry(unavailable, ctx, googleRetryPolicy)).toMatchObject({ kind: 'retry', type: FailureType.Server, delayMs: 3000 });
    expect(decideRetry(facts(504, googleBody(504, 'DEADLINE_EXCEEDED', 'deadline')), { nowMs: START, attempt: 2 }, googleRetryPolicy)).toMatchObject({
      kind: 'retry',
      delayMs: 2000,
    });
    expect(decideRetry(facts(500, googleBody(500, 'INTERNAL', 'oops')), { nowMs: START, attempt: 7 }, googleRetryPolicy)).toMatchObject({
      kind: 'retry',
      delayMs: googleRetryPolicy.transientBackoff.maxMs,
    });
  });

  it('retries connection faults with backoff', () => {
    expect(decideNetworkRetry('ECONNRESET', { nowMs: START, attempt: 3 }, googleRetryPolicy)).toMatchObject({ kind: 'retry', type: FailureType.Network, delayMs: 4000 });
  });

  it.each([
    [400, 'INVALID_ARGUMENT', FailureType.BadRequest],
    [400, 'FAILED_PRECONDITION', FailureType.FailedPrecondition],
    [403, 'PERMISSION_DENIED', FailureType.Forbidden],
    [404, 'NOT_FOUND', FailureType.NotFound],
    [409, 'ALREADY_EXISTS', FailureType.AlreadyExists],
    [409, 'ABORTED', FailureType.EtagMismatch],
    [401, 'UNAUTHENTICATED', FailureType.Authentication],
  ])('treats %i %s as permanent (%s) and keeps ErrorInfo.reason', (status, apiStatus, type) => {
    const body = googleBody(status, apiStatus, 'no', [{ '@type': ERROR_INFO, reason: 'SOME_REASON', domain: 'example.googleapis.com' }]);
    expect(decideRetry(facts(status, body), ctx, googleRetryPolicy)).toEqual({ kind: 'permanent', type, status, message: 'no', reason: 'SOME_REASON' });
  });

  it('leaves the GitHub policy as it was: a 409 there is a ConflictError whatever the body says', () => {
    const f: ResponseFacts = { status: 409, headers: {}, message: 'conflict', apiStatus: 'ABORTED' };
    expect(decideRetry(f, ctx, githubRetryPolicy)).toMatchObject({ kind: 'permanent', type: FailureType.Conflict });
  });
});

describe('the Google client', () => {
  const API = 'https://apikeys.example.test';
  let agent: MockAgent;
  let now: number;

  beforeEach(() => {
    agent = new MockAgent({ enableCallHistory: true });
    agent.disableNetConnect();
    now = START;
  });
  afterEach(async () => {
    agent.assertNoPendingInterceptors();
    await agent.close();
  });

  const client = () => createGoogleClient({ baseUrl: API, token: () => 'static-token', dispatcher: agent, clock: () => now });


  it('turns a 429 with RetryInfo into a retryable failure whose next retry waits as asked, and sends nothing until then', async () => {
    agent
      .get(API)
      .intercept({ path: '/v2/operations/x', method: 'GET' })
      .reply(429, googleBody(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded', [{ '@type': RETRY_INFO, retryDelay: '4s' }]), { headers: { 'content-type': 'application/json' } });
    const c = client();
    const first = await failureOf(c.request({ method: 'GET', path: '/v2/operations/x' }));
    expect(first.nonRetryable).toBe(false);
    expect(first.nextRetryDelay).toBe(4000);
    expect(first.type).toBe(FailureType.ResourceExhausted);
    expect((first.details?.[0] as HttpFailureDetails).reason).toBe('RESOURCE_EXHAUSTED');

    now += 1000;
    const gated = await failureOf(c.request({ method: 'GET', path: '/v2/operations/x' }));
    expect(gated.nextRetryDelay).toBe(3000);
    expect(agent.getCallHistory()?.calls()).toHaveLength(1);
  });

  it('turns a 409 ABORTED into a non-retryable EtagMismatchError that keeps the reason', async () => {
    agent
      .get(API)
      .intercept({ path: '/v2/projects/p/locations/global/keys/k?etag=W%2F%22old%22', method: 'DELETE' })
      .reply(409, googleBody(409, 'ABORTED', 'etag mismatch', [{ '@type': ERROR_INFO, reason: 'ETAG_MISMATCH', domain: 'apikeys.googleapis.com' }]), {
        headers: { 'content-type': 'application/json' },
      });
    const failure = await failureOf(client().request({ method: 'DELETE', path: '/v2/projects/p/locations/global/keys/k', query: { etag: 'W/"old"' } }));
    expect(failure.type).toBe(FailureType.EtagMismatch);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('etag mismatch');
    expect((failure.details?.[0] as HttpFailureDetails)).toMatchObject({ status: 409, reason: 'ETAG_MISMATCH', method: 'DELETE' });
  });

  it('sends the static token as a bearer token', async () => {
    agent.get(API).intercept({ path: '/v2/operations/y', method: 'GET' }).reply(200, { name: 'operations/y', done: true }, { headers: { 'content-type': 'application/json' } });
    const res = await client().request<{ done: boolean }>({ method: 'GET', path: '/v2/operations/y' });
    expect(res.body.done).toBe(true);
    expect((agent.getCallHistory()?.calls()[0]?.headers as Record<string, string>).authorization).toBe('Bearer static-token');
  });
});

describe('etagMismatchMessage', () => {
  it('tells the user the resource changed since they read it and what to do', () => {
    const message = etagMismatchMessage('API key projects/p/locations/global/keys/k', 'W/"abc"');
    expect(message).toContain('changed since you read it');
    expect(message).toContain('W/"abc"');
    expect(message).toContain('read it again');
  });
});
