/**
 * Dependencies every activity factory receives. The worker builds them once (`createActivityDeps`);
 * tests build them pointing at an in-process emulator.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ApiClient } from '../http/api-client';
import type { GoogleClients } from '../http/google';

export interface ActivityDeps {
  /** The GitHub REST client of the default credential (base URL, token, retry policy, rate-limit gate). */
  github: ApiClient;
  /** Every configured GitHub credential's client by name (the default one included), for inputs naming one. */
  githubClients?: Readonly<Record<string, ApiClient>>;
  /** Google Cloud clients (API Keys, Cloud Logging, Cloud DNS) with Google's error model and ADC/static tokens. */
  google: GoogleClients;
  /** Directory archives and other downloads are written to (relative paths in inputs resolve here). */
  dataDir: string;
  /** Injected clock (epoch ms) for anything time-based outside the HTTP client. */
  clock: () => number;
}

/**
 * The client of the credential a workflow input names (`credential`), or the default one. An unknown name
 * is a clear non-retryable failure: the worker fleet was not configured with it.
 */
export function githubFor(deps: ActivityDeps, credential?: string): ApiClient {
  if (credential === undefined) return deps.github;
  const client = deps.githubClients?.[credential];
  if (!client) {
    const known = Object.keys(deps.githubClients ?? {}).join(', ') || '(only the default)';
    throw ApplicationFailure.nonRetryable(`no GitHub credential named ${JSON.stringify(credential)} on this worker (configured: ${known})`, 'UnknownCredential');
  }
  return client;
}
