/** The store a destination names, its client configured from the worker's environment. */
import type { ArchiveDestination } from '../destination';
import { AzureStore, azureService } from './azure';
import { GcsStore, gcsStorage } from './gcs';
import { S3Store, s3Client } from './s3';
import type { PartStore } from './store';

export function storeFor(destination: ArchiveDestination, env: NodeJS.ProcessEnv = process.env): PartStore {
  switch (destination.kind) {
    case 's3':
      return new S3Store(s3Client(env), destination.bucket);
    case 'gs':
      return new GcsStore(gcsStorage(env), destination.bucket);
    case 'azblob':
      return new AzureStore(azureService(env), destination.bucket);
  }
}

export type { PartStore, StoredObject, StoredPart } from './store';
