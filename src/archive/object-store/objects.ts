/**
 * Whole objects in a store, beside the archive upload (`upload.ts`): write a small object (a manifest, a listing
 * page), read one back (whole, or as a stream for a checksum), list what lies under a prefix (with a delimiter:
 * the "folders" one level down) and delete. One interface over S3, GCS and Azure Blob, each through its vendor's
 * SDK and the same clients and settings as the upload (`stores/*.ts`). Used by backups (issue 38): the run's
 * listing and manifest, retention and `backup verify`.
 *
 * A refusal (401/403) and a missing bucket become the store's permanent failures (`storeCall`), as for uploads;
 * anything else is thrown as it is (transient: the activity's retries take it).
 */
import type { Readable } from 'node:stream';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Bucket } from '@google-cloud/storage';
import type { ContainerClient } from '@azure/storage-blob';
import { objectUrl, type ArchiveDestination } from './destination';
import { statusOf, storeCall } from './stores/store';

/** One object a listing found. */
export interface ListedObject {
  key: string;
  bytes: number;
}

export interface Listing {
  objects: ListedObject[];
  /** With a delimiter: the prefixes one level down (`runs/2026…/`), each once. */
  prefixes: string[];
}

export interface ObjectAccess {
  /** The URL of `key` (`s3://bucket/key`). */
  url(key: string): string;
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  /** The object's bytes, or `undefined` when there is none. For small objects (manifests, listings). */
  get(key: string): Promise<Buffer | undefined>;
  /** The object's bytes as a stream, or `undefined` when there is none. */
  read(key: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /** Every object under `prefix` (all pages); with `delimiter`, only those directly under it, and the prefixes below. */
  list(prefix: string, delimiter?: string): Promise<Listing>;
  /** Deletes `key`; an object already gone is not an error. */
  delete(key: string): Promise<void>;
}

/** What `run` gives, or `undefined` when the store says there is no such object. */
async function unlessMissing<T>(run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    if (missing(err)) return undefined;
    throw err;
  }
}

const missing = (err: unknown) => statusOf(err) === 404 || ['NoSuchKey', 'NotFound', 'BlobNotFound'].includes((err as { name?: string; code?: string }).name ?? '') || (err as { code?: string }).code === 'BlobNotFound';

/**
 * The objects of the bucket (container) `destination` names, through the store's SDK configured from `env`. The
 * SDK is loaded, and the client made, at the first call (as for uploads, `stores/index.ts`): a setting the client
 * refuses fails that call.
 */
export function objectsFor(destination: ArchiveDestination, env: NodeJS.ProcessEnv = process.env): ObjectAccess {
  const url = (key: string) => objectUrl(destination, key);
  let access: Promise<ObjectAccess> | undefined;
  const loaded = () => (access ??= vendorObjects(destination, env, url));
  return {
    url,
    put: async (key, body, contentType) => (await loaded()).put(key, body, contentType),
    get: async (key) => (await loaded()).get(key),
    read: async (key) => (await loaded()).read(key),
    list: async (prefix, delimiter) => (await loaded()).list(prefix, delimiter),
    delete: async (key) => (await loaded()).delete(key),
  };
}

async function vendorObjects(destination: ArchiveDestination, env: NodeJS.ProcessEnv, url: (key: string) => string): Promise<ObjectAccess> {
  switch (destination.kind) {
    case 's3': {
      const [{ s3Client }, sdk] = await Promise.all([import('./stores/s3'), import('@aws-sdk/client-s3')]);
      return s3Objects(s3Client(env), sdk, destination.bucket, url);
    }
    case 'gs': {
      const { gcsStorage } = await import('./stores/gcs');
      return gcsObjects(gcsStorage(env).bucket(destination.bucket), url);
    }
    case 'azblob': {
      const { azureService } = await import('./stores/azure');
      return azureObjects(azureService(env).getContainerClient(destination.bucket), url);
    }
  }
}

function s3Objects(client: S3Client, sdk: typeof S3Sdk, bucket: string, url: (key: string) => string): ObjectAccess {
  const { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } = sdk;
  const notBucket = (err: unknown) => (err as { name?: string }).name === 'NoSuchBucket';
  const read = async (key: string) => (await unlessMissing(() => storeCall(`GetObject ${url(key)}`, () => client.send(new GetObjectCommand({ Bucket: bucket, Key: key })), notBucket)))?.Body as Readable | undefined;
  return {
    url,
    async put(key, body, contentType) {
      await storeCall(`PutObject ${url(key)}`, () => client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.length })), notBucket);
    },
    read,
    async get(key) {
      const body = await read(key);
      return body && collect(body);
    },
    async list(prefix, delimiter) {
      const out: Listing = { objects: [], prefixes: [] };
      let token: string | undefined;
      do {
        const res = await storeCall(`ListObjectsV2 ${url(prefix)}`, () => client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: delimiter, ContinuationToken: token })), notBucket);
        for (const o of res.Contents ?? []) if (o.Key) out.objects.push({ key: o.Key, bytes: o.Size ?? 0 });
        for (const p of res.CommonPrefixes ?? []) if (p.Prefix) out.prefixes.push(p.Prefix);
        token = res.IsTruncated ? res.NextContinuationToken : undefined;
      } while (token);
      return out;
    },
    async delete(key) {
      await storeCall(`DeleteObject ${url(key)}`, () => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })), notBucket);
    },
  };
}

function gcsObjects(bucket: Bucket, url: (key: string) => string): ObjectAccess {
  const notBucket = (err: unknown) => statusOf(err) === 404 && /bucket/i.test((err as Error).message ?? '');
  return {
    url,
    async put(key, body, contentType) {
      await storeCall(`upload ${url(key)}`, () => bucket.file(key).save(body, { contentType, resumable: false }), notBucket);
    },
    async get(key) {
      return (await unlessMissing(() => storeCall(`download ${url(key)}`, () => bucket.file(key).download())))?.[0];
    },
    async read(key) {
      const file = bucket.file(key);
      const there = await unlessMissing(() => storeCall(`get ${url(key)}`, () => file.getMetadata()));
      return there && file.createReadStream();
    },
    async list(prefix, delimiter) {
      const out: Listing = { objects: [], prefixes: [] };
      let pageToken: string | undefined;
      do {
        const [files, next, response] = await storeCall(`list ${url(prefix)}`, () => bucket.getFiles({ prefix, ...(delimiter ? { delimiter } : {}), autoPaginate: false, ...(pageToken ? { pageToken } : {}) }), notBucket);
        for (const f of files) out.objects.push({ key: f.name, bytes: Number(f.metadata.size ?? 0) });
        for (const p of ((response as { prefixes?: string[] } | undefined)?.prefixes ?? [])) out.prefixes.push(p);
        pageToken = (next as { pageToken?: string } | null)?.pageToken;
      } while (pageToken);
      return out;
    },
    async delete(key) {
      await storeCall(`delete ${url(key)}`, () => bucket.file(key).delete({ ignoreNotFound: true }));
    },
  };
}

function azureObjects(container: ContainerClient, url: (key: string) => string): ObjectAccess {
  const notContainer = (err: unknown) => (err as { code?: string }).code === 'ContainerNotFound';
  const read = async (key: string) => (await unlessMissing(() => storeCall(`download ${url(key)}`, () => container.getBlockBlobClient(key).download(), notContainer)))?.readableStreamBody as Readable | undefined;
  return {
    url,
    async put(key, body, contentType) {
      await storeCall(`upload ${url(key)}`, () => container.getBlockBlobClient(key).upload(body, body.length, { blobHTTPHeaders: { blobContentType: contentType } }), notContainer);
    },
    read,
    async get(key) {
      const body = await read(key);
      return body && collect(body);
    },
    async list(prefix, delimiter) {
      const out: Listing = { objects: [], prefixes: [] };
      const run = async () => {
        if (delimiter) {
          for await (const item of container.listBlobsByHierarchy(delimiter, { prefix })) {
            if (item.kind === 'prefix') out.prefixes.push(item.name);
            else out.objects.push({ key: item.name, bytes: item.properties.contentLength ?? 0 });
          }
        } else {
          for await (const item of container.listBlobsFlat({ prefix })) out.objects.push({ key: item.name, bytes: item.properties.contentLength ?? 0 });
        }
      };
      await storeCall(`list ${url(prefix)}`, run, notContainer);
      return out;
    },
    async delete(key) {
      await storeCall(`delete ${url(key)}`, () => container.getBlockBlobClient(key).deleteIfExists(), notContainer);
    },
  };
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
