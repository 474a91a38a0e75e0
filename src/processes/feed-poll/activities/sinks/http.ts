/**
 * The HTTP sink: POSTs each batch (at most 100 events and about 1 MB) as `{ feed, delivery, events }`, signed with
 * HMAC-SHA256 in `X-Hub-Signature-256`, the scheme of spec 001's webhook deliveries. The sink names a signing
 * secret configured on the workers (`activities/named-secrets.ts`); it is read here, at call time, from its
 * variable (or `<VARIABLE>_FILE`), and never enters workflow history.
 *
 * A batch is identified by its content (`delivery` = hash of feed and event ids), so a retry sends the
 * same bytes with the same signature; receivers dedupe by event id (see `SinkReceiver`).
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { Dispatcher } from 'undici';
import type { FeedEvent } from '../../model';
import { readSecret } from '../../../../config';
import { configuredSinkSecretVariable } from '../../../../activities/named-secrets';
import { TokenlessClient, type FailureTypes } from '../../../../http/tokenless';
import type { OutboundContext, Resolver } from '../../../../http/outbound-policy';
import { SIGNATURE_HEADER, signBody } from '../../../../http/signature';
import { eventBatches } from './batches';
import { failureTypes } from '../../../../common/failures';
import { SINK_FAILURES } from '../../failures';

export const SinkFailure = failureTypes(SINK_FAILURES);

/**
 * What the core's decision becomes: a retry (5xx, 408, 425, 429 with its `retry-after`, no answer) is
 * `SinkUnavailable`; anything permanent (4xx, a redirect, which is not followed) is `SinkRejected`.
 */
const SINK_FAILURE_TYPES: FailureTypes = { retry: SinkFailure.Unavailable, permanent: SinkFailure.Rejected };

export function batchDeliveryId(feed: string, events: readonly Pick<FeedEvent, 'id'>[]): string {
  return createHash('sha256').update(`${feed}\n${events.map((e) => e.id).join(',')}`).digest('hex').slice(0, 32);
}

export async function postSignedBatches(
  opts: {
    url: string;
    secret: string;
    feed: string;
    events: readonly FeedEvent[];
    batchSize?: number;
    batchBytes?: number;
    dispatcher?: Dispatcher;
    /** The outbound policy's context of the sink URL (the feed's API origin, the allowed hosts); strictest without it. */
    outbound?: () => Promise<OutboundContext>;
    resolve?: Resolver;
  },
): Promise<{ batches: number }> {
  const variable = configuredSinkSecretVariable(opts.secret);
  const secret = readSecret(variable);
  if (!secret) {
    throw ApplicationFailure.nonRetryable(`the HTTP sink needs its signing secret ${JSON.stringify(opts.secret)}: set ${variable} (or ${variable}_FILE) on the worker`, SinkFailure.SecretMissing);
  }
  // The user's URL gets no API credential: the core's token-less client, with the sink's stable failure types.
  const client = new TokenlessClient({ api: 'sink', route: '/sink', dispatcher: opts.dispatcher, userAgent: 'longhaul-feeds/0.1', outbound: opts.outbound, resolve: opts.resolve });
  let batches = 0;
  for (const events of eventBatches(opts.events, opts.batchSize, opts.batchBytes)) {
    const delivery = batchDeliveryId(opts.feed, events);
    const body = JSON.stringify({ feed: opts.feed, delivery, events });
    await client.send(
      {
        method: 'POST',
        url: opts.url,
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signBody(secret, body),
          'x-longhaul-delivery': delivery,
          'x-longhaul-feed': opts.feed,
        },
        body,
      },
      SINK_FAILURE_TYPES,
    );
    batches++;
  }
  return { batches };
}
