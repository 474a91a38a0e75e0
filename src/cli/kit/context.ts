/**
 * What every starter command shares: the Temporal connection (configured per TEMPORAL_* or the
 * embedded dev server's address), the task queue, and output helpers that keep one contract:
 * `--json` prints exactly one JSON object; errors are one clear line; exit code 0 only on success.
 */
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter, TemporalFailure } from '@temporalio/common';
import { loadConfig, type LonghaulConfig } from '../../config';
import { configuredTemporal, workflowUiUrl, type TemporalTarget } from '../../temporal/connection';
import { portIsOpen } from '../../temporal/dev-server';
import { longhaulDataConverter, type UnreadablePayload } from '../../temporal/codec';
import { encryptedFailureMessage } from '../../temporal/tolerant-client';
import { ExitCode } from '../../common/exit-codes';

export interface CliContext {
  config: LonghaulConfig;
  /** Connects once, lazily. */
  client(): Promise<Client>;
  target(): TemporalTarget;
  uiLink(workflowId: string): string | undefined;
  close(): Promise<void>;
}

/** An error meant for the user: printed as one line, exit code `exitCode`. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

const EMBEDDED_ADDRESS = '127.0.0.1:7233';

export function createCliContext(env: NodeJS.ProcessEnv = process.env): CliContext {
  const config = loadConfig(env);
  const target: TemporalTarget = configuredTemporal(env) ?? {
    connectionOptions: { address: EMBEDDED_ADDRESS },
    namespace: 'default',
    uiUrl: env.TEMPORAL_UI_URL || 'http://localhost:8233',
  };
  let client: Client | undefined;
  return {
    config,
    target: () => target,
    uiLink: (workflowId) => workflowUiUrl(target, workflowId),
    async client() {
      if (client) return client;
      const address = target.connectionOptions.address ?? EMBEDDED_ADDRESS;
      if (!configuredTemporal(env)) {
        const [host, port] = address.split(':');
        if (!(await portIsOpen(host, Number(port), 1000))) {
          throw new CliError(`no Temporal server answers at ${address}: run \`npx longhaul start\` in another terminal, or set TEMPORAL_ADDRESS`, ExitCode.Unavailable);
        }
      }
      const { connectionOptions } = target;
      const connection = await Connection.connect({
        address,
        tls: connectionOptions.tls as never,
        apiKey: connectionOptions.apiKey as string | undefined,
        metadata: connectionOptions.metadata,
      });
      client = new Client({ connection, namespace: target.namespace, dataConverter: longhaulDataConverter(env) });
      return client;
    },
    async close() {
      await client?.connection.close();
    },
  };
}

/** The innermost failure's type and message, for one-line errors and `--json`. */
export function describeFailure(err: unknown): { type?: string; message: string } {
  let current: unknown = err instanceof WorkflowFailedError ? (err.cause ?? err) : err;
  // Walk down the cause chain to the failure that says what went wrong.
  while (current instanceof TemporalFailure && current.cause && !(current instanceof ApplicationFailure && current.type)) current = current.cause;
  if (current instanceof ApplicationFailure) return { type: current.type ?? undefined, message: encodedMessage(current) ?? current.message };
  if (current instanceof Error) return { type: current.name, message: current.message };
  return { message: String(current) };
}

/**
 * The message of a failure whose encoded attributes (message and stack trace, encrypted with a codec key) could
 * not be decoded: `memoTolerant` marks them `{ unreadable: why }`, and the SDK left the message "Encoded failure".
 */
function encodedMessage(failure: TemporalFailure): string | undefined {
  const attributes = failure.failure?.encodedAttributes;
  if (!attributes) return undefined;
  try {
    const value = defaultPayloadConverter.fromPayload<Partial<UnreadablePayload>>(attributes);
    return typeof value?.unreadable === 'string' ? encryptedFailureMessage(value.unreadable) : undefined;
  } catch {
    return encryptedFailureMessage('its encoded attributes cannot be read');
  }
}

/** Prints one JSON object (the `--json` contract). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
