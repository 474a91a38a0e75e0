/**
 * Every object-store credential can be a file (compose and Kubernetes secrets): Azure's through
 * `AZURE_STORAGE_CONNECTION_STRING_FILE` / `AZURE_STORAGE_KEY_FILE`, which longhaul reads (the SDK reads no
 * variable); AWS's through the SDK's own shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`). Nothing here
 * connects anywhere: clients are built and their configuration read.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageSharedKeyCredential } from '@azure/storage-blob';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { azureService } from '../../src/archive/object-store/stores/azure';
import { s3Client } from '../../src/archive/object-store/stores/s3';
import { ObjectStoreFailure } from '../../src/archive/object-store/errors';

const dir = mkdtempSync(join(tmpdir(), 'store-secrets-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const KEY = Buffer.from('k'.repeat(32)).toString('base64');

describe('object-store credentials as files', () => {
  it('reads an Azure connection string from AZURE_STORAGE_CONNECTION_STRING_FILE', () => {
    const path = file('conn', `DefaultEndpointsProtocol=http;AccountName=filed;AccountKey=${KEY};BlobEndpoint=http://127.0.0.1:10000/filed;\n`);
    const service = azureService({ AZURE_STORAGE_CONNECTION_STRING_FILE: path });
    expect(service.url).toBe('http://127.0.0.1:10000/filed');
    expect(service.accountName).toBe('filed');
  });

  it('reads an Azure account key from AZURE_STORAGE_KEY_FILE', () => {
    const service = azureService({ AZURE_STORAGE_ACCOUNT: 'acct', AZURE_STORAGE_KEY_FILE: file('key', `${KEY}\n`) });
    expect(service.url).toBe('https://acct.blob.core.windows.net/');
    expect(service.credential).toBeInstanceOf(StorageSharedKeyCredential);
    expect((service.credential as StorageSharedKeyCredential).computeHMACSHA256('x')).toBe(new StorageSharedKeyCredential('acct', KEY).computeHMACSHA256('x'));
  });

  it('refuses an unreadable secret file with a typed, permanent failure naming the variable', () => {
    let thrown: unknown;
    try {
      azureService({ AZURE_STORAGE_CONNECTION_STRING_FILE: join(dir, 'missing') });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect((thrown as ApplicationFailure).type).toBe(ObjectStoreFailure.StoreNotConfigured);
    expect((thrown as ApplicationFailure).nonRetryable).toBe(true);
    expect((thrown as ApplicationFailure).message).toMatch(/^AZURE_STORAGE_CONNECTION_STRING_FILE: cannot read/);
  });

  it("gives the worker's S3 client the AWS keys of the SDK's own shared credentials file (AWS_SHARED_CREDENTIALS_FILE)", async () => {
    const path = file('aws', '[default]\naws_access_key_id = AKIAFILED\naws_secret_access_key = filed-secret\n');
    const saved = { ...process.env };
    for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
    // The chain's last resort is the instance metadata service (a link-local address): never asked here.
    Object.assign(process.env, { AWS_SHARED_CREDENTIALS_FILE: path, AWS_CONFIG_FILE: join(dir, 'no-config'), AWS_EC2_METADATA_DISABLED: 'true', AWS_REGION: 'eu-west-1' });
    try {
      const credentials = await s3Client().config.credentials();
      expect(credentials).toMatchObject({ accessKeyId: 'AKIAFILED', secretAccessKey: 'filed-secret' });
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });
});
