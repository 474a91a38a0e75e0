/**
 * `longhaul demo --archive-to s3`: the demo's archives stream into an embedded S3 server instead of the data
 * directory. versitygw (Apache-2.0, built once into ~/.cache/longhaul like the Temporal CLI) serves S3 on a free
 * loopback port over a temporary directory; a bucket is created in it; the worker in this process is pointed at it
 * with the AWS SDK's standard variables only (`AWS_ENDPOINT_URL_S3`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY`), exactly as a deployed worker is pointed at AWS S3, R2 or Ceph; the migration names the
 * destination (`archiveTo`); and afterwards every object is read back from the store and printed with its size
 * and SHA-256. Stopping the demo stops the server and removes its directory.
 */
import { createHash } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import { ensureVersitygw, startVersitygw } from './demo-s3-server';
import { s3Client } from '../archive/object-store/stores/s3';
import { CliError } from './kit/context';
import { ExitCode } from '../common/exit-codes';

/** The stores the demo can run embedded (`--archive-to`). */
export const DEMO_STORES = ['s3'] as const;
export type DemoStore = (typeof DEMO_STORES)[number];

/** The bucket the demo creates, and the destination its migration names. */
export const DEMO_BUCKET = 'longhaul-demo';
export const DEMO_ARCHIVE_TO = `s3://${DEMO_BUCKET}/archives/`;

/** The AWS variables that would steer the SDK away from the embedded server (a profile, a session token…). */
const OVERRIDDEN = ['AWS_ENDPOINT_URL', 'AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_DEFAULT_REGION', 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS', 'LONGHAUL_ARCHIVE_TO'];

export interface StoredObject {
  url: string;
  bytes: number;
  sha256: string;
  /** The SHA-256 longhaul recorded in the object's metadata while uploading. */
  metadataSha256?: string;
}

export interface DemoObjectStore {
  /** The destination the demo's migration names. */
  archiveTo: string;
  /** The S3 endpoint, for looking at the objects by hand while the stack is up. */
  endpoint: string;
  /** Every object in the bucket, read back from the store (bytes counted, SHA-256 computed). */
  objects(): Promise<StoredObject[]>;
  stop(): Promise<void>;
}

/**
 * Starts versitygw, creates the demo's bucket and points this process's AWS SDK (the in-process worker's) at it.
 * A missing Go toolchain on a first run is a clear error (exit 5), before anything else starts.
 */
export async function startDemoObjectStore(kind: DemoStore, log: (m: string) => void): Promise<DemoObjectStore> {
  if (!DEMO_STORES.includes(kind)) throw new CliError(`--archive-to ${String(kind)}: the demo embeds ${DEMO_STORES.join(', ')}`, ExitCode.Usage);
  try {
    await ensureVersitygw((m) => log(`[s3] ${m}`));
  } catch (err) {
    throw new CliError(`the demo's S3 server: ${(err as Error).message}`, ExitCode.Unavailable);
  }
  const server = await startVersitygw();
  try {
    for (const name of OVERRIDDEN) delete process.env[name];
    Object.assign(process.env, server.env);
    const client = s3Client();
    await client.send(new CreateBucketCommand({ Bucket: DEMO_BUCKET }));
    log(`[s3] versitygw (S3) on ${server.endpoint}, objects under ${server.dataDir}; bucket ${DEMO_BUCKET}; the worker reads AWS_ENDPOINT_URL_S3=${server.endpoint} AWS_REGION=${server.env.AWS_REGION} and the server's AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY`);
    return {
      archiveTo: DEMO_ARCHIVE_TO,
      endpoint: server.endpoint,
      objects: async () => {
        const found: StoredObject[] = [];
        for await (const page of paginateListObjectsV2({ client }, { Bucket: DEMO_BUCKET })) {
          for (const { Key } of page.Contents ?? []) {
            if (!Key) continue;
            const head = await client.send(new HeadObjectCommand({ Bucket: DEMO_BUCKET, Key }));
            const body = (await client.send(new GetObjectCommand({ Bucket: DEMO_BUCKET, Key }))).Body as AsyncIterable<Uint8Array>;
            const hash = createHash('sha256');
            let bytes = 0;
            for await (const chunk of body) {
              hash.update(chunk);
              bytes += chunk.length;
            }
            found.push({ url: `s3://${DEMO_BUCKET}/${Key}`, bytes, sha256: hash.digest('hex'), metadataSha256: head.Metadata?.sha256 });
          }
        }
        return found;
      },
      stop: () => server.destroy(),
    };
  } catch (err) {
    await server.destroy();
    throw err;
  }
}

/** One line per object, for the demo's standard output. */
export function describeStoredObject(o: StoredObject): string {
  const check = o.metadataSha256 === undefined ? '' : o.metadataSha256 === o.sha256 ? ' (matches the SHA-256 recorded in its metadata)' : ` (its metadata records ${o.metadataSha256}: MISMATCH)`;
  return `object: ${o.url}  ${o.bytes} bytes  sha256 ${o.sha256}${check}`;
}
