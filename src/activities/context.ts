/**
 * Dependencies every activity factory receives. The worker builds them once (`createActivityDeps`);
 * tests build them pointing at an in-process emulator.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ApiClient } from '../http/api-client';
import type { GoogleClients } from '../http/google';
import { currentCredential } from './credential-scope';
import { CredentialFailure } from '../common/credential';
import type { ArchiveUploadSettings } from '../config';
import type { OutboundSettings } from '../http/outbound-policy';
import type { Clock, Sleep } from '../common/clock';

export interface ActivityDeps {
  /** The GitHub REST client of the default credential (base URL, token, retry policy, rate-limit gate). */
  github: ApiClient;
  /** Every configured GitHub credential's client by name (the default one included), for inputs naming one. */
  githubClients?: Readonly<Record<string, ApiClient>>;
  /** Google Cloud clients (API Keys, Cloud Logging, Cloud DNS) with Google's error model and ADC/static tokens. */
  google: GoogleClients;
  /** The name of the Google credential (its fleet-wide budget); inputs naming another one are refused. */
  googleCredential?: string;
  /** Directory archives and other downloads are written to (relative paths in inputs resolve here). */
  dataDir: string;
  /** Injected clock (epoch ms) for anything time-based outside the HTTP client. */
  clock: Clock;
  /**
   * Injected wait on `clock` for waits inside an activity (an archive upload waiting out a failing store); default
   * a real timer. A test's clock that a time-skipping server cannot skip (it skips no time while an activity runs)
   * is advanced by the wait instead.
   */
  sleep?: Sleep;
  /**
   * This worker process's own task queue, polled for activities only (`worker.ts`): a feed poll's first fetch
   * returns it, and the poll schedules its later pages and its delivery there, on the worker whose data
   * directory holds the poll's spool. Undefined on a worker that polls the shared queue only.
   */
  workerQueue?: string;
  /**
   * Part size and parts in flight of archive uploads into object storage (`LONGHAUL_ARCHIVE_PART_MIB`,
   * `LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT`); unset: the upload's defaults.
   */
  archiveUpload?: ArchiveUploadSettings;
  /**
   * The operator's part of the outbound policy (`LONGHAUL_ALLOWED_HOSTS`) for addresses that come from answers or
   * inputs (storage redirects, sink URLs); none listed when absent. Tests may inject the resolver.
   */
  outbound?: OutboundSettings;
}

/**
 * The client of the credential the running activity's workflow names (`credential` in its input, carried
 * as a header; see `credential-scope.ts`), or the default one. An unknown name is a clear non-retryable
 * failure: the worker fleet was not configured with it.
 */
export function githubFor(deps: Pick<ActivityDeps, 'github' | 'githubClients'>, credential: string | undefined = currentCredential()): ApiClient {
  if (credential === undefined) return deps.github;
  const client = deps.githubClients?.[credential];
  if (!client) {
    const known = Object.keys(deps.githubClients ?? {}).join(', ') || '(only the default)';
    throw ApplicationFailure.nonRetryable(`no GitHub credential named ${JSON.stringify(credential)} on this worker (configured: ${known})`, CredentialFailure.Unknown);
  }
  return client;
}

/** The Google clients, provided the running workflow names no credential or the configured Google one. */
export function googleFor(deps: Pick<ActivityDeps, 'google' | 'googleCredential'>, credential: string | undefined = currentCredential()): GoogleClients {
  const configured = deps.googleCredential ?? DEFAULT_GOOGLE_CREDENTIAL;
  if (credential !== undefined && credential !== configured) {
    throw ApplicationFailure.nonRetryable(`no Google credential named ${JSON.stringify(credential)} on this worker (configured: ${configured})`, CredentialFailure.Unknown);
  }
  return deps.google;
}

export const DEFAULT_GOOGLE_CREDENTIAL = 'google';
