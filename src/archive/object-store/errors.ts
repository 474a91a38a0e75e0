import { FAILURES, failureTypes } from '../../common/failures';

/**
 * Failure types of archive uploads (the registry's `objectStore` group), as stable strings for `nonRetryableErrorTypes` and callers. Every one is
 * thrown before an archive byte is sent, except `SizeMismatch` (the source delivered another length than it
 * announced), which ends an upload whose multipart state is then aborted.
 */
export const ObjectStoreFailure = failureTypes(FAILURES.objectStore);
export type ObjectStoreFailure = (typeof ObjectStoreFailure)[keyof typeof ObjectStoreFailure];
