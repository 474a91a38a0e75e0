/**
 * The store a destination names, its client configured from the worker's environment. Each vendor's module, and so
 * its SDK, is loaded when a destination of its kind is first used: the three SDKs take about 0.9 s of CPU to load
 * together, which every worker start paid whichever store it used, or none.
 */
import type { ArchiveDestination } from '../destination';
import type { PartStore } from './store';

export async function storeFor(destination: ArchiveDestination, env: NodeJS.ProcessEnv = process.env): Promise<PartStore> {
  switch (destination.kind) {
    case 's3': {
      const { S3Store, s3Client } = await import('./s3');
      return new S3Store(s3Client(env), destination.bucket);
    }
    case 'gs': {
      const { GcsStore, gcsStorage } = await import('./gcs');
      return new GcsStore(gcsStorage(env), destination.bucket);
    }
    case 'azblob': {
      const { AzureStore, azureService } = await import('./azure');
      return new AzureStore(azureService(env), destination.bucket);
    }
  }
}

export type { PartStore, StoredObject, StoredPart } from './store';
