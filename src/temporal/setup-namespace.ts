/**
 * Makes a Temporal namespace ready for longhaul: creates it when missing and registers longhaul's search
 * attributes (the list in `common/search-attributes.ts`, so there is one source of truth). Idempotent.
 * The compose stack runs it as a one-shot service; on any other cluster run it once:
 *
 *   TEMPORAL_ADDRESS=host:7233 node dist/temporal/setup-namespace.js      (or: npm run setup:namespace)
 */
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { ALL_SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { configuredTemporal } from './connection';

const { IndexedValueType } = temporal.api.enums.v1;
const INDEXED_TYPE: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  TEXT: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  DOUBLE: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  DATETIME: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};
const RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Returns what it did, for the log. */
export async function setupNamespace(connection: Pick<Connection, 'workflowService' | 'operatorService'>, namespace: string): Promise<string[]> {
  const done: string[] = [];
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (err) {
    if ((err as { code?: number }).code !== 5 /* NOT_FOUND */) throw err;
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(RETENTION_MS) });
    done.push(`created namespace ${namespace} (retention 30 days)`);
  }
  const existing = await whileNamespaceUnknown(() => connection.operatorService.listSearchAttributes({ namespace }));
  const missing = ALL_SEARCH_ATTRIBUTES.filter((key) => !(key.name in (existing.customAttributes ?? {})));
  if (missing.length > 0) {
    await whileNamespaceUnknown(() =>
      connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_TYPE[key.type]])),
      }),
    );
    done.push(`registered search attributes ${missing.map((key) => key.name).join(', ')}`);
  }
  return done;
}

/** A namespace just created reaches every server role only after their caches refresh (about 10 s). */
async function whileNamespaceUnknown<T>(call: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if ((err as { code?: number }).code !== 5 /* NOT_FOUND */ || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function main(): Promise<void> {
  const target = configuredTemporal();
  if (!target) throw new Error('set TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE) to the server to prepare');
  const { connectionOptions } = target;
  // The frontend may still be starting (compose): try for a minute before giving up.
  let connection: Connection | undefined;
  for (let attempt = 1; !connection; attempt++) {
    try {
      connection = await Connection.connect({ address: connectionOptions.address, tls: connectionOptions.tls as never, apiKey: connectionOptions.apiKey as string | undefined });
    } catch (err) {
      if (attempt >= 30) throw err;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
  const done = await setupNamespace(connection, target.namespace);
  console.log(done.length > 0 ? done.join('\n') : `namespace ${target.namespace} was ready`);
  await connection.close();
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(`setup-namespace: ${err.message}`);
    process.exit(1);
  });
}
