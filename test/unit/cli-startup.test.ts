/**
 * What a `longhaul` command loads before it runs: the program (src/cli/program.ts) and the descriptors' commands,
 * not what the worker's activities need. The storage SDKs, the worker runtime and Google's auth library cost about
 * 1.5 s of CPU of each command's 3.2 s (measured on the 2-core machine, `longhaul --version` from source); the
 * descriptors load their activities only when a worker asks (`ProcessDescriptor.activities`).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = join(__dirname, '..', '..');

/** Loaded only where work is done: by a worker, a store's client or a Google credential. */
const WORKER_SIDE = ['@temporalio/worker', '@aws-sdk/client-s3', '@google-cloud/storage', '@azure/storage-blob', '@azure/identity', 'google-auth-library'];

describe('the longhaul program', () => {
  it('loads none of what activities need: the worker runtime, the storage SDKs, Google auth', async () => {
    // The packages of every module loaded once the program and every process's commands are registered.
    const script = `
      const { buildProgram } = require(${JSON.stringify(join(repo, 'src', 'cli', 'program.ts'))});
      buildProgram(() => { throw new Error("no command runs here"); });
      const packages = new Set();
      for (const file of Object.keys(require.cache)) {
        const m = file.match(/node_modules\\/((@[^/]+\\/)?[^/]+)/);
        if (m) packages.add(m[1]);
      }
      process.stdout.write(JSON.stringify([...packages]));`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script], { cwd: repo });
    const loaded = JSON.parse(stdout) as string[];
    expect(loaded).toContain('commander');
    expect(loaded).toContain('@temporalio/client');
    expect(loaded.filter((p) => WORKER_SIDE.includes(p))).toEqual([]);
  });
});
