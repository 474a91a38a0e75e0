/**
 * The GCS client from the worker's settings: `STORAGE_EMULATOR_HOST` in the worker's own environment (as a
 * deployment sets it) must still send the JSON API's requests under `/storage/v1`. The SDK reads the variable
 * from the process itself and used its value as the API's base, so a worker given it found no bucket in
 * fake-gcs-server (404) while tests that passed the setting explicitly passed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { emulatorOrigin, gcsStorage } from '../../src/archive/object-store/stores/gcs';

describe('the GCS client and STORAGE_EMULATOR_HOST', () => {
  afterEach(() => vi.unstubAllEnvs());

  it.each([
    ['127.0.0.1:4443', 'http://127.0.0.1:4443'],
    ['http://127.0.0.1:4443', 'http://127.0.0.1:4443'],
    ['http://127.0.0.1:4443/', 'http://127.0.0.1:4443'],
    ['http://127.0.0.1:4443/storage/v1', 'http://127.0.0.1:4443'],
    ['https://gcs.internal.example:8443/storage/v1/', 'https://gcs.internal.example:8443'],
  ])('takes %s as the emulator at %s', (host, origin) => {
    expect(emulatorOrigin(host)).toBe(origin);
    const storage = gcsStorage({ STORAGE_EMULATOR_HOST: host });
    expect([storage.apiEndpoint, storage.baseUrl]).toEqual([origin, `${origin}/storage/v1`]);
  });

  it('keeps the JSON API under /storage/v1 when the variable is in the process environment too', () => {
    vi.stubEnv('STORAGE_EMULATOR_HOST', 'http://127.0.0.1:4443');
    const storage = gcsStorage();
    expect([storage.apiEndpoint, storage.baseUrl]).toEqual(['http://127.0.0.1:4443', 'http://127.0.0.1:4443/storage/v1']);
  });

  it('talks to Google itself without the variable', () => {
    vi.stubEnv('STORAGE_EMULATOR_HOST', undefined);
    const storage = gcsStorage({});
    expect([storage.apiEndpoint, storage.baseUrl]).toEqual(['https://storage.googleapis.com', 'https://storage.googleapis.com/storage/v1']);
  });
});
