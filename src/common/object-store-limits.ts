/**
 * The stores' part-size rules and the upload's defaults, apart from `upload.ts` so that the worker's
 * configuration (`src/config.ts`, also read by every CLI command) can check its settings against them without
 * loading the stores' SDKs.
 */

/** @format bytes */
export const MIB = 1024 * 1024;
/** @format bytes — the part size when the worker sets none (`LONGHAUL_ARCHIVE_PART_MIB`). */
export const DEFAULT_PART_BYTES = 8 * MIB;
/** Parts being stored at once when the worker sets none (`LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT`). */
export const DEFAULT_PARTS_IN_FLIGHT = 4;
/** @format bytes — S3's smallest part but the last (GCS and Azure allow smaller; one rule for all stores). */
export const MIN_PART_BYTES = 5 * MIB;
/** @format bytes — GCS chunks must be multiples of 256 KiB. */
export const PART_MULTIPLE = 256 * 1024;
/** @format bytes — Azure's largest block (S3 allows 5 GiB parts). */
export const MAX_PART_BYTES = 4000 * MIB;
/** S3 and Azure allow 10,000 parts (Azure 50,000 blocks): a larger archive grows the part size. */
export const MAX_PARTS = 10_000;
/** A ceiling on parts in flight: each holds a part in memory, and a typo should not cost gigabytes. */
export const MAX_PARTS_IN_FLIGHT = 64;
