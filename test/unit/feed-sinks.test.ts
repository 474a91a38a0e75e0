/**
 * Feed sinks and what they talk to: the webhook signature scheme, the local receiver that verifies it,
 * the JSON-lines file's idempotent append, the HTTP sink's batches and failure types (undici MockAgent),
 * and the emulated Cloud Logging `entries:write` with its de-duplication.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MockAgent, request } from 'undici';
import { ApplicationFailure } from '@temporalio/common';
import { signBody, verifySignature } from '../../src/http/signature';
import { startSinkReceiver, type SinkReceiver } from '../../packages/emulator/src/sink/receiver';
import { appendEventsOnce, tailEventIds } from '../../src/processes/feed-poll/activities/sinks/file';
import { batchDeliveryId, postSignedBatches } from '../../src/processes/feed-poll/activities/sinks/http';
import { logEntriesFor } from '../../src/processes/feed-poll/activities/sinks/logging';
import { eventBatches } from '../../src/processes/feed-poll/activities/sinks/batches';
import type { FeedEvent } from '../../src/processes/feed-poll/model';
import { call, clockedEmulators } from '../helpers/emulator-http';

const ev = (id: number): FeedEvent =>
  ({ id: String(id), type: 'PushEvent', actor: { id: 1, login: 'octocat' }, repo: { id: 2, name: 'o/r' }, payload: {}, public: true, created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, id % 60)).toISOString() }) as unknown as FeedEvent;

describe('webhook signature', () => {
  it('matches GitHub’s documented test vector and rejects anything else', () => {
    const header = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    expect(signBody("It's a Secret to Everybody", 'Hello, World!')).toBe(header);
    expect(verifySignature("It's a Secret to Everybody", 'Hello, World!', header)).toBe(true);
    expect(verifySignature("It's a Secret to Everybody", 'Hello, World?', header)).toBe(false);
    expect(verifySignature('another secret', 'Hello, World!', header)).toBe(false);
    expect(verifySignature("It's a Secret to Everybody", 'Hello, World!', undefined)).toBe(false);
    expect(verifySignature("It's a Secret to Everybody", 'Hello, World!', 'sha1=abc')).toBe(false);
  });
});

describe('sink receiver', () => {
  let r: SinkReceiver | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });
  const post = (body: string, signature?: string) =>
    request(r!.url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(signature ? { 'x-hub-signature-256': signature } : {}) } });

  it('stores a signed batch, refuses a tampered one, and stores a re-sent batch only once', async () => {
    r = await startSinkReceiver({ secret: 's' });
    const body = JSON.stringify({ feed: '/events', delivery: 'd1', events: [ev(1), ev(2)] });
    expect((await post(body, signBody('s', body))).statusCode).toBe(200);
    const tampered = body.replace('"1"', '"9"');
    expect((await post(tampered, signBody('s', body))).statusCode).toBe(401);
    expect((await post(body)).statusCode).toBe(401);
    expect((await post(body, signBody('s', body))).statusCode).toBe(200);
    expect(r.eventIds('/events')).toEqual(['1', '2']);
    expect(r.stats).toMatchObject({ badSignatures: 2, resentEvents: 2 });
  });

  it('can fail after storing, so the sender cannot tell the batch arrived', async () => {
    r = await startSinkReceiver({ secret: 's' });
    r.failNext({ when: 'after-store', times: 1, status: 502 });
    const body = JSON.stringify({ feed: '/events', delivery: 'd1', events: [ev(3)] });
    expect((await post(body, signBody('s', body))).statusCode).toBe(502);
    expect(r.eventIds()).toEqual(['3']);
    expect((await post(body, signBody('s', body))).statusCode).toBe(200);
    expect(r.eventIds()).toEqual(['3']);
  });
});

describe('JSON-lines file sink', () => {
  it('appends each event once even when a batch is written again', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'sink-')), 'f', 'feed.jsonl');
    expect(await appendEventsOnce(path, '/events', [ev(1), ev(2), ev(3)])).toEqual({ written: 3, alreadyPresent: 0 });
    expect(await appendEventsOnce(path, '/events', [ev(2), ev(3), ev(4)])).toEqual({ written: 1, alreadyPresent: 2 });
    const lines = (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { feed: string; event: FeedEvent });
    expect(lines.map((l) => l.event.id)).toEqual(['1', '2', '3', '4']);
    expect(lines.every((l) => l.feed === '/events')).toBe(true);
  });

  it('cuts off a line left half-written by a crash and writes that event again', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'sink-')), 'feed.jsonl');
    await appendEventsOnce(path, '/events', [ev(1)]);
    const whole = await readFile(path, 'utf8');
    await writeFile(path, whole + JSON.stringify({ feed: '/events', event: ev(2) }).slice(0, 25));
    expect(await appendEventsOnce(path, '/events', [ev(2)])).toEqual({ written: 1, alreadyPresent: 0 });
    const ids = (await readFile(path, 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { event: FeedEvent }).event.id);
    expect(ids).toEqual(['1', '2']);
  });

  it('reads ids from the tail across chunk boundaries without reading the whole file', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'sink-')), 'feed.jsonl');
    await appendEventsOnce(path, '/events', Array.from({ length: 50 }, (_, i) => ev(i + 1)));
    const tail = await tailEventIds(path, 10, 97);
    expect([...tail.ids].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 10 }, (_, i) => String(41 + i)));
    expect(tail.partialBytes).toBe(0);
  });
});

describe('HTTP sink', () => {
  const agent = () => {
    const a = new MockAgent();
    a.disableNetConnect();
    return a;
  };

  it('posts batches of at most 100 signed events, and a retry sends the same bytes', async () => {
    process.env.LONGHAUL_SINK_SECRETS = 'unit';
    process.env.LONGHAUL_SINK_UNIT_SECRET = 'unit-secret';
    const a = agent();
    const pool = a.get('https://sink.example.test');
    const seen: { body: string; signature: string; delivery: string }[] = [];
    pool
      .intercept({ path: '/in', method: 'POST' })
      .reply((opts) => {
        const headers = opts.headers as Record<string, string>;
        seen.push({ body: String(opts.body), signature: headers['x-hub-signature-256'], delivery: headers['x-longhaul-delivery'] });
        return { statusCode: 200, data: '{}' };
      })
      .times(6);
    const events = Array.from({ length: 250 }, (_, i) => ev(i + 1));
    const send = () => postSignedBatches({ url: 'https://sink.example.test/in', secret: 'unit', feed: '/events', events, dispatcher: a });
    expect(await send()).toEqual({ batches: 3 });
    await send();
    a.assertNoPendingInterceptors();
    expect(seen.slice(0, 3).map((s) => (JSON.parse(s.body) as { events: unknown[] }).events.length)).toEqual([100, 100, 50]);
    for (const s of seen) expect(verifySignature('unit-secret', s.body, s.signature)).toBe(true);
    expect(seen.slice(3)).toEqual(seen.slice(0, 3));
    expect(seen[0].delivery).toBe(batchDeliveryId('/events', events.slice(0, 100)));
  });

  it('turns 5xx into a retryable failure honouring retry-after, 4xx into a permanent one, and a missing secret into its own type', async () => {
    process.env.LONGHAUL_SINK_SECRETS = 'unit';
    process.env.LONGHAUL_SINK_UNIT_SECRET = 'unit-secret';
    const a = agent();
    const pool = a.get('https://sink.example.test');
    pool.intercept({ path: '/in', method: 'POST' }).reply(503, 'busy', { headers: { 'retry-after': '7' } });
    pool.intercept({ path: '/in', method: 'POST' }).reply(400, 'bad');
    const send = (secret = 'unit') => postSignedBatches({ url: 'https://sink.example.test/in', secret, feed: '/events', events: [ev(1)], dispatcher: a });
    const busy = await send().catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(ApplicationFailure);
    expect(busy).toMatchObject({ type: 'SinkUnavailable', nonRetryable: false, nextRetryDelay: 7000 });
    expect(await send().catch((e: unknown) => e)).toMatchObject({ type: 'SinkRejected', nonRetryable: true });
    process.env.LONGHAUL_SINK_SECRETS = 'unit, unset';
    expect(await send('unset').catch((e: unknown) => e)).toMatchObject({ type: 'SinkSecretMissing', nonRetryable: true, message: 'the HTTP sink needs its signing secret "unset": set LONGHAUL_SINK_UNSET_SECRET (or LONGHAUL_SINK_UNSET_SECRET_FILE) on the worker' });
    // A name the workers do not have: refused before anything is read or sent, listing the names they have.
    expect(await send('other').catch((e: unknown) => e)).toMatchObject({ type: 'UnknownCredential', nonRetryable: true, message: 'no sink secret of that name on this worker (configured: default, unit, unset; more with LONGHAUL_SINK_SECRETS)' });
    a.assertNoPendingInterceptors();
  });
});

describe('emulated Cloud Logging entries:write', () => {
  const em = clockedEmulators(Date.UTC(2026, 3, 3, 12, 0, 0));

  it('stores one entry per event and drops an identical retry (same log, insertId and timestamp)', async () => {
    const e = await em.start();
    const base = e.serviceUrl('google-logging');
    const entries = logEntriesFor('projects/demo-project', 'feeds', '/events', [ev(1), ev(2)]);
    expect((await call(base, 'POST', '/v2/entries:write', { body: { entries } })).status).toBe(200);
    expect((await call(base, 'POST', '/v2/entries:write', { body: { entries } })).status).toBe(200);
    const stored = e.loggingEntries.entries('projects/demo-project/logs/feeds');
    expect(stored.map((s) => s.insertId)).toEqual(['1', '2']);
    expect(stored[0].labels).toEqual({ feed: '/events', event_type: 'PushEvent' });
    expect(e.loggingEntries.duplicatesDropped()).toBe(2);
  });

  it('answers 400 in Google’s error shape for a bad log name or an unknown field', async () => {
    const e = await em.start();
    const base = e.serviceUrl('google-logging');
    const path = '/v2/entries:write';
    const badName = await call(base, 'POST', path, { body: { entries: [{ logName: 'logs/x', resource: { type: 'global' }, textPayload: 'x' }] } });
    expect(badName.status).toBe(400);
    expect(badName.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    const unknown = await call(base, 'POST', path, { body: { entries: [], colour: 1 } });
    expect(unknown.status).toBe(400);
    expect(e.loggingEntries.entries()).toEqual([]);
  });
});

describe('sink batches', () => {
  const big = (id: number, bytes: number) => ({ ...ev(id), payload: { body: 'x'.repeat(bytes) } }) as unknown as FeedEvent;

  it('splits by count and by bytes, the same way every time, an oversized event alone', () => {
    const small = Array.from({ length: 250 }, (_, i) => ev(i));
    expect(eventBatches(small).map((b) => b.length)).toEqual([100, 100, 50]);
    const large = Array.from({ length: 60 }, (_, i) => big(i, 40_000));
    const batches = eventBatches(large);
    for (const b of batches) expect(Buffer.byteLength(JSON.stringify(b))).toBeLessThanOrEqual(1024 * 1024 + 100);
    expect(batches.flat().map((e) => e.id)).toEqual(large.map((e) => e.id));
    expect(eventBatches(large)).toEqual(batches);
    expect(eventBatches([big(1, 2_000_000), ev(2)]).map((b) => b.length)).toEqual([1, 1]);
  });
});
