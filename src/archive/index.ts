/**
 * The archive module: the bytes of an archive from storage to disk or into an object store, whoever asked for them.
 * A process hands it a way to ask its API for a (fresh) pre-signed URL; the module does the rest:
 *
 * - `storage/`: what a storage answer means (`answer.ts`, the one judge), the failures it raises (`failures.ts`,
 *   built from the registry), the checks of an answer (`checks.ts`) and the transport (`client.ts`, `transport.ts`,
 *   `framing.ts`);
 * - `object-store/`: the stores (S3, GCS, Azure Blob) and the multipart upload, resumable from any host;
 * - `download.ts` (to disk: `part.ts`, `sink.ts`, `writer.ts`, `boot-id.ts`) and `to-store.ts` (into a store:
 *   `to-store-local.ts`), with what both report in `progress.ts`.
 */
export { storageDownloader, NOT_ARCHIVE_REASKS, MAX_STALLS, type ArchiveDownload, type DownloadHooks, type StorageDownloadDeps, type StorageDownloadInput } from './download';
export { archiveDestination, abortArchiveUpload, checkArchiveDestination, ARCHIVE_TO_ENV, type ArchiveDestinationOutcome, type UploadProgress } from './to-store';
export type { DownloadProgress, ResumeReport } from './progress';
