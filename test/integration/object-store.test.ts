/**
 * Archive uploads into the three real object-store servers (versitygw for S3, fake-gcs-server, Azurite), through
 * the vendors' SDKs and a byte-counting relay in front of each server: upload and read back, skip-if-present,
 * resume after SIGKILL in another process, abort, bad destinations refused before a byte is sent, and a store that
 * refuses every connection for a while.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { abortUploads, checkDestination, ObjectStoreFailure, uploadArchive, type ArchiveUploadOptions, type StoreKind, type UploadCheckpoint } from '../../src/archive/object-store';
import { startCountingProxy, type CountingProxy } from '../servers/counting-proxy';
import { startFakeGcs, type StoreServer } from '../servers/object-stores';
import { freePort } from '../../src/temporal/dev-server';
import { waitFor } from '../helpers/wait';
import { compiled } from '../helpers/compiled-entry';
import { archiveSha256, createBucket, envThrough, generatedSource, httpSource, openUploads, readBack, startArchiveServer, STARTERS } from '../helpers/object-stores';

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const BUCKET = 'archives';
/** What a loopback connection's kernel buffers (send and receive, autotuned) may hold beyond what a reader took. */
const SOCKET_BUFFERS = 8 * MiB;

async function refusal(run: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe.each(['s3', 'gs', 'azblob'] as StoreKind[])('archive uploads to %s', (kind) => {
  let server: StoreServer;
  let proxy: CountingProxy;
  let env: Record<string, string>;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    // GCS session URIs name the relay, so that the chunks (not only the API calls) pass through it.
    const proxyPort = await freePort();
    server = kind === 'gs' ? await startFakeGcs({ publicPort: proxyPort }) : await STARTERS[kind]();
    proxy = await startCountingProxy(server.port, proxyPort);
    env = envThrough(kind, server, proxy.endpoint);
    // What the store holds is read from the store itself (server.env), not through the relay that counts the uploads.
    await createBucket(kind, env, BUCKET);
  });
  afterEach(async () => {
    proxy?.refuse(false);
    for (const close of closers.splice(0)) await close();
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.destroy();
  });

  const upload = (name: string, size: number, extra: Partial<ArchiveUploadOptions> = {}) => {
    const source = generatedSource(size);
    const beats: UploadCheckpoint[] = [];
    const done = uploadArchive({ destination: `${kind}://${BUCKET}/org/`, name, size, openSource: source.open, heartbeat: (c) => beats.push(c), partBytes: PART, env, ...extra });
    return { done, source, beats };
  };

  it('streams an archive into the store, byte-identical, with its SHA-256 recorded and no upload left open', async () => {
    const size = 3 * PART + 123_457;
    const sentBefore = proxy.sentBytes();
    const { done, source, beats } = upload('one.tar.gz', size);
    const result = await done;
    const expected = archiveSha256(size);
    expect(result).toMatchObject({ url: `${kind}://${BUCKET}/org/one.tar.gz`, bytes: size, sha256: expected, alreadyThere: false, readBytes: size, uploadedBytes: size, resumedFrom: 0 });
    expect(source.counter.read).toBe(size);
    expect(proxy.sentBytes() - sentBefore).toBeGreaterThanOrEqual(size);
    expect(beats.at(-1)).toMatchObject({ offset: size, sha256: expected });
    expect(await readBack(kind, server.env, BUCKET, 'org/one.tar.gz')).toEqual({ bytes: size, sha256: expected, metadataSha256: expected });
    expect(await openUploads(kind, server.env, BUCKET, 'org/one.tar.gz')).toBe(0);
  });

  it('does not upload again an object already there with the same size and SHA-256', async () => {
    const size = PART + 777;
    const first = upload('twice.tar.gz', size);
    await first.done;
    // Without a checkpoint, the source is read to compare hashes, and nothing is sent.
    let sentBefore = proxy.sentBytes();
    const second = upload('twice.tar.gz', size);
    expect(await second.done).toMatchObject({ alreadyThere: true, uploadedBytes: 0, readBytes: size, sha256: archiveSha256(size) });
    expect(proxy.sentBytes() - sentBefore).toBeLessThan(64 * 1024);
    // With the finished attempt's checkpoint, not even the source is read.
    sentBefore = proxy.sentBytes();
    const third = upload('twice.tar.gz', size, { checkpoint: first.beats.at(-1) });
    expect(await third.done).toMatchObject({ alreadyThere: true, uploadedBytes: 0, readBytes: 0 });
    expect(third.source.counter.opened).toEqual([]);
    expect(proxy.sentBytes() - sentBefore).toBeLessThan(64 * 1024);
  });

  it('continues an upload whose process was SIGKILLed at a third, re-reading and re-sending only the parts in flight', async () => {
    const size = 12 * PART + 4321;
    const inFlight = kind === 'gs' ? 1 : 2;
    const origin = await startArchiveServer(size, 25 * MiB);
    closers.push(origin.close);
    const sentBefore = proxy.sentBytes();
    const input = { destination: `${kind}://${BUCKET}/resume/`, name: 'killed.tar.gz', size, sourceUrl: origin.url, partBytes: PART, partsInFlight: inFlight, env };
    const child = spawn(process.execPath, [compiled(join(__dirname, '..', 'helpers', 'upload-child.ts')), JSON.stringify(input)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
    // The resume starts from the last checkpoint the child wrote before it died, as from the last heartbeat the
    // server received: on a busy machine the child goes on past the line that decided the kill before the signal
    // lands, and what it sent and read in between is not what the bounds below are about.
    let last: UploadCheckpoint | undefined;
    let killed = false;
    for await (const line of createInterface({ input: child.stdout })) {
      if (!line.startsWith('checkpoint ')) continue;
      last = JSON.parse(line.slice('checkpoint '.length)) as UploadCheckpoint;
      if (!killed && last.offset >= size / 3) {
        child.kill('SIGKILL');
        killed = true;
      }
    }
    expect(await exited, stderr).toBe('SIGKILL');
    expect(last!.offset).toBeGreaterThanOrEqual(size / 3);
    expect(last!.offset).toBeLessThan(size);

    // Another "host": this process, with the heartbeat details only.
    const result = await uploadArchive({ ...input, openSource: httpSource(origin.url), checkpoint: last, heartbeat: () => undefined });
    const expected = archiveSha256(size);
    expect(result).toMatchObject({ sha256: expected, bytes: size, resumedFrom: last!.offset, readBytes: size - last!.offset });
    expect(await readBack(kind, server.env, BUCKET, 'resume/killed.tar.gz')).toEqual({ bytes: size, sha256: expected, metadataSha256: expected });
    expect(await openUploads(kind, server.env, BUCKET, 'resume/killed.tar.gz')).toBe(0);
    // Read twice: what the killed process had read past its last checkpoint (the parts in flight and the one
    // filling), and what the loopback sockets' kernel buffers held for it (several MiB when the reader waits).
    const reread = origin.servedBytes() - size;
    expect(reread).toBeLessThanOrEqual((inFlight + 1) * PART + SOCKET_BUFFERS);
    // Sent twice: the parts in flight at the kill (plus request headers).
    const resent = proxy.sentBytes() - sentBefore - size;
    expect(resent).toBeLessThanOrEqual(inFlight * PART + MiB);
  });

  it('aborts the upload when cancelled or when the source breaks its promise, leaving no parts behind', async () => {
    const size = 6 * PART;
    const cancel = new AbortController();
    const cancelled = upload('cancelled.tar.gz', size, {
      signal: cancel.signal,
      heartbeat: (c) => {
        if (c.offset > 0) cancel.abort(new Error('cancelled by the test'));
      },
    });
    await expect(cancelled.done).rejects.toThrow('cancelled by the test');
    expect(await openUploads(kind, server.env, BUCKET, 'org/cancelled.tar.gz')).toBe(0);

    // A source that ends early: a typed, permanent failure, and nothing left open.
    const short = generatedSource(size - MiB);
    const err = await refusal(uploadArchive({ destination: `${kind}://${BUCKET}/org/`, name: 'short.tar.gz', size, openSource: short.open, heartbeat: () => undefined, partBytes: PART, env }));
    expect(err.type).toBe(ObjectStoreFailure.SizeMismatch);
    expect(err.nonRetryable).toBe(true);
    expect(await openUploads(kind, server.env, BUCKET, 'org/short.tar.gz')).toBe(0);
    expect(await readBack(kind, server.env, BUCKET, 'org/short.tar.gz').catch(() => 'absent')).toBe('absent');
  });

  it('drops an upload left open by an attempt that failed retryable (abortUploads, the workflow\'s cleanup)', async () => {
    const size = 4 * PART;
    const stored: UploadCheckpoint[] = [];
    // The source breaks off once two parts are stored, retryable: the attempt keeps its parts for the next one.
    const breaking = async function* () {
      yield* await generatedSource(2 * PART).open(0);
      await waitFor('two parts stored', () => stored.at(-1)?.offset ?? 0, (offset) => offset >= 2 * PART);
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    };
    await expect(uploadArchive({ destination: `${kind}://${BUCKET}/org/`, name: 'left-open.tar.gz', size, openSource: () => Promise.resolve(breaking()), heartbeat: (c) => stored.push(c), partBytes: PART, env })).rejects.toThrow('socket hang up');
    expect(await openUploads(kind, server.env, BUCKET, 'org/left-open.tar.gz')).toBeGreaterThan(0);
    await abortUploads(`${kind}://${BUCKET}/org/`, 'left-open.tar.gz', env);
    expect(await openUploads(kind, server.env, BUCKET, 'org/left-open.tar.gz')).toBe(0);
    expect(await readBack(kind, server.env, BUCKET, 'org/left-open.tar.gz').catch(() => 'absent')).toBe('absent');
  });

  it('refuses a missing bucket, refused credentials and bad destinations with typed errors before a byte of the archive is read', async () => {
    const cases: { destination: string; env?: Record<string, string>; type: ObjectStoreFailure }[] = [
      { destination: `${kind}://no-such-bucket/org/`, type: ObjectStoreFailure.BucketNotFound },
      { destination: `ftp://${BUCKET}/org/`, type: ObjectStoreFailure.DestinationInvalid },
      { destination: `${kind}://${BUCKET}/org/?sig=abc`, type: ObjectStoreFailure.DestinationCredential },
    ];
    // fake-gcs-server checks no credentials; Azurite and versitygw refuse a wrong key with 403.
    if (kind === 's3') cases.push({ destination: `s3://${BUCKET}/org/`, env: { ...env, AWS_SECRET_ACCESS_KEY: 'wrong-secret' }, type: ObjectStoreFailure.AccessDenied });
    if (kind === 'azblob') {
      const wrongKey = env.AZURE_STORAGE_CONNECTION_STRING.replace(/AccountKey=[^;]+/, `AccountKey=${Buffer.from('wrong-key').toString('base64')}`);
      cases.push({ destination: `azblob://${BUCKET}/org/`, env: { AZURE_STORAGE_CONNECTION_STRING: wrongKey }, type: ObjectStoreFailure.AccessDenied });
    }
    for (const c of cases) {
      const { done, source } = upload('refused.tar.gz', 2 * PART, { destination: c.destination, env: c.env ?? env });
      const err = await refusal(done);
      expect(err.type, `${c.destination}: ${err.message}`).toBe(c.type);
      expect(err.nonRetryable).toBe(true);
      expect(source.counter.opened, c.destination).toEqual([]);
      // The check a migration makes before its export (one call to the store) fails the same way.
      const checked = await refusal(checkDestination(c.destination, c.env ?? env));
      expect(checked.type, `check ${c.destination}: ${checked.message}`).toBe(c.type);
      expect(checked.nonRetryable).toBe(true);
    }
    await expect(checkDestination(`${kind}://${BUCKET}/org/`, env)).resolves.toMatchObject({ kind, bucket: BUCKET });
  });

  it('waits out a store that refuses every connection for a while, and completes the object', async () => {
    const size = 6 * PART;
    let outage: Promise<void> | undefined;
    const { done } = upload('outage.tar.gz', size, {
      retryForMs: 60_000,
      heartbeat: (c) => {
        if (c.offset > 0 && !outage) {
          proxy.refuse(true);
          outage = new Promise((resolve) => setTimeout(resolve, 3_000)).then(() => proxy.refuse(false));
        }
      },
    });
    const result = await done;
    expect(outage).toBeDefined();
    const expected = archiveSha256(size);
    expect(result).toMatchObject({ sha256: expected, bytes: size });
    expect(await readBack(kind, server.env, BUCKET, 'org/outage.tar.gz')).toEqual({ bytes: size, sha256: expected, metadataSha256: expected });
    expect(await openUploads(kind, server.env, BUCKET, 'org/outage.tar.gz')).toBe(0);
  });
});
