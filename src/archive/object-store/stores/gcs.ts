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
 * bytes GCS holds (not used: see `stored`); cancelling is `DELETE` on it.
 */
import { createHash } from 'node:crypto';
import { Storage, type Bucket } from '@google-cloud/storage';
import { bucketNotFound, statusOf, storeCall, type PartStore, type StoredObject, type StoredPart } from './store';
import { readCapped } from '../../../http/body-limits';

const SESSION_SUFFIX = '.upload-session';

/**
 * The emulator's origin from `STORAGE_EMULATOR_HOST`, written as other Google SDKs take it (`host:port`), with a
 * scheme, or with the JSON API's path (`…/storage/v1`).
 */
export function emulatorOrigin(host: string): string {
  const url = host.includes('://') ? host : `http://${host}`;
  return url.replace(/\/+$/, '').replace(/\/storage\/v1$/, '');
}

export function gcsStorage(env: NodeJS.ProcessEnv = process.env): Storage {
  const emulator = env.STORAGE_EMULATOR_HOST ? emulatorOrigin(env.STORAGE_EMULATOR_HOST) : undefined;
  const storage = new Storage({
    ...(emulator ? { apiEndpoint: emulator, projectId: env.GOOGLE_CLOUD_PROJECT ?? 'emulator' } : {}),
    // Transient failures are retried by the upload, which heartbeats meanwhile.
    retryOptions: { autoRetry: true, maxRetries: 2, totalTimeout: 60 },
  });
  // The SDK also reads STORAGE_EMULATOR_HOST from the process's environment itself, and then sends the JSON API's
  // requests to that value as it is (`http://host:port/b/…`, without `/storage/v1`), which the emulator answers
  // 404: a worker given the variable found no bucket. The JSON API's base is set from the origin instead.
  if (emulator) storage.baseUrl = `${emulator}/storage/v1`;
  return storage;
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

  async check(): Promise<void> {
    const where = `get bucket gs://${this.bucketName}`;
    await storeCall(where, () => this.bucket.getMetadata(), (err) => statusOf(err) === 404);
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

  /**
   * The parts the checkpoint counts, while the session exists. GCS's status query (`PUT` with
   * `Content-Range: bytes *\/*`) would say how many bytes it holds, but fake-gcs-server takes that request as
   * the end of the upload and finalizes a truncated object; so the checkpoint, heartbeated after every chunk
   * GCS acknowledged, is the record. (With one chunk in flight at a time, at most that chunk is sent again.)
   */
  async stored(key: string, upload: string, partBytes: number, _size: number, counted: number): Promise<Map<number, StoredPart> | undefined> {
    if (!(await this.sessionUri(key, upload))) return undefined;
    const parts = new Map<number, StoredPart>();
    for (let n = 1; n * partBytes <= counted; n++) parts.set(n, { bytes: partBytes });
    return parts;
  }

  /**
   * One chunk, `PUT` to the session URI with its `Content-Range` (the session URI is the credential: no signing).
   * The SDK's own chunk writer is not used: on a broken connection it asks the session's status before resending,
   * which fake-gcs-server takes for the end of the upload (see `stored`).
   */
  async put(key: string, upload: string, part: { offset: number; body: Buffer; last: boolean; size: number }, signal: AbortSignal): Promise<void> {
    const uri = await this.sessionUri(key, upload);
    if (!uri) throw new Error(`the upload session of ${this.where(key)} is gone`);
    const end = part.offset + part.body.length - 1;
    const range = part.body.length ? `bytes ${part.offset}-${end}/${part.last ? part.size : '*'}` : `bytes */${part.size}`;
    // fetch takes no view of a SharedArrayBuffer (the part buffers are shared with the hash thread): a copy.
    const res = await fetch(uri, { method: 'PUT', headers: { 'Content-Range': range }, body: new Uint8Array(part.body), signal });
    // The status and the Range header are the answer; its body (empty) is read to its cap and no further.
    if (res.body) await readCapped(res.body, 'objectStoreControl', { truncate: true });
    const persisted = Number(/bytes=0-(\d+)/.exec(res.headers.get('range') ?? '')?.[1] ?? -1);
    const ok = part.last ? res.status === 200 || res.status === 201 : res.status === 308 && persisted === end;
    if (!ok) throw Object.assign(new Error(`chunk ${range} of ${this.where(key)}: ${res.status}${res.status === 308 ? `, GCS holds bytes to ${persisted}` : ''}`), { statusCode: res.status === 308 ? 503 : res.status });
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
    const res = uri ? await fetch(uri, { method: 'DELETE' }) : undefined;
    if (res?.body) await readCapped(res.body, 'objectStoreControl', { truncate: true });
    await this.dropSession(key);
  }

  async abandon(key: string): Promise<void> {
    await this.abort(key);
  }
}
