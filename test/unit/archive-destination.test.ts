import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { objectKey, objectUrl, ObjectStoreFailure, parseDestination, partSizeFor } from '../../src/archive/object-store';

function refusal(url: string): ApplicationFailure {
  try {
    parseDestination(url);
  } catch (err) {
    return err as ApplicationFailure;
  }
  throw new Error(`${url} was accepted`);
}

describe('archive destinations', () => {
  it('names the store, the bucket and a prefix that ends in a slash', () => {
    expect(parseDestination('s3://my-bucket/exports/2026')).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: 'exports/2026/' });
    expect(parseDestination('gs://my_bucket')).toEqual({ kind: 'gs', bucket: 'my_bucket', prefix: '' });
    const azure = parseDestination('azblob://archives/org/');
    expect(azure).toEqual({ kind: 'azblob', bucket: 'archives', prefix: 'org/' });
    expect(objectUrl(azure, objectKey(azure, 'a.tar.gz'))).toBe('azblob://archives/org/a.tar.gz');
  });

  it('refuses an unknown scheme with a typed, non-retryable error naming the forms it takes', () => {
    const err = refusal('ftp://host/dir');
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err.type).toBe(ObjectStoreFailure.DestinationInvalid);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('unknown scheme "ftp"');
    expect(err.message).toContain('s3://BUCKET/PREFIX');
    expect(refusal('https://account.blob.core.windows.net/c/p').type).toBe(ObjectStoreFailure.DestinationInvalid);
    expect(refusal('not a url').type).toBe(ObjectStoreFailure.DestinationInvalid);
  });

  it('refuses invalid bucket names, ports and dot segments', () => {
    for (const url of ['s3://Upper/x', 's3://a/x', 'azblob://bad--name/x', 's3://bucket:9000/x', 's3://bucket/a/../b', 'gs://bucket/x?versionId=1']) {
      expect(refusal(url).type, url).toBe(ObjectStoreFailure.DestinationInvalid);
    }
  });

  it('refuses a URL that carries a credential without repeating the secret', () => {
    const withPassword = refusal('s3://user:hunter2@bucket/prefix');
    expect(withPassword.type).toBe(ObjectStoreFailure.DestinationCredential);
    expect(withPassword.message).not.toContain('hunter2');
    const withSignature = refusal('gs://bucket/prefix?X-Goog-Signature=abcdef');
    expect(withSignature.type).toBe(ObjectStoreFailure.DestinationCredential);
    expect(refusal('s3://bucket/AKIAABCDEFGHIJKLMNOP/').type).toBe(ObjectStoreFailure.DestinationCredential);
  });

  it('grows the part size so an archive fits in 10,000 parts, in 256 KiB steps', () => {
    expect(partSizeFor(1024 ** 3)).toBe(8 * 1024 * 1024);
    expect(partSizeFor(1024 ** 3, 1024)).toBe(5 * 1024 * 1024);
    const big = partSizeFor(200 * 1024 ** 3);
    expect(big * 10_000).toBeGreaterThanOrEqual(200 * 1024 ** 3);
    expect(big % (256 * 1024)).toBe(0);
  });
});
