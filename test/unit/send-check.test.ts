/**
 * The last look at the rate limits (`send-check.ts`), against a real loopback server and an undici Agent with one
 * connection per origin: a request let through while the API was open waits in undici's queue behind another, whose
 * answer closes the API. What the server receives is the proof: the queued request never reaches it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { ApiClient } from '../../src/http/api-client';
import { GITHUB_DEFAULT_HEADERS, parseGithubErrorBody } from '../../src/http/github';
import { FailureType } from '../../src/http/retry-policy';
import type { BudgetTicket, RequestBudget, RequestKind } from '../../src/http/request-budget';
import type { ApiObservation } from '../../src/http/observer';
import { failureOf } from '../helpers/failures';

const SECONDARY = 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';

let server: Server;
let agent: Agent;
let baseUrl: string;
/** Every request the server received, as `METHOD path`, in order. */
let received: string[];
/** Answers the request for `path` the server is holding, once the test says how. */
let held: Map<string, (answer: (res: ServerResponse) => void) => void>;
let arrived: Map<string, () => void>;

function whenArrived(path: string): Promise<void> {
  return new Promise((resolve) => arrived.set(path, resolve));
}

beforeEach(async () => {
  received = [];
  held = new Map();
  arrived = new Map();
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    held.set(req.url ?? '', (answer) => answer(res));
    arrived.get(req.url ?? '')?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // One connection, no pipelining: a second request waits in undici's queue until the first is answered.
  agent = new Agent({ connections: 1, pipelining: 1 });
});

afterEach(async () => {
  await agent.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** The requests the client reported admitted (`ApiObservation`), as `METHOD path`: each as it was written. */
let admitted: string[];

function client(budget?: RequestBudget): ApiClient {
  admitted = [];
  const observer = { observe: (o: ApiObservation) => void (o.kind === 'admitted' && admitted.push(`${o.method} ${o.path}`)) };
  return new ApiClient({ baseUrl, token: () => 'token', defaultHeaders: { ...GITHUB_DEFAULT_HEADERS }, parseErrorBody: parseGithubErrorBody, dispatcher: agent, budget, observer });
}

function answer(path: string, status: number, headers: Record<string, string>, body: unknown): void {
  const respond = held.get(path);
  if (!respond) throw new Error(`no request for ${path} is held`);
  respond((res) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body)));
}

describe('the last look at the limits, as undici writes a request', () => {
  it('does not send a request that waited in the queue while another answer closed the API', async () => {
    const api = client();
    const first = api.request({ method: 'GET', path: '/first' }).catch((err: unknown) => err);
    await whenArrived('/first');
    // Let through while the API is open: it is now in undici's queue, behind /first on the only connection.
    const queued = failureOf(api.request({ method: 'GET', path: '/queued' }));
    answer('/first', 403, { 'retry-after': '30' }, { message: SECONDARY });

    const refused = await queued;
    expect(refused.type).toBe(FailureType.PrimaryRateLimit);
    expect(refused.nonRetryable).toBe(false);
    expect(refused.message).toContain('not sent');
    // The wait left, from the answer that closed the API (30 s), less the moments since.
    expect(refused.nextRetryDelay).toBeGreaterThan(25_000);
    expect(refused.nextRetryDelay).toBeLessThanOrEqual(30_000);
    await first;
    expect(received).toEqual(['GET /first']);
    // Reported admitted as it was written: the one refused at the socket never was.
    expect(admitted).toEqual(received);
  });

  it('sends the queued request when the answer before it closed nothing', async () => {
    const api = client();
    const first = api.request({ method: 'GET', path: '/first' });
    await whenArrived('/first');
    const queued = api.request({ method: 'GET', path: '/queued' });
    const queuedArrived = whenArrived('/queued');
    answer('/first', 200, {}, { ok: 1 });
    await first;
    await queuedArrived;
    answer('/queued', 200, {}, { ok: 2 });
    expect((await queued).body).toEqual({ ok: 2 });
    expect(received).toEqual(['GET /first', 'GET /queued']);
    expect(admitted).toEqual(received);
  });

  it("asks the fleet's budget too: news it received while the request was queued keeps the request back", async () => {
    let closedUntil = 0;
    const asked: RequestKind[] = [];
    const budget: RequestBudget = {
      acquire: async (): Promise<BudgetTicket> => ({ done: () => {} }),
      closedForMs: (kind) => {
        asked.push(kind);
        return Math.max(0, closedUntil - Date.now());
      },
    };
    const api = client(budget);
    const first = api.request({ method: 'GET', path: '/first' });
    await whenArrived('/first');
    const queued = failureOf(api.request({ method: 'POST', path: '/orgs/octo-org/migrations', body: {} }));
    // The governor's word reaches this process while the mutation waits for the connection.
    closedUntil = Date.now() + 60_000;
    answer('/first', 200, {}, { ok: 1 });
    await first;

    const refused = await queued;
    expect(refused.type).toBe(FailureType.PrimaryRateLimit);
    expect(refused.nextRetryDelay).toBeGreaterThan(50_000);
    expect(asked).toEqual(['read', 'mutation']);
    expect(received).toEqual(['GET /first']);
  });
});
