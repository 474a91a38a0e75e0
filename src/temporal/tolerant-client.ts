/**
 * A client for reading what is beside the point of the read: listing and describing workflows decode every
 * memo, and a memo sealed with a key this process lacks (no codec key, a retired one) would fail the whole list
 * or describe (longhaul's migrations record where their archive went in one, `ARCHIVE_MEMO`). This client shares
 * the connection and namespace and decodes through `readingOrMarking`: such a memo reads as
 * `{ unreadable: why }`. Only for list and describe: results, inputs and queries go through the caller's client,
 * whose failures to decode stay failures.
 */
import { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { readingOrMarking } from './codec';

/** A `Client`, or a handle's `WorkflowClient`: its connection, namespace and codecs. */
interface ClientLike {
  connection: Client['connection'];
  options: { namespace: string; loadedDataConverter: { payloadCodecs: PayloadCodec[] } };
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
