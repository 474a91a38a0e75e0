/**
 * versitygw with a bucket, and a relay in front of it (`test/servers/counting-proxy.ts`) that this
 * process's worker reaches it through: its S3 variables are stubbed to the relay for the file, while the test reads
 * versitygw directly (`server.env`). The relay makes the store fail (`refuse`, `failWith`) for the worker only.
 * Kept apart from `object-stores.ts`, which a plain child process imports (no vitest there).
 */
import { afterAll, beforeAll, vi } from 'vitest';
import { startCountingProxy, type CountingProxy } from '../servers/counting-proxy';
import { startVersitygw, type StoreServer } from '../servers/object-stores';
import { createBucket, envThrough } from './object-stores';

export interface RelayedS3 {
  server: StoreServer;
  relay: CountingProxy;
}

/** Started in `beforeAll`, stopped in `afterAll`: read its fields inside tests. */
export function useS3BehindRelay(bucket: string): RelayedS3 {
  const ctx = {} as RelayedS3;
  beforeAll(async () => {
    ctx.server = await startVersitygw();
    ctx.relay = await startCountingProxy(ctx.server.port);
    await createBucket('s3', ctx.server.env, bucket);
    for (const [name, value] of Object.entries(envThrough('s3', ctx.server, ctx.relay.endpoint))) vi.stubEnv(name, value);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await ctx.relay?.close();
    await ctx.server?.destroy();
  });
  return ctx;
}
