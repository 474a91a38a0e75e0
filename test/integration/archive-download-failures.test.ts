/**
 * Issue 13's storage cases, one org migration each on a real Temporal server and worker: what storage
 * answers instead of the archive ends the migration the documented way (typed, non-retryable failures at
 * once; short answers still end with the archive), and no repository is left locked.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { ArchiveFailure } from '../../src/archive/storage/checks';
import type { StorageFault } from '../../packages/emulator/src/storage/faults';
import { useStack } from '../helpers/stack';
import { applicationFailureOf } from '../helpers/failures';
import { waitFor } from '../helpers/wait';
import { runtimeLog } from '../helpers/temporal';
import { FAST_POLL } from '../helpers/presets';

const MIB = 1024 * 1024;
const REPOS = ['alpha', 'beta'];
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const stack = useStack({ emulator: { migrations: { exportMs: 200, archiveBytes: 4 * MIB } } });
const outcomes: string[] = [];

afterAll(() => {
  console.info(['case → outcome (time to end, storage requests)', ...outcomes].join('\n'));
});

/**
 * Runs one migration with `faults` at the storage origin; resolves with its outcome. With `maxStorageRequests`,
 * a download still asking storage beyond that many requests is judged by the count, never by time: the
 * migration is cancelled (its cleanup unlocks) and `overran` says how many requests it had made.
 */
async function migrate(name: string, faults: StorageFault[], maxStorageRequests?: number) {
  stack.emulator.storage.setFaults(faults);
  const storageBefore = stack.emulator.stats.storage.requests;
  const started = Date.now();
  const handle = await stack.client.workflow.start(orgMigration, {
    taskQueue: stack.taskQueue,
    workflowId: `archive-${name.replace(/\W+/g, '-')}-${Date.now()}`,
    args: [{ org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: FAST_POLL }],
  });
  const ended = handle.result().then(
    (result) => ({ result, failure: undefined, overran: undefined }),
    // A migration cancelled for overrunning ends without an ApplicationFailure.
    (err: unknown) => ({ result: undefined, failure: maxStorageRequests === undefined ? applicationFailureOf(err) : applicationFailureOrNone(err), overran: undefined }),
  );
  let overran: number | undefined;
  if (maxStorageRequests !== undefined) {
    let done = false;
    void ended.finally(() => (done = true));
    const requests = await waitFor('the download to end or to overrun its storage requests', () => stack.emulator.stats.storage.requests - storageBefore, (n) => done || n > maxStorageRequests);
    if (!done) {
      overran = requests;
      await handle.cancel();
    }
  }
  const outcome = { ...(await ended), overran, workflowId: handle.workflowId };
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const requests = stack.emulator.stats.storage.requests - storageBefore;
  const how = overran !== undefined ? `still downloading after ${overran} storage requests (cancelled)` : outcome.failure ? `${outcome.failure.type} (non-retryable: ${outcome.failure.nonRetryable})` : 'COMPLETED with the archive';
  outcomes.push(`${name} → ${how} in ${seconds} s, ${requests} storage requests`);
  for (const repo of REPOS) expect(stack.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
  return outcome;
}

function applicationFailureOrNone(err: unknown) {
  try {
    return applicationFailureOf(err);
  } catch {
    return undefined;
  }
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

  it('a store that ignores Range and cuts every transfer at byte 1 MiB ends ArchiveTransferBroken after 5 breaks without a byte past the high-water mark', async () => {
    // The first answer brings 1 MiB; every later one starts over at byte 0 and stops at the same byte: 1 + 5 requests.
    const { failure, overran, workflowId } = await migrate('ignore Range, close at byte 1 MiB (every answer)', [{ kind: 'ignore-range' }, { kind: 'short', untilOffset: MIB }], 6 + 4);
    expect(overran, 'storage asked again and again: each restart from byte 0 counted as progress').toBeUndefined();
    expect(failure?.type).toBe(ArchiveFailure.TransferBroken);
    expect(failure?.nonRetryable).toBe(true);
    expect(failure?.message).toContain(`storage announced ${4 * MIB} bytes, sent ${MIB} and closed`);
    expect(failure?.message).toContain(`never past byte ${MIB}`);
    expect(failure?.message).toMatch(/ignored the Range/i);
    expect(failure?.message).toMatch(new RegExp(`${stack.emulator.storage.baseUrl}/migrations%2F\\d+%2F[^ ?]+\\.tar\\.gz\\?…`));
    expect(failure?.message).not.toContain('X-Signature');
    // Named in the log once, though storage ignored the Range five times.
    const named = runtimeLog.filter((e) => e.meta?.event === 'storage-ignores-range' && e.meta?.workflowId === workflowId);
    expect(named.map((e) => e.message)).toEqual([expect.stringMatching(/^storage ignores Range: asked http:\/\/127\.0\.0\.1:\d+\/migrations%2F.*\?… for bytes 1048575- and got the whole object/)]);
  });

  it('a store that ignores Range but sends the whole archive in the end is downloaded, restarting from byte 0', async () => {
    const { result } = await migrate('ignore Range, close at byte 1 MiB twice, then send it all', [{ kind: 'ignore-range' }, { kind: 'short', untilOffset: MIB, times: 2 }]);
    expect(result?.archive.sha256).toBe(sha256(stack.emulator.migrations.archiveBytes(result!.migrationId)!));
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
