import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORKER_MALLOC_DEFAULTS, workerProcessEnv } from '../../src/worker-env';

describe("the worker process's malloc settings", () => {
  it('are added under the environment: a variable the user set wins, the rest passes through', () => {
    const env = workerProcessEnv({ MALLOC_ARENA_MAX: '4', PATH: '/bin' });
    expect(env).toEqual({ ...WORKER_MALLOC_DEFAULTS, MALLOC_ARENA_MAX: '4', PATH: '/bin' });
    expect(env.MALLOC_MMAP_THRESHOLD_).toBe('131072');
  });

  it('are the ones the Docker image sets (the Dockerfile cannot import them)', () => {
    const dockerfile = readFileSync(join(__dirname, '..', '..', 'Dockerfile'), 'utf8');
    const set = Object.fromEntries([...dockerfile.matchAll(/\b(MALLOC_[A-Z_]+)=(\S+)/g)].map((m) => [m[1], m[2]]));
    expect(set).toEqual(WORKER_MALLOC_DEFAULTS);
  });
});
