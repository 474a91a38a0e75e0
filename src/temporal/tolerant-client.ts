/**
 * A client for reading what is beside the point of the read: listing and describing workflows decode every
 * memo, and a memo sealed with a key this process lacks (no codec key, a retired one) would fail the whole list
 * or describe (longhaul's migrations record where their archive went in one, `ARCHIVE_MEMO`). This client shares
 * the connection and namespace and decodes through `readingOrMarking`: such a memo reads as
 * `{ unreadable: why }`. Only for list and describe: results, inputs and queries go through the caller's client,
 * whose failures to decode stay failures.
 *
 * With a codec key a failure's message and stack trace are an encrypted payload too (`encoded-failures.ts`):
 * `failureMessage` reads a raw failure's message through the client's codecs, or says it is encrypted.
 */
import { Client } from '@temporalio/client';
import type { PayloadCodec, PayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { readingOrMarking, type UnreadablePayload } from './codec';

/** A `Client`, or a handle's `WorkflowClient`: its connection, namespace and converters. */
interface ClientLike {
  connection: Client['connection'];
  options: { namespace: string; loadedDataConverter: { payloadCodecs: PayloadCodec[]; payloadConverter: PayloadConverter } };
}

/** What the message of a failure reads as when its encoded attributes are a payload this process cannot decode. */
export function encryptedFailureMessage(why: string): string {
  return `(encrypted: ${why})`;
}

/**
 * The message of a raw failure (a pending activity's last failure, as `describe` returns it): its encoded
 * attributes decoded when it has them, else its `message` field.
 */
export async function failureMessage(client: ClientLike, failure: temporal.api.failure.v1.IFailure | null | undefined): Promise<string | undefined> {
  if (!failure) return undefined;
  if (!failure.encodedAttributes) return failure.message ?? undefined;
  const [decoded] = await readingOrMarking(client.options.loadedDataConverter.payloadCodecs).decode([failure.encodedAttributes]);
  const attributes = client.options.loadedDataConverter.payloadConverter.fromPayload<{ message?: unknown } & Partial<UnreadablePayload>>(decoded);
  if (typeof attributes?.unreadable === 'string') return encryptedFailureMessage(attributes.unreadable);
  return typeof attributes?.message === 'string' ? attributes.message : (failure.message ?? undefined);
}

/** One tolerant client per client and namespace: `wait --follow` describes the workflow every second. */
const made = new WeakMap<ClientLike, Map<string, Client>>();

export function memoTolerant(client: ClientLike, namespace: string = client.options.namespace): Client {
  const byNamespace = made.get(client) ?? new Map<string, Client>();
  made.set(client, byNamespace);
  let tolerant = byNamespace.get(namespace);
  if (!tolerant) {
    tolerant = new Client({
      connection: client.connection,
      namespace,
      dataConverter: { payloadCodecs: [readingOrMarking(client.options.loadedDataConverter.payloadCodecs)] },
    });
    byNamespace.set(namespace, tolerant);
  }
  return tolerant;
}
