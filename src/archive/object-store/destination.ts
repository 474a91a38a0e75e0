/**
 * Archive destinations, as a user writes them: `s3://BUCKET/PREFIX`, `gs://BUCKET/PREFIX`, `azblob://CONTAINER/PREFIX`.
 *
 * The URL names where, never how: the endpoint, region, account and credentials come from each SDK's standard
 * configuration on the worker (`stores/*.ts`). Azure uses `azblob://CONTAINER/PREFIX` (the form gocloud.dev and
 * Terraform's state backends use) rather than `https://ACCOUNT.blob.core.windows.net/…`, so that, as for S3 and
 * GCS, the same destination works against Azure and against an emulator or sovereign cloud whose endpoint only
 * the worker's `AZURE_STORAGE_CONNECTION_STRING` knows.
 *
 * Pure and deterministic (no Node built-ins): the CLI and workflow input validation can use it as it is.
 */
import { credentialInUrlProblems } from '../../common/url-secrets';
import type { ApplicationFailure } from '@temporalio/common';
import * as v from 'valibot';
import { storageFailure } from '../storage/failures';

export type StoreKind = 's3' | 'gs' | 'azblob';

export interface ArchiveDestination {
  kind: StoreKind;
  /** The S3 or GCS bucket, or the Azure container. */
  bucket: string;
  /** Key prefix, without a leading slash; empty, or ending in `/`. */
  prefix: string;
}

const SCHEMES: Record<string, StoreKind> = { 's3:': 's3', 'gs:': 'gs', 'azblob:': 'azblob' };

/** S3 (3–63, lowercase, digits, `.`, `-`), GCS (also `_`) and Azure (3–63, lowercase, digits, `-`) bucket names. */
const BUCKET_NAME: Record<StoreKind, RegExp> = {
  s3: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
  gs: /^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/,
  azblob: /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$/,
};

const FORMS = 's3://BUCKET/PREFIX, gs://BUCKET/PREFIX or azblob://CONTAINER/PREFIX';

function invalid(message: string, key: 'DestinationInvalid' | 'DestinationCredential' = 'DestinationInvalid'): ApplicationFailure {
  return storageFailure('objectStore', key, message);
}

/**
 * The destination `url` names, or a non-retryable `ApplicationFailure` (type `ArchiveDestinationInvalid`, or
 * `ArchiveDestinationCredential` for a URL that carries a secret) before anything is sent anywhere.
 */
export function parseDestination(url: string, fieldName = '--archive-to'): ArchiveDestination {
  const credentials = credentialInUrlProblems(url, fieldName, 'the store\'s credentials come from its SDK\'s standard settings on the worker (AWS_*, Application Default Credentials, AZURE_STORAGE_*)');
  if (credentials.length) throw invalid(credentials.join('; '), 'DestinationCredential');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(`${fieldName} "${url}" is not a URL: use ${FORMS}`);
  }
  const kind = SCHEMES[parsed.protocol];
  if (!kind) throw invalid(`${fieldName} "${url}" has an unknown scheme "${parsed.protocol.replace(/:$/, '')}": use ${FORMS}`);
  if (parsed.username || parsed.password || parsed.port || parsed.search || parsed.hash) {
    throw invalid(`${fieldName} "${url}" must be ${kind}://BUCKET/PREFIX, without user, port, query or fragment`);
  }
  const bucket = parsed.hostname;
  if (!BUCKET_NAME[kind].test(bucket)) throw invalid(`${fieldName} "${url}": "${bucket}" is not a valid ${kind === 'azblob' ? 'container' : 'bucket'} name`);
  // Checked on the text as written: URL parsing resolves dot segments away, which would change the prefix silently.
  const written = url.replace(/^[^:]+:\/\/[^/]*/, '').split(/[?#]/)[0];
  if (written.split('/').some((segment) => segment === '.' || segment === '..' || /^%2e(%2e)?$|^\.%2e$|^%2e\.$/i.test(segment))) {
    throw invalid(`${fieldName} "${url}": the prefix must not contain "." or ".." segments`);
  }
  let prefix = decodeURIComponent(parsed.pathname.replace(/^\/+/, ''));
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  return { kind, bucket, prefix };
}

/** The object's key: the destination's prefix followed by `name`. */
export function objectKey(destination: ArchiveDestination, name: string): string {
  return `${destination.prefix}${name}`;
}

/** The URL that names one object, as results and `longhaul list` show it. */
export function objectUrl(destination: ArchiveDestination, key: string): string {
  return `${destination.kind}://${destination.bucket}/${key}`;
}

/** The URL of the object `name` under the destination `url` (`s3://BUCKET/PREFIX` + `name`), as the download names it. */
export function destinationObjectUrl(url: string, name: string, fieldName?: string): string {
  const destination = parseDestination(url, fieldName);
  return objectUrl(destination, objectKey(destination, name));
}

/** A destination URL in a workflow input's schema (`archiveTo`): `parseDestination`'s message when it is not one. */
export function destinationUrlSchema(fieldName = 'archiveTo') {
  return v.pipe(
    v.string('must be a URL: s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or azblob://CONTAINER/PREFIX'),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      try {
        parseDestination(dataset.value, fieldName);
      } catch (err) {
        addIssue({ message: `{=}${(err as Error).message}` });
      }
    }),
  );
}
