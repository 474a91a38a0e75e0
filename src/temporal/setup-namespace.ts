/**
 * The namespace longhaul needs: it exists, and every search attribute of this release
 * (`ALL_SEARCH_ATTRIBUTES`, one source of truth) is registered with its type. A workflow that upserts an
 * attribute its namespace lacks fails its workflow task for ever (`BadSearchAttributes`), so:
 *
 * - `checkNamespace` says what is there, missing or of the wrong type (the worker before it polls, `longhaul
 *   doctor`);
 * - `prepareNamespace` registers what is missing when allowed, else throws `NamespaceNotReadyError` naming it
 *   (the worker and `longhaul start` before they poll);
 * - `setupNamespace` also creates the namespace (`longhaul setup-namespace`; the compose stack runs it as a
 *   one-shot service). Idempotent:
 *
 *   TEMPORAL_ADDRESS=host:7233 npx longhaul setup-namespace      (or: node dist/temporal/setup-namespace.js)
 */
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { ALL_SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { releaseVersion } from '../release';
import { ExitCode } from '../common/exit-codes';
import { configuredTemporal } from './connection';

const { IndexedValueType } = temporal.api.enums.v1;
type IndexedType = temporal.api.enums.v1.IndexedValueType;
const INDEXED_TYPE: Record<string, IndexedType> = {
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  TEXT: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  DOUBLE: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  DATETIME: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};
/** Temporal's names of the types (`temporal operator search-attribute create --type`, `tcld`). */
const TYPE_NAME: Record<number, string> = {
  [IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]: 'Keyword',
  [IndexedValueType.INDEXED_VALUE_TYPE_INT]: 'Int',
  [IndexedValueType.INDEXED_VALUE_TYPE_TEXT]: 'Text',
  [IndexedValueType.INDEXED_VALUE_TYPE_BOOL]: 'Bool',
  [IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE]: 'Double',
  [IndexedValueType.INDEXED_VALUE_TYPE_DATETIME]: 'Datetime',
  [IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST]: 'KeywordList',
};
const RETENTION_MS = 30 * 24 * 3600 * 1000;
const NOT_FOUND = 5;

type NamespaceServices = Pick<Connection, 'workflowService' | 'operatorService'>;

/** One search attribute this release needs, as the namespace has it. */
export interface SearchAttributeState {
  name: string;
  /** The type longhaul needs (`Keyword`, `Int`). */
  type: string;
  status: 'present' | 'missing' | 'wrong-type';
  /** The type the namespace has, when it is another. */
  registeredType?: string;
}

/** What `checkNamespace` found. */
export interface NamespaceCheck {
  namespace: string;
  exists: boolean;
  /** Every attribute this release needs (empty when the namespace does not exist). */
  searchAttributes: SearchAttributeState[];
  /** Names of the missing ones. */
  missing: string[];
  /** The ones registered with another type: registering cannot fix them. */
  wrongType: SearchAttributeState[];
  /** Exists, nothing missing, nothing of the wrong type. */
  ready: boolean;
}

/** Checks the namespace against this release's search attributes; changes nothing. */
export async function checkNamespace(connection: NamespaceServices, namespace: string): Promise<NamespaceCheck> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (err) {
    if ((err as { code?: number }).code !== NOT_FOUND) throw err;
    return { namespace, exists: false, searchAttributes: [], missing: [], wrongType: [], ready: false };
  }
  const registered = (await whileNamespaceUnknown(() => connection.operatorService.listSearchAttributes({ namespace }))).customAttributes ?? {};
  const searchAttributes = ALL_SEARCH_ATTRIBUTES.map((key): SearchAttributeState => {
    const type = TYPE_NAME[INDEXED_TYPE[key.type]];
    if (!(key.name in registered)) return { name: key.name, type, status: 'missing' };
    const found = registered[key.name];
    if (found !== INDEXED_TYPE[key.type]) return { name: key.name, type, status: 'wrong-type', registeredType: TYPE_NAME[found] ?? String(found) };
    return { name: key.name, type, status: 'present' };
  });
  const missing = searchAttributes.filter((a) => a.status === 'missing').map((a) => a.name);
  const wrongType = searchAttributes.filter((a) => a.status === 'wrong-type');
  return { namespace, exists: true, searchAttributes, missing, wrongType, ready: missing.length === 0 && wrongType.length === 0 };
}

/** The namespace lacks what this release needs, and the caller may not (or cannot) fix it. */
export class NamespaceNotReadyError extends Error {
  override readonly name = 'NamespaceNotReady';
  constructor(
    readonly check: NamespaceCheck,
    options?: { cause: unknown },
  ) {
    const cause = options?.cause instanceof Error ? ` (registering them failed: ${options.cause.message})` : '';
    super(`${namespaceProblem(check)}${cause}`, options);
  }
}

/** What is wrong with the namespace and what to run, in one paragraph (empty when it is ready). */
export function namespaceProblem(check: NamespaceCheck): string {
  const release = `longhaul ${releaseVersion()}`;
  if (!check.exists) return `namespace ${check.namespace} does not exist: run \`longhaul setup-namespace\` (it creates it and registers longhaul's search attributes)`;
  const problems: string[] = [];
  if (check.missing.length > 0) {
    const typed = check.searchAttributes.filter((a) => a.status === 'missing').map((a) => `${a.name} (${a.type})`);
    problems.push(
      `namespace ${check.namespace} lacks search attributes ${release} needs: ${typed.join(', ')}. Run \`longhaul setup-namespace\` against it, ` +
        'or let the worker register them (`longhaul worker --register-search-attributes`); on Temporal Cloud add them in the Cloud UI or with ' +
        `\`tcld namespace search-attributes add\` (docs/operations.md#upgrading)`,
    );
  }
  for (const a of check.wrongType) {
    problems.push(`search attribute ${a.name} of namespace ${check.namespace} is a ${a.registeredType}, ${release} needs a ${a.type}: a type cannot be changed in place; remove it (\`temporal operator search-attribute remove\`) and run \`longhaul setup-namespace\``);
  }
  return problems.join('; ');
}

/** Registers these of longhaul's search attributes (by name) with their types. */
async function registerSearchAttributes(connection: NamespaceServices, namespace: string, names: readonly string[]): Promise<void> {
  const keys = ALL_SEARCH_ATTRIBUTES.filter((key) => names.includes(key.name));
  await whileNamespaceUnknown(() =>
    connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(keys.map((key) => [key.name, INDEXED_TYPE[key.type]])) }),
  );
}

/**
 * Before a worker polls: the namespace is ready, or made ready by registering what is missing when
 * `registerMissing`, or this throws `NamespaceNotReadyError` (a missing namespace or a wrong type always
 * throws). Returns what it did, for the log.
 */
export async function prepareNamespace(connection: NamespaceServices, namespace: string, opts: { registerMissing: boolean }): Promise<string[]> {
  const check = await checkNamespace(connection, namespace);
  if (check.ready) return [];
  if (!check.exists || check.wrongType.length > 0 || !opts.registerMissing) throw new NamespaceNotReadyError(check);
  try {
    await registerSearchAttributes(connection, namespace, check.missing);
  } catch (err) {
    // Not allowed here (Temporal Cloud, an API key without operator rights): the same refusal, with the reason.
    throw new NamespaceNotReadyError(check, { cause: err });
  }
  return [`registered search attributes ${check.missing.join(', ')} on namespace ${namespace}`];
}

/** `longhaul setup-namespace`: creates the namespace when missing and registers what is missing. Returns what it did, for the log. */
export async function setupNamespace(connection: NamespaceServices, namespace: string): Promise<string[]> {
  const done: string[] = [];
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (err) {
    if ((err as { code?: number }).code !== NOT_FOUND) throw err;
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(RETENTION_MS) });
    done.push(`created namespace ${namespace} (retention 30 days)`);
    await whileNamespaceUnknown(() => connection.workflowService.describeNamespace({ namespace }));
  }
  return [...done, ...(await prepareNamespace(connection, namespace, { registerMissing: true }))];
}

/** A namespace just created reaches every server role only after their caches refresh (about 10 s). */
async function whileNamespaceUnknown<T>(call: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if ((err as { code?: number }).code !== NOT_FOUND || Date.now() > deadline) throw err;
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
  console.log(done.length > 0 ? done.join('\n') : `namespace ${target.namespace} was ready (the ${ALL_SEARCH_ATTRIBUTES.length} search attributes of longhaul ${releaseVersion()})`);
  await connection.close();
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(`setup-namespace: ${err.message}`);
    process.exit(err instanceof NamespaceNotReadyError ? ExitCode.NamespaceNotReady : ExitCode.Failed);
  });
}
