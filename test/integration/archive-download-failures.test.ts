/**
 * Issue 13's storage cases, one org migration each on a real Temporal server and worker: what storage
 * answers instead of the archive ends the migration the documented way (typed, non-retryable failures at
 * once; short answers still end with the archive), and no repository is left locked.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/workflows/org-migration';
import { ArchiveFailure } from '../../src/activities/github/archive-checks';
import type { StorageFault } from '../../src/emulator/storage/faults';
import { useStack } from '../helpers/stack';
import { applicationFailureOf } from '../helpers/failures';

const MIB = 1024 * 1024;
const REPOS = ['alpha', 'beta'];
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const stack = useStack({ emulator: { migrations: { exportMs: 200, archiveBytes: 4 * MIB } } });
const outcomes: string[] = [];

afterAll(() => {
  console.info(['case → outcome (time to end, storage requests)', ...outcomes].join('\n'));
});

/** Runs one migration with `faults` at the storage origin; resolves with its outcome. */
async function migrate(name: string, faults: StorageFault[]) {
  stack.emulator.storage.setFaults(faults);
  const storageBefore = stack.emulator.stats.storage.requests;
  const started = Date.now();
  const handle = await stack.client.workflow.start(orgMigration, {
    taskQueue: stack.taskQueue,
    workflowId: `archive-${name.replace(/\W+/g, '-')}-${Date.now()}`,
    args: [{ org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: { initialIntervalMs: 1_000, maxIntervalMs: 1_000 } }],
  });
  const outcome = await handle.result().then(
    (result) => ({ result, failure: undefined }),
    (err: unknown) => ({ result: undefined, failure: applicationFailureOf(err) }),
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const requests = stack.emulator.stats.storage.requests - storageBefore;
  outcomes.push(`${name} → ${outcome.failure ? `${outcome.failure.type} (non-retryable: ${outcome.failure.nonRetryable})` : 'COMPLETED with the archive'} in ${seconds} s, ${requests} storage requests`);
  for (const repo of REPOS) expect(stack.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
  return outcome;
}

describe('archive download failures, one migration per case', () => {
  it('a 200 text/html "AccessDenied" page is never reported as the archive: ArchiveNotAnArchive, after fresh URLs', async () => {
    const { failure } = await migrate('200 text/html AccessDenied page', [{ kind: 'page', contentType: 'text/html', body: '<html><body>AccessDenied</body></html>' }]);
    expect(failure?.type).toBe(ArchiveFailure.NotAnArchive);
    expect(failure?.nonRetryable).toBe(true);
    expect(failure?.message).toContain('text/html');
  });

  it('a wrong content type (application/json) ends as ArchiveNotAnArchive', async () => {
    const { failure } = await migrate('200 application/json body', [{ kind: 'page', contentType: 'application/json', body: '{"message":"Not Found"}' }]);
    expect(failure?.type).toBe(ArchiveFailure.NotAnArchive);
  });

  it('Location: file:///etc/passwd fails at once, non-retryable, in words a user understands', async () => {
    const { failure } = await migrate('Location file:///etc/passwd', [{ kind: 'presign', location: 'file:///etc/passwd' }]);
    expect(failure?.type).toBe(ArchiveFailure.LocationUnusable);
    expect(failure?.nonRetryable).toBe(true);
    expect(failure?.message).toContain('only downloads archives over http(s), not file');
  });

  it('a storage redirect loop fails at once as ArchiveRedirectLoop', async () => {
    const { failure } = await migrate('storage redirect loop', [{ kind: 'redirect' }]);
    expect(failure?.type).toBe(ArchiveFailure.RedirectLoop);
    expect(failure?.nonRetryable).toBe(true);
  });

  it('"announces 4 MiB, sends 1 MiB and closes" on every answer still ends with the archive: each resume keeps the bytes', async () => {
    const { result } = await migrate('announce 4 MiB, send 1 MiB, close (every answer)', [{ kind: 'short', sendBytes: MIB }]);
    expect(result?.archive.sha256).toBe(sha256(stack.emulator.migrations.archiveBytes(result!.migrationId)!));
    expect(existsSync(result!.archive.path)).toBe(true);
  });

  it('a transfer that breaks at the same byte every time is reported as broken, with bytes announced and sent', async () => {
    const { failure } = await migrate('announce 4 MiB, close at byte 1 MiB (every answer)', [{ kind: 'short', untilOffset: MIB }]);
    expect(failure?.type).toBe(ArchiveFailure.TransferBroken);
    expect(failure?.nonRetryable).toBe(true);
    expect(failure?.message).toContain(`storage announced ${4 * MIB} bytes, sent ${MIB} and closed`);
    expect(failure?.message).not.toMatch(/ignored the Range/i);
  });

  it('an object that changed between two answers is downloaded again from byte 0, never mixed', async () => {
    const { result } = await migrate('object changed between answers', [
      { kind: 'short', sendBytes: 2 * MIB, times: 1 },
      { kind: 'change', skip: 1, times: 1 },
    ]);
    const key = stack.emulator.migrations.all().find((m) => m.id === result!.migrationId)!;
    const current = stack.emulator.storage.bytesOf(`migrations/${key.id}/${key.guid}.tar.gz`)!;
    expect(result?.archive.sha256).toBe(sha256(current));
    expect(result?.archive.sha256).not.toBe(sha256(stack.emulator.migrations.archiveBytes(result!.migrationId)!));
  });
});
