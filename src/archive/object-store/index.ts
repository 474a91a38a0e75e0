/**
 * Archives into object storage (issue 26): S3 and S3-compatible stores, Google Cloud Storage and Azure Blob
 * Storage, streamed in one bounded pass and resumable from any host. Activity side (Node).
 */
export { parseDestination, objectKey, objectUrl, type ArchiveDestination, type StoreKind } from './destination';
export { ObjectStoreFailure } from './errors';
export { DEFAULT_PART_BYTES, DEFAULT_PARTS_IN_FLIGHT } from '../../common/object-store-limits';
export { uploadArchive, checkDestination, abortUploads, partSizeFor, DEFAULT_RETRY_FOR_MS, type ArchiveObject, type ArchiveUploadOptions, type OpenSource, type UploadCheckpoint } from './upload';
