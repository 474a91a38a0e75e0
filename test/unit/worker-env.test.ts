import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { missingWorkerNodeFlags, WORKER_MALLOC_DEFAULTS, WORKER_NODE_FLAGS, workerProcessEnv } from '../../src/worker-env';

describe("the worker process's malloc settings and node flags", () => {
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

  it('puts the node flags on the Docker image\'s command line (NODE_OPTIONS refuses them)', () => {
    const dockerfile = readFileSync(join(__dirname, '..', '..', 'Dockerfile'), 'utf8');
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
    expect(JSON.parse(cmd![1]!)).toEqual(['node', ...WORKER_NODE_FLAGS, 'dist/worker.js']);
  });

  it('names the flags a process was started without', () => {
    expect(missingWorkerNodeFlags(['--import', 'tsx'])).toEqual([...WORKER_NODE_FLAGS]);
    expect(missingWorkerNodeFlags([...WORKER_NODE_FLAGS, '--import', 'tsx'])).toEqual([]);
  });
});
