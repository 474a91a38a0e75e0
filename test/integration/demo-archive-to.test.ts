/**
 * `npm run demo -- --archive-to s3 --exit`, as a user runs it (a real `longhaul` process, on the suite's Temporal
 * server): versitygw starts from the cache, the demo's migration streams its archive into it through the worker's
 * standard AWS_* settings, the objects are printed as read back from the store (URL, bytes, SHA-256), and the
 * stack, the S3 server with it, is gone after the exit.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { runLonghaul } from '../helpers/starter';
import { waitFor } from '../helpers/wait';

describe('the demo into the embedded object store', () => {
  it('migrates the demo org into versitygw, prints each object read back from it, and stops it with --exit', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-demo-'));
    try {
      const run = await runLonghaul(['demo', '--archive-to', 's3', '--exit'], `demo-${randomUUID()}`, {
        LONGHAUL_DATA_DIR: dataDir,
        LONGHAUL_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
        // Whatever the user's shell holds, the demo's worker talks to its own server.
        AWS_PROFILE: 'not-this-one',
        LONGHAUL_ARCHIVE_TO: 'gs://not-this-one/',
      });
      expect(run.code, run.stderr).toBe(0);
      const result = /^archive: (s3:\/\/longhaul-demo\/archives\/octo-org-migration-\d+\.tar\.gz) \((\d+) bytes, sha256 ([0-9a-f]{64}), version \S+\)$/m.exec(run.stdout);
      expect(result, run.stdout).not.toBeNull();
      const [, url, bytes, sha256] = result!;
      // The store holds exactly that object, byte for byte (read back and hashed), and longhaul recorded its SHA-256.
      const objects = run.stdout.split('\n').filter((line) => line.startsWith('object: '));
      expect(objects).toEqual([`object: ${url}  ${bytes} bytes  sha256 ${sha256} (matches the SHA-256 recorded in its metadata)`]);
      expect(Number(bytes)).toBe(4 * 1024 * 1024);
      // Upload progress on the way, and the S3 server's directory removed once the demo stopped it.
      expect(run.stderr).toMatch(/KiB of 4096 KiB stored in s3:\/\/longhaul-demo\/archives\//);
      const serverDir = /objects under (\S+);/.exec(run.stderr)?.[1];
      expect(serverDir, run.stderr).toBeDefined();
      expect(existsSync(serverDir!)).toBe(false);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('without --exit keeps the S3 server up with the stack until Ctrl-C, which stops and removes it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-demo-'));
    const child = spawn(process.execPath, [join(__dirname, '..', '..', 'bin', 'longhaul.js'), 'demo', '--archive-to', 's3'], {
      env: { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace'), LONGHAUL_TASK_QUEUE: `demo-${randomUUID()}`, LONGHAUL_DATA_DIR: dataDir, LONGHAUL_WORKFLOW_BUNDLE: inject('workflowBundlePath') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor('the demo to wait for Ctrl-C', () => stderr, (e) => e.includes('Ctrl-C stops it') || child.exitCode !== null, 110_000);
      expect(stderr).toMatch(/the stack stays up \(the S3 server too: http:\/\/127\.0\.0\.1:\d+, bucket longhaul-demo\)/);
      expect(stdout).toMatch(/^object: s3:\/\/longhaul-demo\/archives\/octo-org-migration-\d+\.tar\.gz {2}4194304 bytes {2}sha256 [0-9a-f]{64} \(matches/m);
      const serverDir = /objects under (\S+);/.exec(stderr)![1];
      expect(existsSync(serverDir)).toBe(true);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(existsSync(serverDir)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a store the demo does not embed, before starting anything', async () => {
    const run = await runLonghaul(['demo', '--archive-to', 'ftp', '--exit'], `demo-${randomUUID()}`);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("argument 'ftp' is invalid. Allowed choices are s3.");
  });
});
