import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { ObjectStoreFailure } from '../../src/archive/object-store';
import { isTransient, storeCall } from '../../src/archive/object-store/stores/store';

describe('object-store failures', () => {
  it('waits out connection failures, timeouts, 408, 429 and 5xx from any of the three SDKs', () => {
    for (const err of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('aws'), { $metadata: { httpStatusCode: 503 } }),
      Object.assign(new Error('azure'), { statusCode: 500 }),
      Object.assign(new Error('gcs'), { code: 429 }),
      Object.assign(new Error('gcs'), { response: { status: 408 } }),
      new Error('socket hang up'),
      new Error('request to the store failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }),
      ApplicationFailure.retryable('later'),
    ]) {
      expect(isTransient(err), err.message).toBe(true);
    }
  });

  it('does not wait out a 4xx, a permanent failure or an unknown error', () => {
    for (const err of [
      Object.assign(new Error('aws'), { $metadata: { httpStatusCode: 404 } }),
      Object.assign(new Error('azure'), { statusCode: 400 }),
      ApplicationFailure.nonRetryable('no', ObjectStoreFailure.BucketNotFound),
      new Error('something else'),
    ]) {
      expect(isTransient(err), err.message).toBe(false);
    }
  });

  it('turns a refusal into a typed, permanent failure that keeps its cause', async () => {
    const refused = Object.assign(new Error('Forbidden'), { $metadata: { httpStatusCode: 403 } });
    const err = (await storeCall('UploadPart s3://b/k', () => Promise.reject(refused)).catch((e: unknown) => e)) as ApplicationFailure;
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err.type).toBe(ObjectStoreFailure.AccessDenied);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('UploadPart s3://b/k');
    expect(err.cause).toBe(refused);
    const missing = Object.assign(new Error('NoSuchBucket'), { name: 'NoSuchBucket' });
    const bucket = (await storeCall('CreateMultipartUpload s3://b/k', () => Promise.reject(missing), (e) => (e as Error).name === 'NoSuchBucket').catch((e: unknown) => e)) as ApplicationFailure;
    expect(bucket.type).toBe(ObjectStoreFailure.BucketNotFound);
    const other = new Error('boom');
    expect(await storeCall('x', () => Promise.reject(other)).catch((e: unknown) => e)).toBe(other);
  });
});
