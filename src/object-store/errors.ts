import { failureTypes } from '../common/failures';

/**
 * Failure types of archive uploads (the registry's `objectStore` group), as stable strings for `nonRetryableErrorTypes` and callers. Every one is
 * thrown before an archive byte is sent, except `SourceChanged`, `SizeMismatch` and `ChecksumMismatch`, which
 * end an upload whose multipart state is then aborted.
 */
export const ObjectStoreFailure = failureTypes('objectStore');
export type ObjectStoreFailure = (typeof ObjectStoreFailure)[keyof typeof ObjectStoreFailure];
