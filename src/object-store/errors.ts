/**
 * Failure types of archive uploads, as stable strings for `nonRetryableErrorTypes` and callers. Every one is
 * thrown before an archive byte is sent, except `SourceChanged`, `SizeMismatch` and `ChecksumMismatch`, which
 * end an upload whose multipart state is then aborted.
 */
export enum ObjectStoreFailure {
  /** Unknown scheme, bad bucket name, a URL that is not a destination. */
  DestinationInvalid = 'ArchiveDestinationInvalid',
  /** The destination URL carries a credential. */
  DestinationCredential = 'ArchiveDestinationCredential',
  /** The bucket or container does not exist. */
  BucketNotFound = 'ArchiveBucketNotFound',
  /** The store refused the credentials or the operation (401/403). */
  AccessDenied = 'ArchiveStoreAccessDenied',
  /** The worker has no usable configuration for the store (no region, no account). */
  StoreNotConfigured = 'ArchiveStoreNotConfigured',
  /** The source delivered more or fewer bytes than announced. */
  SizeMismatch = 'ArchiveSizeMismatch',
  /** The store holds different bytes than the ones sent (a part's or the object's checksum differs). */
  ChecksumMismatch = 'ArchiveChecksumMismatch',
}
