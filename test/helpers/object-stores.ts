/**
 * Object-store test kit: the three real servers (versitygw, fake-gcs-server, Azurite), buckets made with each
 * vendor's SDK, a deterministic archive of any size generated from its offset (so a child process and the test
 * produce the same bytes without sharing a file), and reading an object back to hash it.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import type { OpenSource, StoreKind } from '../../src/archive/object-store';
import { s3Client } from '../../src/archive/object-store/stores/s3';
import { gcsStorage } from '../../src/archive/object-store/stores/gcs';
import { azureService } from '../../src/archive/object-store/stores/azure';
import { startAzurite, startFakeGcs, startVersitygw, type StoreServer } from '../servers/object-stores';

export const STARTERS: Record<StoreKind, () => Promise<StoreServer>> = { s3: startVersitygw, gs: startFakeGcs, azblob: startAzurite };

/** Endpoint variables of each store's SDK, for pointing a client at a relay instead of the server. */
export function envThrough(kind: StoreKind, server: StoreServer, endpoint: string): Record<string, string> {
  if (kind === 's3') return { ...server.env, AWS_ENDPOINT_URL_S3: endpoint };
  if (kind === 'gs') return { STORAGE_EMULATOR_HOST: endpoint };
  const port = new URL(endpoint).port;
  return { AZURE_STORAGE_CONNECTION_STRING: server.env.AZURE_STORAGE_CONNECTION_STRING!.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`) };
}

export async function createBucket(kind: StoreKind, env: NodeJS.ProcessEnv, bucket: string): Promise<void> {
  if (kind === 's3') await s3Client(env).send(new CreateBucketCommand({ Bucket: bucket }));
  else if (kind === 'gs') await gcsStorage(env).createBucket(bucket);
  else await azureService(env).createContainer(bucket);
}

const BLOCK = 1024 * 1024;
const pattern = (() => {
  const block = Buffer.alloc(BLOCK);
  let seed = createHash('sha256').update('longhaul-archive').digest();
  for (let at = 0; at < BLOCK; at += seed.length) {
    seed.copy(block, at);
    seed = createHash('sha256').update(seed).digest();
  }
  return block;
})();

/** Bytes `[from, from + length)` of the generated archive: a fixed random MiB, each copy stamped with its index. */
export function archiveBytes(from: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  for (let done = 0; done < length; ) {
    const at = from + done;
    const inBlock = at % BLOCK;
    const n = Math.min(BLOCK - inBlock, length - done);
    pattern.copy(out, done, inBlock, inBlock + n);
    // The stamp (the block's index, 8 bytes at its start) makes every MiB, and so every part, different.
    const stamp = Buffer.alloc(8);
    stamp.writeBigUInt64BE(BigInt(Math.floor(at / BLOCK)));
    for (let i = inBlock; i < 8 && i - inBlock < n; i++) out[done + i - inBlock] = stamp[i];
    done += n;
  }
  return out;
}

export function archiveSha256(size: number): string {
  const hash = createHash('sha256');
  for (let at = 0; at < size; at += BLOCK) hash.update(archiveBytes(at, Math.min(BLOCK, size - at)));
  return hash.digest('hex');
}

/** An `openSource` over the generated archive that counts the bytes it hands out. */
export function generatedSource(size: number, chunkBytes = 256 * 1024) {
  const counter = { read: 0, opened: [] as number[] };
  const open = (offset: number) => {
    counter.opened.push(offset);
    return Promise.resolve(
      (async function* () {
        for (let at = offset; at < size; at += chunkBytes) {
          const chunk = archiveBytes(at, Math.min(chunkBytes, size - at));
          counter.read += chunk.length;
          yield chunk;
        }
      })(),
    );
  };
  return { open, counter };
}

/** The object's bytes and SHA-256 as read back from the store, and the SHA-256 recorded in its metadata. */
export async function readBack(kind: StoreKind, env: NodeJS.ProcessEnv, bucket: string, key: string): Promise<{ bytes: number; sha256: string; metadataSha256?: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  let metadataSha256: string | undefined;
  const take = async (body: AsyncIterable<Uint8Array>) => {
    for await (const chunk of body) {
      hash.update(chunk);
      bytes += chunk.length;
    }
  };
  if (kind === 's3') {
    const client = s3Client(env);
    metadataSha256 = (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).Metadata?.sha256;
    await take((await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body as AsyncIterable<Uint8Array>);
  } else if (kind === 'gs') {
    const file = gcsStorage(env).bucket(bucket).file(key);
    const [meta] = await file.getMetadata();
    metadataSha256 = meta.metadata?.sha256 as string | undefined;
    await take(file.createReadStream({ validation: false }));
  } else {
    const blob = azureService(env).getContainerClient(bucket).getBlockBlobClient(key);
    const res = await blob.download();
    metadataSha256 = res.metadata?.sha256;
    await take(res.readableStreamBody as AsyncIterable<Uint8Array>);
  }
  return { bytes, sha256: hash.digest('hex'), metadataSha256 };
}

/** Uploads the store still holds open for `key`: S3 multipart uploads, Azure uncommitted blocks, GCS session files. */
export async function openUploads(kind: StoreKind, env: NodeJS.ProcessEnv, bucket: string, key: string): Promise<number> {
  if (kind === 's3') {
    const res = await s3Client(env).send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    return (res.Uploads ?? []).filter((u) => u.Key === key).length;
  }
  if (kind === 'gs') {
    const [files] = await gcsStorage(env).bucket(bucket).getFiles({ prefix: key });
    return files.filter((f) => f.name !== key).length;
  }
  try {
    const list = await azureService(env).getContainerClient(bucket).getBlockBlobClient(key).getBlockList('uncommitted');
    return (list.uncommittedBlocks ?? []).length;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return 0;
    throw err;
  }
}

/**
 * The generated archive over HTTP, as storage serves it: `Range: bytes=N-` answers 206 from N, optionally
 * throttled (so a child can be killed part-way), counting every byte it sends.
 */
export async function startArchiveServer(size: number, bytesPerSecond = 0): Promise<{ url: string; servedBytes: () => number; close: () => Promise<void> }> {
  let served = 0;
  const server = createServer((req, res) => {
    const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
    res.writeHead(from ? 206 : 200, { 'content-length': size - from, 'content-type': 'application/gzip', etag: '"archive"', ...(from ? { 'content-range': `bytes ${from}-${size - 1}/${size}` } : {}) });
    let at = from;
    const slice = bytesPerSecond ? Math.max(16 * 1024, Math.floor(bytesPerSecond / 50)) : 1024 * 1024;
    const pump = () => {
      while (at < size && !res.destroyed) {
        const chunk = archiveBytes(at, Math.min(slice, size - at));
        at += chunk.length;
        served += chunk.length;
        // Backpressure counts: `served` is what the reader took, not what waits in a buffer.
        if (!res.write(chunk)) return void res.once('drain', bytesPerSecond ? () => setTimeout(pump, 20) : pump);
        if (bytesPerSecond) return void setTimeout(pump, 20);
      }
      if (at >= size) res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/archive.tar.gz`,
    servedBytes: () => served,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** An `openSource` over HTTP: `Range` from the offset, `If-Range` so a changed object cannot be spliced in. */
export function httpSource(url: string): OpenSource {
  return async (offset, signal) => {
    const res = await fetch(url, { headers: offset ? { range: `bytes=${offset}-`, 'if-range': '"archive"' } : {}, signal });
    if (res.status !== (offset ? 206 : 200) || !res.body) throw new Error(`GET ${url} from ${offset}: ${res.status}`);
    return res.body as unknown as AsyncIterable<Uint8Array>;
  };
}
