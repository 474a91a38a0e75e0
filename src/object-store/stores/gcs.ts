/**
 * Google Cloud Storage through `@google-cloud/storage`'s native resumable uploads: one session per archive,
 * one chunk per part (a multiple of 256 KiB), the last chunk finalizing the object; then the whole archive's
 * SHA-256 is patched into the object's metadata (`metadata.sha256`, a new metageneration). GCS keeps its own
 * CRC32C and MD5 of the object, reported as the store's checksum.
 *
 * Configuration is the SDK's own: Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, the
 * metadata server, workload identity), and `STORAGE_EMULATOR_HOST` for an emulator (no credentials then).
 *
 * A session URI is a credential (whoever holds it may write the object for a week), so it never goes into a
 * checkpoint: it is kept beside the object in the bucket (`KEY.upload-session`, readable by the same
 * credentials that could write the object), and the checkpoint names it by fingerprint. The session's status
 * (`PUT` with `Content-Range: bytes *\/SIZE` to the session URI, which takes no other credential) says how many
 * bytes GCS holds; cancelling is `DELETE` on it.
 */
import { createHash } from 'node:crypto';
import { Storage, type Bucket } from '@google-cloud/storage';
import { bucketNotFound, statusOf, storeCall, type PartStore, type StoredObject, type StoredPart } from './store';

const SESSION_SUFFIX = '.upload-session';

export function gcsStorage(env: NodeJS.ProcessEnv = process.env): Storage {
  const emulator = env.STORAGE_EMULATOR_HOST;
  return new Storage({
    ...(emulator ? { apiEndpoint: emulator.startsWith('http') ? emulator : `http://${emulator}`, projectId: env.GOOGLE_CLOUD_PROJECT ?? 'emulator' } : {}),
    // Transient failures are retried by the upload, which heartbeats meanwhile.
    retryOptions: { autoRetry: true, maxRetries: 2, totalTimeout: 60 },
  });
}

function fingerprint(uri: string): string {
  return createHash('sha256').update(uri).digest('hex').slice(0, 24);
}

export class GcsStore implements PartStore {
  readonly concurrentParts = false;
  private readonly bucket: Bucket;
  private readonly sessions = new Map<string, string>();

  constructor(
    storage: Storage,
    private readonly bucketName: string,
  ) {
    this.bucket = storage.bucket(bucketName);
  }

  private where(key: string): string {
    return `gs://${this.bucketName}/${key}`;
  }

  private call<T>(what: string, key: string, run: () => Promise<T>): Promise<T> {
    return storeCall(`${what} ${this.where(key)}`, run);
  }

  async head(key: string): Promise<StoredObject | undefined> {
    try {
      const [meta] = await this.call('get object', key, () => this.bucket.file(key).getMetadata());
      const sha256 = meta.metadata?.sha256;
      return { bytes: Number(meta.size), sha256: typeof sha256 === 'string' ? sha256 : undefined, version: String(meta.generation), storeChecksum: meta.crc32c ? `crc32c:${meta.crc32c}` : undefined };
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      const [exists] = await this.call('get bucket', key, () => this.bucket.exists());
      if (!exists) throw bucketNotFound(`get ${this.where(key)}`, err);
      return undefined;
    }
  }

  async begin(key: string, contentType: string): Promise<string> {
    const [uri] = await this.call('start resumable upload', key, () => this.bucket.file(key).createResumableUpload({ metadata: { contentType } }));
    await this.call('save upload session', key, () => this.bucket.file(key + SESSION_SUFFIX).save(JSON.stringify({ uri }), { resumable: false, contentType: 'application/json' }));
    const id = fingerprint(uri);
    this.sessions.set(id, uri);
    return id;
  }

  private async sessionUri(key: string, upload?: string): Promise<string | undefined> {
    const cached = upload && this.sessions.get(upload);
    if (cached) return cached;
    try {
      const [text] = await this.call('read upload session', key, () => this.bucket.file(key + SESSION_SUFFIX).download());
      const { uri } = JSON.parse(text.toString()) as { uri?: string };
      if (!uri || (upload && fingerprint(uri) !== upload)) return undefined;
      this.sessions.set(fingerprint(uri), uri);
      return uri;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async stored(key: string, upload: string, partBytes: number, size: number): Promise<Map<number, StoredPart> | undefined> {
    const uri = await this.sessionUri(key, upload);
    if (!uri) return undefined;
    const res = await fetch(uri, { method: 'PUT', headers: { 'Content-Range': `bytes */${size}`, 'Content-Length': '0' } });
    await res.arrayBuffer();
    const parts = new Map<number, StoredPart>();
    const total = Math.max(1, Math.ceil(size / partBytes));
    if (res.status === 200 || res.status === 201) {
      for (let n = 1; n <= total; n++) parts.set(n, { bytes: Math.min(partBytes, size - (n - 1) * partBytes) });
      return parts;
    }
    if (res.status !== 308) {
      if (res.status === 404 || res.status === 410) return undefined;
      throw Object.assign(new Error(`upload session status of ${this.where(key)}: ${res.status}`), { statusCode: res.status });
    }
    const committed = Number(/bytes=0-(\d+)/.exec(res.headers.get('range') ?? '')?.[1] ?? -1) + 1;
    for (let n = 1; n * partBytes <= committed && n < total; n++) parts.set(n, { bytes: partBytes });
    return parts;
  }

  async put(key: string, upload: string, part: { offset: number; body: Buffer; last: boolean }): Promise<void> {
    const uri = await this.sessionUri(key, upload);
    if (!uri) throw new Error(`the upload session of ${this.where(key)} is gone`);
    await this.call('upload chunk', key, async () => {
      const stream = this.bucket.file(key).createWriteStream({
        uri,
        offset: part.offset,
        resumable: true,
        validation: false,
        isPartialUpload: !part.last,
        ...(part.last ? {} : { chunkSize: part.body.length }),
      });
      await new Promise<void>((resolve, reject) => {
        stream.once('error', reject);
        stream.once('finish', resolve);
        stream.end(part.body);
      });
    });
  }

  async complete(key: string, _upload: string, _parts: number, sha256: string, size: number): Promise<StoredObject> {
    const there = await this.head(key);
    if (!there || there.bytes !== size) throw new Error(`${this.where(key)} is not complete after its last chunk (${there?.bytes ?? 'no'} bytes of ${size})`);
    if (there.sha256 !== sha256) await this.call('set metadata', key, () => this.bucket.file(key).setMetadata({ metadata: { sha256 } }));
    await this.dropSession(key);
    return { ...there, sha256 };
  }

  private async dropSession(key: string): Promise<void> {
    await this.call('delete upload session', key, () => this.bucket.file(key + SESSION_SUFFIX).delete({ ignoreNotFound: true }));
  }

  async abort(key: string, upload?: string): Promise<void> {
    const uri = await this.sessionUri(key, upload);
    if (uri) await (await fetch(uri, { method: 'DELETE' })).arrayBuffer();
    await this.dropSession(key);
  }

  async abandon(key: string): Promise<void> {
    await this.abort(key);
  }
}
