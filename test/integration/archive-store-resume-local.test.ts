/**
 * Issue 40, the object-store path: a worker process SIGKILLed while it streams the archive into S3 (versitygw). The
 * checkpoint the server holds is the last heartbeat that got through (the worker sends them on at most once a second),
 * while this host wrote its own copy the moment the store confirmed each part. The worker is killed right after
 * such a copy is written, before the next heartbeat could carry it to the server (one chance in about a hundred
 * that a heartbeat goes out in those few milliseconds: the test then says so). The next attempt, on the same host in the same boot, continues from the parts the store confirms: its copy,
 * not the server's older checkpoint; what it resumed from is in its heartbeat details.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startVersitygw, type StoreServer } from '../servers/object-stores';
import type { UploadCheckpoint } from '../../src/archive/object-store';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import type { ArchiveDownload } from '../../src/archive/download';
import type { UploadProgress } from '../../src/archive/to-store';
import { startStack, type TestStack } from '../helpers/stack';
import { startWorkerChild, stopWorkerProcesses } from '../helpers/worker-process';
import { activityResults, runningActivities, secondAttemptResume } from '../helpers/multi-host';
import { createBucket, readBack } from '../helpers/object-stores';
import { waitFor } from '../helpers/wait';
import { FAST_POLL } from '../helpers/presets';

const MiB = 1024 * 1024;
/** Three parts of the default 8 MiB. */
const ARCHIVE_BYTES = 24 * MiB;
const BUCKET = 'archives';

/** This host's copy of the upload's checkpoint, once written. */
async function localCheckpoint(dataDir: string): Promise<UploadCheckpoint | undefined> {
  const dir = join(dataDir, '.archive-uploads');
  const name = (await readdir(dir).catch(() => [] as string[])).find((n) => n.endsWith('.json'));
  if (!name) return undefined;
  return readFile(join(dir, name), 'utf8').then((t) => (JSON.parse(t) as { checkpoint: UploadCheckpoint }).checkpoint, () => undefined);
}

describe('archive into an object store: resume on the same host after a SIGKILL', () => {
  let stack: TestStack | undefined;
  let server: StoreServer | undefined;
  beforeAll(async () => {
    server = await startVersitygw();
    await createBucket('s3', server.env, BUCKET);
    // The worker process inherits them: its SDK reads the standard variables, as a deployed worker's would.
    for (const [name, value] of Object.entries(server.env)) vi.stubEnv(name, value);
  });
  afterAll(async () => {
    await stopWorkerProcesses();
    await stack?.stop();
    vi.unstubAllEnvs();
    await server?.destroy();
  });

  it('continues from the parts the store confirmed (this host\'s checkpoint), past the server\'s older one', async () => {
    stack = await startStack({ emulator: { migrations: { exportMs: 300, archiveBytes: ARCHIVE_BYTES }, storageBytesPerSecond: 16 * MiB }, worker: false });
    const e = stack.emulator;
    const child = await startWorkerChild(stack);
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `store-resume-local-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: false, poll: FAST_POLL, archiveTo: `s3://${BUCKET}/local/` }],
    });
    await waitFor('two parts confirmed by the store', () => localCheckpoint(stack!.deps.dataDir), (c) => (c?.offset ?? 0) >= 16 * MiB, 60_000, 2);
    await child.stop('SIGKILL');
    const kept = (await localCheckpoint(stack.deps.dataDir))!;
    const onServer = (await runningActivities(handle)).find((a) => a.activity === 'downloadArchive');
    const heartbeat = (onServer?.heartbeat as UploadProgress | undefined)?.upload;
    expect(heartbeat?.offset ?? 0, 'the server\'s checkpoint lags this host\'s (else a heartbeat went out in the moment before the kill)').toBeLessThan(kept.offset);
    const servedAtKill = e.stats.storage.bytesServed;

    // Slowed, so the second attempt's heartbeat can be seen before it ends.
    e.storage.bytesPerSecond = MiB;
    await stack.startWorker();
    expect((await secondAttemptResume(handle)).resume).toMatchObject({ from: kept.offset, basis: 'store', readBack: 0 });
    e.storage.bytesPerSecond = 0;

    const result = await handle.result();
    const expected = createHash('sha256').update(e.migrations.archiveBytes(result.migrationId)!).digest('hex');
    expect(result.archive.sha256).toBe(expected);
    expect(await readBack('s3', server!.env, BUCKET, `local/octo-org-migration-${result.migrationId}.tar.gz`)).toMatchObject({ bytes: ARCHIVE_BYTES, sha256: expected });
    const [finished] = await activityResults(handle, 'downloadArchive');
    expect(finished.attempt).toBe(2);
    expect((finished.result as ArchiveDownload).resumedFrom).toBe(kept.offset);
    // From the confirmed parts on, once: nothing before them was read again.
    expect(e.stats.storage.bytesServed - servedAtKill).toBe(ARCHIVE_BYTES - kept.offset);
    // The copy is gone with the upload complete, and no temporary of it is left.
    expect(await readdir(join(stack.deps.dataDir, '.archive-uploads'))).toEqual([]);
  }, 180_000);
});
