/**
 * A local receiver for the HTTP feed sink: verifies `X-Hub-Signature-256` (HMAC-SHA256 of the raw
 * body, the scheme of spec 001's webhook deliveries), answers 401 when it does not match, and stores
 * each event once by id (a re-sent batch is acknowledged without storing anything twice), which is
 * the idempotent-receiver contract the sink relies on. Failures can be injected before or after the
 * batch is stored, to exercise the sink's retries.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { matchesSha256, SHA256_HEADER } from '../github/signature';
import { DEFAULT_MAX_REQUEST_BYTES, readRequestBody, refuseTooLarge, RequestTooLarge } from '../request-body';

export interface ReceivedBatch {
  feed: string;
  delivery: string;
  eventIds: string[];
  /** Events of the batch stored for the first time. */
  stored: number;
  /** Events of the batch already stored before (a re-sent batch). */
  alreadyStored: number;
  receivedAt: number;
}

export interface SinkReceiverStats {
  requests: number;
  /** Requests refused for a missing or wrong signature. */
  badSignatures: number;
  /** Requests answered with an injected failure. */
  injectedFailures: number;
  /** Event ids received again after they had been stored (re-sent by a retry, not stored twice). */
  resentEvents: number;
}

export interface InjectedFailure {
  /** `before-store`: fail without storing; `after-store`: store, then fail (the sender cannot know it arrived). */
  when: 'before-store' | 'after-store';
  status: number;
  times: number;
}

export class SinkReceiver {
  readonly batches: ReceivedBatch[] = [];
  /** Stored events by id, in arrival order. */
  readonly events = new Map<string, Record<string, unknown> & { id: string }>();
  readonly stats: SinkReceiverStats = { requests: 0, badSignatures: 0, injectedFailures: 0, resentEvents: 0 };
  private readonly feedOf = new Map<string, string>();
  private failures: InjectedFailure[] = [];
  private server?: Server;
  url = '';

  constructor(private readonly opts: { secret: string; host?: string; port?: number; clock?: () => number; maxRequestBytes?: number }) {}

  /** Fails the next `times` requests (after any failures already queued). */
  failNext(failure: Partial<InjectedFailure> & { times: number }): void {
    this.failures.push({ when: failure.when ?? 'before-store', status: failure.status ?? 503, times: failure.times });
  }

  /** Ids of the stored events (of one feed, or all), in arrival order. */
  eventIds(feed?: string): string[] {
    return [...this.events.keys()].filter((id) => feed === undefined || this.feedOf.get(id) === feed);
  }

  async listen(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    const host = this.opts.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.opts.port ?? 0, host, resolve);
    });
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    let raw: Buffer;
    try {
      raw = await readRequestBody(req, this.opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES);
    } catch (err) {
      this.stats.requests++;
      if (err instanceof RequestTooLarge) return refuseTooLarge(req, res, { message: err.message });
      throw err;
    }
    this.stats.requests++;
    if (req.method !== 'POST') return reply(405, { message: 'POST only' });
    const signature = req.headers[SHA256_HEADER];
    if (!matchesSha256(this.opts.secret, raw, Array.isArray(signature) ? signature[0] : signature)) {
      this.stats.badSignatures++;
      return reply(401, { message: 'signature does not match the body' });
    }
    let batch: { feed?: unknown; delivery?: unknown; events?: unknown };
    try {
      batch = JSON.parse(raw.toString('utf8'));
    } catch {
      return reply(400, { message: 'body is not JSON' });
    }
    if (typeof batch.feed !== 'string' || !Array.isArray(batch.events)) return reply(422, { message: 'expected { feed, delivery, events: [...] }' });
    const failure = this.failures[0];
    const fail = () => {
      this.stats.injectedFailures++;
      failure.times--;
      if (failure.times <= 0) this.failures.shift();
      reply(failure.status, { message: 'injected failure' });
    };
    if (failure?.when === 'before-store') return fail();
    const events = batch.events as (Record<string, unknown> & { id: string })[];
    let stored = 0;
    let alreadyStored = 0;
    for (const event of events) {
      const id = String(event.id);
      if (this.events.has(id)) {
        alreadyStored++;
        this.stats.resentEvents++;
      } else {
        this.events.set(id, event);
        this.feedOf.set(id, batch.feed);
        stored++;
      }
    }
    this.batches.push({
      feed: batch.feed,
      delivery: String(batch.delivery ?? ''),
      eventIds: events.map((e) => String(e.id)),
      stored,
      alreadyStored,
      receivedAt: (this.opts.clock ?? Date.now)(),
    });
    if (failure?.when === 'after-store') return fail();
    reply(200, { stored, alreadyStored });
  }
}

export async function startSinkReceiver(opts: { secret: string; host?: string; port?: number; maxRequestBytes?: number }): Promise<SinkReceiver> {
  return new SinkReceiver(opts).listen();
}
