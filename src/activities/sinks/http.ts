/**
 * The HTTP sink: POSTs each batch (at most 100 events and about 1 MB) as `{ feed, delivery, events }`, signed with
 * HMAC-SHA256 in `X-Hub-Signature-256`, the scheme of spec 001's webhook deliveries. The secret is read
 * here, at call time, from the environment (or `<NAME>_FILE`); it never enters workflow history.
 *
 * A batch is identified by its content (`delivery` = hash of feed and event ids), so a retry sends the
 * same bytes with the same signature; receivers dedupe by event id (see `SinkReceiver`).
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { request, type Dispatcher } from 'undici';
import type { FeedEvent } from '../../common/feeds';
import { readSecret } from '../../config';
import { parseRetryAfterMs } from '../../http/retry-policy';
import { SIGNATURE_HEADER, signBody } from '../../http/signature';
import { eventBatches } from './batches';

export const SinkFailure = {
  SecretMissing: 'SinkSecretMissing',
  Rejected: 'SinkRejected',
  Unavailable: 'SinkUnavailable',
} as const;

export function batchDeliveryId(feed: string, events: readonly Pick<FeedEvent, 'id'>[]): string {
  return createHash('sha256').update(`${feed}\n${events.map((e) => e.id).join(',')}`).digest('hex').slice(0, 32);
}

export async function postSignedBatches(
  opts: { url: string; secretEnv: string; feed: string; events: readonly FeedEvent[]; batchSize?: number; batchBytes?: number; dispatcher?: Dispatcher },
): Promise<{ batches: number }> {
  const secret = readSecret(opts.secretEnv);
  if (!secret) {
    throw ApplicationFailure.nonRetryable(`the HTTP sink needs a signing secret: set ${opts.secretEnv} (or ${opts.secretEnv}_FILE) on the worker`, SinkFailure.SecretMissing);
  }
  let batches = 0;
  for (const events of eventBatches(opts.events, opts.batchSize, opts.batchBytes)) {
    const delivery = batchDeliveryId(opts.feed, events);
    const body = JSON.stringify({ feed: opts.feed, delivery, events });
    let res: Dispatcher.ResponseData;
    try {
      res = await request(opts.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'longhaul-feeds/0.1',
          [SIGNATURE_HEADER]: signBody(secret, body),
          'x-longhaul-delivery': delivery,
          'x-longhaul-feed': opts.feed,
        },
        body,
        dispatcher: opts.dispatcher,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
    } catch (err) {
      throw ApplicationFailure.create({ type: SinkFailure.Unavailable, message: `POST ${opts.url}: ${(err as Error).message}`, cause: err as Error });
    }
    const text = (await res.body.text()).slice(0, 300);
    if (res.statusCode >= 200 && res.statusCode < 300) {
      batches++;
      continue;
    }
    const transient = res.statusCode >= 500 || res.statusCode === 408 || res.statusCode === 425 || res.statusCode === 429;
    const retryAfter = parseRetryAfterMs(headerValue(res.headers['retry-after']), Date.now());
    throw ApplicationFailure.create({
      type: transient ? SinkFailure.Unavailable : SinkFailure.Rejected,
      message: `POST ${opts.url} → ${res.statusCode}: ${text}`,
      nonRetryable: !transient,
      nextRetryDelay: transient && retryAfter !== undefined ? retryAfter : undefined,
    });
  }
  return { batches };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
