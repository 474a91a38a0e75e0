/**
 * S3 and S3-compatible stores (AWS, Ceph, R2, GCS interoperability, versitygw) through `@aws-sdk/client-s3`'s raw
 * multipart commands, so that an upload can be continued from its id: CreateMultipartUpload, UploadPart,
 * ListParts, CompleteMultipartUpload, AbortMultipartUpload.
 *
 * Configuration is the SDK's own: `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, `AWS_REGION` / `AWS_DEFAULT_REGION`
 * (us-east-1 when an endpoint is set and no region is), access keys, profiles, SSO, instance and task roles
 * (the SDK's default credential chain). With an endpoint override the client addresses buckets path-style
 * (`http://host/bucket/key`): every S3-compatible server accepts it, while virtual-hosted names
 * (`bucket.host`) need wildcard DNS that a self-hosted endpoint rarely has.
 *
 * Every part carries its SHA-256 (`x-amz-checksum-sha256`), so S3 checks each part and keeps a composite
 * checksum; once complete, the object is copied onto itself with the whole archive's SHA-256 in its metadata
 * (`x-amz-meta-sha256`) and a full-object SHA-256 checksum (single-request copies reach 5 GiB; a larger archive
 * gets the digest as an object tag `sha256` instead).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectTaggingCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectTaggingCommand,
  S3Client,
  UploadPartCommand,
  type Part,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { currentNetworkSettings, proxyFor } from '../../../http/proxy';
import { storageFailure } from '../../storage/failures';
import { statusOf, storeCall, type PartStore, type StoredObject, type StoredPart } from './store';

/** The largest object CopyObject copies in one request. */
const COPY_LIMIT = 5 * 1024 ** 3;

/**
 * The AWS SDK warns on stderr, once per process, that later releases will need a newer Node; its documented
 * switch turns that off (the worker's Node version is the project's choice, and stderr stays clean).
 */
function quietNodeVersionWarning(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

/** The client the worker's environment describes. */
export function s3Client(env: NodeJS.ProcessEnv = process.env): S3Client {
  quietNodeVersionWarning();
  const endpoint = env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true' ? undefined : (env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL);
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? (endpoint ? 'us-east-1' : undefined);
  const config: S3ClientConfig = {
    // The parts carry their own SHA-256; the SDK adds no CRC32 of its own on top.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
  if (endpoint) Object.assign(config, { endpoint, forcePathStyle: true });
  if (region) config.region = region;
  // The SDK reads no proxy variable itself: its Node handler gets the proxy `proxy.ts` decides for the endpoint
  // (CONNECT for https, absolute-form for http), or keeps its own agents.
  const target = new URL(endpoint ?? `https://s3.${region ?? 'us-east-1'}.amazonaws.com`);
  const proxy = proxyFor(target, currentNetworkSettings());
  if (proxy) {
    config.requestHandler = new NodeHttpHandler({
      ...(target.protocol === 'https:' ? { httpsAgent: new HttpsProxyAgent(proxy, { keepAlive: true }) } : { httpAgent: new HttpProxyAgent(proxy, { keepAlive: true }) }),
    });
  }
  // Only when the environment given is not the process's own (a test's, a child's): the SDK reads process.env itself.
  if (env !== process.env && env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    config.credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, sessionToken: env.AWS_SESSION_TOKEN };
  }
  return new S3Client(config);
}

export class S3Store implements PartStore {
  readonly concurrentParts = true;
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  private where(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  /** Translates the SDK's errors: a missing bucket and refused credentials are permanent. */
  private call<T>(what: string, key: string, run: () => Promise<T>): Promise<T> {
    return this.request(`${what} ${this.where(key)}`, run, (err) => (err as { name?: string }).name === 'NoSuchBucket');
  }

  /** `what` (the request and its target) through `storeCall`; a client without a region is a configuration failure. */
  private async request<T>(what: string, run: () => Promise<T>, missingBucket: (err: unknown) => boolean): Promise<T> {
    return storeCall(what, run, (err) => {
      if (/region is missing/i.test((err as Error).message ?? '')) {
        throw storageFailure('objectStore', 'StoreNotConfigured', `${what}: no AWS region configured (set AWS_REGION)`, { cause: err });
      }
      return missingBucket(err);
    });
  }

  async check(): Promise<void> {
    // A HEAD answer has no body: a 404 is the bucket's (the SDK names it NotFound, not NoSuchBucket).
    await this.request(`HeadBucket s3://${this.bucket}`, () => this.client.send(new HeadBucketCommand({ Bucket: this.bucket })), (err) => statusOf(err) === 404 || (err as { name?: string }).name === 'NoSuchBucket');
  }

  async head(key: string): Promise<StoredObject | undefined> {
    try {
      const res = await this.call('HeadObject', key, () => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key, ChecksumMode: 'ENABLED' })));
      const bytes = res.ContentLength ?? 0;
      let sha256 = res.Metadata?.sha256;
      if (!sha256 && bytes > COPY_LIMIT) {
        const tags = await this.call('GetObjectTagging', key, () => this.client.send(new GetObjectTaggingCommand({ Bucket: this.bucket, Key: key })));
        sha256 = tags.TagSet?.find((t) => t.Key === 'sha256')?.Value;
      }
      return { bytes, sha256, version: res.ETag, storeChecksum: res.ChecksumSHA256 ? `sha256:${res.ChecksumSHA256}` : undefined };
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async begin(key: string, contentType: string): Promise<string> {
    const res = await this.call('CreateMultipartUpload', key, () =>
      this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType, ChecksumAlgorithm: 'SHA256' })),
    );
    if (!res.UploadId) throw new Error(`CreateMultipartUpload ${this.where(key)} answered no UploadId`);
    return res.UploadId;
  }

  private async listParts(key: string, upload: string): Promise<Part[] | undefined> {
    const parts: Part[] = [];
    let marker: string | undefined;
    try {
      do {
        const res = await this.call('ListParts', key, () => this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: upload, PartNumberMarker: marker })));
        parts.push(...(res.Parts ?? []));
        marker = res.IsTruncated ? res.NextPartNumberMarker : undefined;
      } while (marker);
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchUpload' || statusOf(err) === 404) return undefined;
      throw err;
    }
    return parts;
  }

  async stored(key: string, upload: string): Promise<Map<number, StoredPart> | undefined> {
    const parts = await this.listParts(key, upload);
    return parts && new Map(parts.map((p) => [p.PartNumber!, { bytes: p.Size ?? 0, sha256: p.ChecksumSHA256 }]));
  }

  async put(key: string, upload: string, part: { partNumber: number; body: Buffer; sha256: Buffer }, signal: AbortSignal): Promise<void> {
    const command = new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: upload, PartNumber: part.partNumber, Body: part.body, ContentLength: part.body.length, ChecksumSHA256: part.sha256.toString('base64') });
    // The signature covers the payload's SHA-256, which the SDK would compute again: the part's is already known.
    const payloadSha256 = part.sha256.toString('hex');
    command.middlewareStack.add(
      (next) => (args) => {
        (args.request as { headers: Record<string, string> }).headers['x-amz-content-sha256'] = payloadSha256;
        return next(args);
      },
      { step: 'build', name: 'longhaulKnownPayloadSha256' },
    );
    await this.call('UploadPart', key, () => this.client.send(command, { abortSignal: signal }));
  }

  async complete(key: string, upload: string, parts: number, sha256: string, size: number, contentType: string): Promise<StoredObject> {
    const listed = await this.listParts(key, upload);
    if (!listed) {
      // Completed by an attempt that died before saying so: the object is there if it is ours.
      const there = await this.head(key);
      if (there?.bytes === size) return this.record(key, there, sha256, contentType);
      throw new Error(`CompleteMultipartUpload ${this.where(key)}: the upload is gone and no complete object is there`);
    }
    const byNumber = new Map(listed.map((p) => [p.PartNumber!, p]));
    const chosen: Part[] = [];
    for (let n = 1; n <= parts; n++) {
      const p = byNumber.get(n);
      if (!p) throw new Error(`CompleteMultipartUpload ${this.where(key)}: part ${n} of ${parts} is not stored`);
      chosen.push(p);
    }
    const res = await this.call('CompleteMultipartUpload', key, () =>
      this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: upload,
          MultipartUpload: { Parts: chosen.map((p) => ({ PartNumber: p.PartNumber, ETag: p.ETag, ChecksumSHA256: p.ChecksumSHA256 })) },
        }),
      ),
    );
    return this.record(key, { bytes: size, version: res.ETag }, sha256, contentType);
  }

  /** Records the whole archive's SHA-256 with the complete object. */
  private async record(key: string, object: StoredObject, sha256: string, contentType: string): Promise<StoredObject> {
    if (object.sha256 === sha256) return object;
    if (object.bytes > COPY_LIMIT) {
      await this.call('PutObjectTagging', key, () => this.client.send(new PutObjectTaggingCommand({ Bucket: this.bucket, Key: key, Tagging: { TagSet: [{ Key: 'sha256', Value: sha256 }] } })));
      return { ...object, sha256 };
    }
    await this.call('CopyObject', key, () =>
      this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: key,
          CopySource: `${this.bucket}/${key.split('/').map(encodeURIComponent).join('/')}`,
          CopySourceIfMatch: object.version,
          MetadataDirective: 'REPLACE',
          Metadata: { sha256 },
          ContentType: contentType,
          ChecksumAlgorithm: 'SHA256',
        }),
      ),
    );
    const after = await this.head(key);
    if (after?.sha256 !== sha256 || after.bytes !== object.bytes) throw new Error(`CopyObject ${this.where(key)} did not record the SHA-256`);
    return after;
  }

  async abort(key: string, upload: string): Promise<void> {
    try {
      await this.call('AbortMultipartUpload', key, () => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: upload })));
    } catch (err) {
      if ((err as { name?: string }).name !== 'NoSuchUpload' && statusOf(err) !== 404) throw err;
    }
  }

  async abandon(key: string): Promise<void> {
    const res = await this.call('ListMultipartUploads', key, () => this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: key })));
    for (const u of res.Uploads ?? []) if (u.Key === key && u.UploadId) await this.abort(key, u.UploadId);
  }
}
