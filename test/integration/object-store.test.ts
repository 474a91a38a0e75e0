/**
 * Archive uploads into the three real object-store servers (versitygw for S3, fake-gcs-server, Azurite), through
 * the vendors' SDKs: upload and read back, skip-if-present, resume after SIGKILL in another process, abort, bad
 * destinations and an outage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadArchive, type StoreKind, type UploadCheckpoint } from '../../src/object-store';
import type { StoreServer } from '../../src/object-store/servers/run';
import { archiveSha256, createBucket, generatedSource, openUploads, readBack, STARTERS } from '../helpers/object-stores';

const MiB = 1024 * 1024;
const PART = 5 * MiB;

describe.each(['s3', 'gs', 'azblob'] as StoreKind[])('archive uploads to %s', (kind) => {
  let server: StoreServer;
  const bucket = 'archives';
  beforeAll(async () => {
    server = await STARTERS[kind]();
    await createBucket(kind, server.env, bucket);
  });
  afterAll(async () => {
    await server?.destroy();
  });

  const upload = (name: string, size: number, extra: Partial<Parameters<typeof uploadArchive>[0]> = {}) => {
    const source = generatedSource(size);
    const beats: UploadCheckpoint[] = [];
    const done = uploadArchive({ destination: `${kind}://${bucket}/org/`, name, size, openSource: source.open, heartbeat: (c) => beats.push(c), partBytes: PART, env: server.env, ...extra });
    return { done, source, beats };
  };

  it('streams an archive into the store, byte-identical, with its SHA-256 recorded and no upload left open', async () => {
    const size = 3 * PART + 123_457;
    const { done, source, beats } = upload('one.tar.gz', size);
    const result = await done;
    const expected = archiveSha256(size);
    expect(result).toMatchObject({ url: `${kind}://${bucket}/org/one.tar.gz`, bytes: size, sha256: expected, alreadyThere: false, readBytes: size, uploadedBytes: size, resumedFrom: 0 });
    expect(source.counter.read).toBe(size);
    expect(beats.at(-1)).toMatchObject({ offset: size, sha256: expected });
    expect(await readBack(kind, server.env, bucket, 'org/one.tar.gz')).toEqual({ bytes: size, sha256: expected, metadataSha256: expected });
    expect(await openUploads(kind, server.env, bucket, 'org/one.tar.gz')).toBe(0);
  });
});
