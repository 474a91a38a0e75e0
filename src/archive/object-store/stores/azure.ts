/**
 * Azure Blob Storage block blobs through `@azure/storage-blob`: each part is a staged block whose id names the
 * upload and the part (`<upload>-<part>`, all ids the same length as Azure requires); `commitBlockList` makes the
 * blob appear, with the whole archive's SHA-256 in its metadata (`sha256`), in one step. The uncommitted block
 * list is the store's own record of the parts stored.
 *
 * Configuration is the SDK's own: `AZURE_STORAGE_CONNECTION_STRING` (Azurite, sovereign clouds, account keys),
 * else `AZURE_STORAGE_ACCOUNT` with `AZURE_STORAGE_KEY`, else `AZURE_STORAGE_ACCOUNT` with the default Azure
 * credential chain (`@azure/identity`: environment service principal, workload identity, managed identity,
 * Azure CLI login). The two secrets can be files (`AZURE_STORAGE_CONNECTION_STRING_FILE`,
 * `AZURE_STORAGE_KEY_FILE`: compose or Kubernetes secrets), which the SDK itself does not read.
 *
 * Azure has no call that drops uncommitted blocks: committing a block list drops every uncommitted block. So an
 * abort commits the blob's current block list again (an existing blob keeps its bytes and metadata), or, when
 * there is no blob yet, commits an empty one and deletes it.
 */
import { randomBytes } from 'node:crypto';
import { DefaultAzureCredential } from '@azure/identity';
import { BlobServiceClient, StorageSharedKeyCredential, type BlockBlobClient, type ContainerClient } from '@azure/storage-blob';
import { ApplicationFailure } from '@temporalio/common';
import { readSecret } from '../../../config';
import { storageFailure } from '../../storage/failures';
import { bucketNotFound, statusOf, storeCall, type PartStore, type StoredObject, type StoredPart } from './store';

/** A secret from `name` or the file `name_FILE` names; an unreadable file is the worker's configuration, not retried. */
function azureSecret(name: string, env: NodeJS.ProcessEnv): string | undefined {
  try {
    return readSecret(name, env);
  } catch (err) {
    throw storageFailure('objectStore', 'StoreNotConfigured', `${name}_FILE: cannot read ${env[`${name}_FILE`] ?? ''}: ${(err as Error).message}`);
  }
}

export function azureService(env: NodeJS.ProcessEnv = process.env): BlobServiceClient {
  // Transient failures are retried by the upload, which heartbeats meanwhile.
  const options = { retryOptions: { maxTries: 3 } };
  const connectionString = azureSecret('AZURE_STORAGE_CONNECTION_STRING', env);
  if (connectionString) return BlobServiceClient.fromConnectionString(connectionString, options);
  const account = env.AZURE_STORAGE_ACCOUNT;
  if (!account) {
    throw storageFailure('objectStore', 'StoreNotConfigured', 'azblob:// destinations need AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT (with AZURE_STORAGE_KEY or an Azure identity), on the worker');
  }
  const key = azureSecret('AZURE_STORAGE_KEY', env);
  const credential = key ? new StorageSharedKeyCredential(account, key) : new DefaultAzureCredential();
  return new BlobServiceClient(`https://${account}.blob.core.windows.net`, credential, options);
}

function blockId(upload: string, partNumber: number): string {
  return Buffer.from(`${upload}-${String(partNumber).padStart(6, '0')}`).toString('base64');
}

export class AzureStore implements PartStore {
  readonly concurrentParts = true;
  private readonly container: ContainerClient;

  constructor(service: BlobServiceClient, containerName: string) {
    this.container = service.getContainerClient(containerName);
  }

  private blob(key: string): BlockBlobClient {
    return this.container.getBlockBlobClient(key);
  }

  private call<T>(what: string, key: string, run: () => Promise<T>): Promise<T> {
    return storeCall(`${what} ${this.blob(key).url}`, run, (err) => (err as { code?: string }).code === 'ContainerNotFound');
  }

  async check(): Promise<void> {
    // A HEAD answer has no body (no error code): its 404 is the container's.
    await storeCall(`get container ${this.container.url}`, () => this.container.getProperties(), (err) => statusOf(err) === 404 || (err as { code?: string }).code === 'ContainerNotFound');
  }

  async head(key: string): Promise<StoredObject | undefined> {
    try {
      const props = await this.call('get properties', key, () => this.blob(key).getProperties());
      return { bytes: props.contentLength ?? 0, sha256: props.metadata?.sha256, version: props.etag };
    } catch (err) {
      if (statusOf(err) !== 404 || err instanceof ApplicationFailure) throw err;
      // A HEAD answer has no body: ask the container whether it is the container that is missing.
      if (!(await this.call('get container', key, () => this.container.exists()))) throw bucketNotFound(`get ${this.blob(key).url}`, err);
      return undefined;
    }
  }

  begin(): Promise<string> {
    return Promise.resolve(randomBytes(6).toString('hex'));
  }

  private async uncommitted(key: string): Promise<{ name: string; size: number }[]> {
    try {
      const list = await this.call('get block list', key, () => this.blob(key).getBlockList('uncommitted'));
      return list.uncommittedBlocks ?? [];
    } catch (err) {
      if (statusOf(err) === 404 && !(err instanceof ApplicationFailure)) return [];
      throw err;
    }
  }

  async stored(key: string, upload: string): Promise<Map<number, StoredPart>> {
    const parts = new Map<number, StoredPart>();
    for (const block of await this.uncommitted(key)) {
      const [prefix, part] = Buffer.from(block.name, 'base64').toString().split('-');
      if (prefix === upload && part) parts.set(Number(part), { bytes: block.size });
    }
    return parts;
  }

  async put(key: string, upload: string, part: { partNumber: number; body: Buffer }, signal: AbortSignal): Promise<void> {
    await this.call('stage block', key, () => this.blob(key).stageBlock(blockId(upload, part.partNumber), part.body, part.body.length, { abortSignal: signal }));
  }

  async complete(key: string, upload: string, parts: number, sha256: string, size: number, contentType: string): Promise<StoredObject> {
    const ids = Array.from({ length: parts }, (_, i) => blockId(upload, i + 1));
    const res = await this.call('commit block list', key, () => this.blob(key).commitBlockList(ids, { metadata: { sha256 }, blobHTTPHeaders: { blobContentType: contentType } }));
    return { bytes: size, sha256, version: res.etag };
  }

  async abort(key: string): Promise<void> {
    if ((await this.uncommitted(key)).length === 0) return;
    const blob = this.blob(key);
    const there = await this.head(key);
    if (there) {
      const props = await this.call('get properties', key, () => blob.getProperties());
      const committed = await this.call('get block list', key, () => blob.getBlockList('committed'));
      await this.call('commit block list', key, () =>
        blob.commitBlockList(
          (committed.committedBlocks ?? []).map((b) => b.name),
          { metadata: props.metadata, blobHTTPHeaders: { blobContentType: props.contentType }, conditions: { ifMatch: props.etag } },
        ),
      );
    } else {
      await this.call('commit block list', key, () => blob.commitBlockList([]));
      await this.call('delete blob', key, () => blob.deleteIfExists());
    }
  }

  abandon(key: string): Promise<void> {
    return this.abort(key);
  }
}
