/**
 * Issue 40: a worker process killed with SIGKILL mid-download, resumed by a new worker. The resume trusts the
 * `.part` file's length only when the machine has not restarted since the bytes were written (the kernel's boot id
 * in `.part.json`); after a restart it trusts only the last synced checkpoint. A restart is simulated the way it
 * looks on disk: `.part.json` names another boot, and the `.part` ends in a tail that was never written (zeros
 * past what was synced). What the resume kept, read back and fetched again is in the download's heartbeat details
 * and in `longhaul status`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { appendFile, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import type { ArchiveDownload } from '../../src/archive/download';
import type { PartMeta } from '../../src/archive/part';
import { currentBootId } from '../../src/archive/boot-id';
import { startStack, type TestStack } from '../helpers/stack';
import { startWorkerChild, stopWorkerProcesses } from '../helpers/worker-process';
import { activityResults, secondAttemptResume } from '../helpers/multi-host';
import { runLonghaul } from '../helpers/starter';
import { waitFor } from '../helpers/wait';
import { FAST_POLL } from '../helpers/presets';

const KiB = 1024;
const MiB = 1024 * KiB;
const ARCHIVE_BYTES = 6 * MiB;
/** 6 s for the whole archive: the worker is killed between two of the download's syncs (one a second). */
const BYTES_PER_SECOND = MiB;
/** The second attempt's speed until its resume has been seen (`finish` lifts it): over a minute for the rest. */
const SLOWED_BYTES_PER_SECOND = 64 * KiB;
/**
 * The download's heartbeat timeout (the input's `downloadHeartbeatTimeoutMs`; 30 s by default): how long after the
 * kill the second attempt starts. Its length is not what this test is about.
 */
const HEARTBEAT_TIMEOUT_MS = 10_000;
/** The tail a restart can leave: blocks allocated to the file and never filled. */
const UNWRITTEN_TAIL = 64 * KiB;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const kib = (n: number) => `${Math.round(n / 1024)} KiB`;

interface OnDisk {
  part: string;
  size: number;
  meta?: PartMeta;
}

/** The `.part` file in `dir`, its size and its `.part.json`, once they exist. */
async function onDisk(dir: string): Promise<OnDisk | undefined> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const name = names.find((n) => n.endsWith('.part'));
  if (!name) return undefined;
  const part = join(dir, name);
  const size = (await stat(part).catch(() => ({ size: 0 }))).size;
  const meta = await readFile(`${part}.json`, 'utf8').then((t) => JSON.parse(t) as PartMeta, () => undefined);
  return { part, size, meta };
}

describe('archive download: resume after a SIGKILL, by boot', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stopWorkerProcesses();
    await stack?.stop();
    stack = undefined;
  });

  /**
   * Starts a migration on a worker process, waits until its `.part` is at least `minSynced` synced and holds
   * `ahead` bytes more than that (so the file's length and the checkpoint differ), and kills the worker.
   */
  async function killMidDownload(workflowId: string, minSynced: number, ahead: number) {
    stack = await startStack({ emulator: { migrations: { exportMs: 300, archiveBytes: ARCHIVE_BYTES }, storageBytesPerSecond: BYTES_PER_SECOND }, worker: false });
    const child = await startWorkerChild(stack);
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `${workflowId}-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL, downloadHeartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS }],
    });
    const archives = join(stack.deps.dataDir, 'archives');
    await waitFor(
      'a synced checkpoint behind the .part',
      () => onDisk(archives),
      (d) => d?.meta?.synced !== undefined && d.meta.synced >= minSynced && d.size - d.meta.synced >= ahead,
      60_000,
      10,
    );
    await child.stop('SIGKILL');
    const killed = (await onDisk(archives))!;
    const servedAtKill = stack.emulator.stats.storage.bytesServed;
    // The second attempt slowed until `longhaul status` has shown it (a CLI process: seconds on a busy machine).
    stack.emulator.storage.bytesPerSecond = SLOWED_BYTES_PER_SECOND;
    return { handle, killed, servedAtKill, emulator: stack.emulator };
  }

  /** The second attempt's heartbeat details once it reports its resume, and `longhaul status`'s line meanwhile. */
  async function resumeReport(handle: Parameters<typeof secondAttemptResume>[0]) {
    const details = await secondAttemptResume(handle);
    const status = await runLonghaul(['status', handle.workflowId], stack!.taskQueue);
    expect(status.code, status.stderr).toBe(0);
    return { details, status: status.stdout };
  }

  async function finish(handle: Awaited<ReturnType<typeof killMidDownload>>['handle'], emulator: TestStack['emulator']) {
    emulator.storage.bytesPerSecond = 0;
    const result = await handle.result();
    const expected = emulator.migrations.archiveBytes(result.migrationId)!;
    expect(result.archive.bytes).toBe(ARCHIVE_BYTES);
    expect(result.archive.sha256).toBe(sha256(expected));
    expect(sha256(await readFile(result.archive.path))).toBe(sha256(expected));
    // Nothing of the killed attempt is left beside the archive (no `.part`, lock or `.part.json` temporary).
    const left = await readdir(join(result.archive.path, '..'));
    expect(left, left.join(', ')).toEqual([`octo-org-migration-${result.migrationId}.tar.gz`]);
    const [finished] = await activityResults(handle, 'downloadArchive');
    expect(finished.attempt).toBe(2);
    return finished.result as ArchiveDownload;
  }

  it('after a restart of the machine (another boot id) resumes from the synced checkpoint, not from the file length', async () => {
    const { handle, killed, servedAtKill, emulator } = await killMidDownload('resume-restart', MiB, 0);
    const synced = killed.meta!.synced!;
    expect(killed.meta!.bootId).toBe(await currentBootId());
    // What a restart leaves: the checkpoint names another boot, and the file runs past it into bytes never written.
    await writeFile(`${killed.part}.json`, JSON.stringify({ ...killed.meta, bootId: randomUUID() }));
    await appendFile(killed.part, Buffer.alloc(UNWRITTEN_TAIL));
    const length = killed.size + UNWRITTEN_TAIL;
    expect(synced).toBeLessThan(length);

    await stack!.startWorker();
    const { details, status } = await resumeReport(handle);
    // Cut back to the checkpoint; everything past it fetched again (and the one byte the resume asks early).
    expect(details.resume).toEqual({ from: synced, basis: 'synced', reRead: length - synced + 1, readBack: synced });
    expect(status).toContain(`resumed at ${kib(synced)} (synced; ${kib(length - synced + 1)} fetched again, ${kib(synced)} read back from disk)`);

    const download = await finish(handle, emulator);
    expect(download.resumedFrom).toBe(synced);
    expect(download.fetchedBytes).toBe(ARCHIVE_BYTES - synced);
    // One ranged answer from the byte before the checkpoint: nothing of the zeros was kept or compared.
    expect(emulator.stats.storage.bytesServed - servedAtKill).toBe(ARCHIVE_BYTES - synced + 1);
    expect(emulator.stats.storage.rangeRequests).toBe(1);
  });

  it('in the same boot resumes from the file length, past the synced checkpoint', async () => {
    const { handle, killed, servedAtKill, emulator } = await killMidDownload('resume-same-boot', 512 * KiB, 256 * KiB);
    const synced = killed.meta!.synced!;
    // The checkpoint lags the file (it is taken once a second): the resume must not fall back to it.
    expect(synced).toBeLessThan(killed.size);

    await stack!.startWorker();
    const { details, status } = await resumeReport(handle);
    expect(details.resume).toEqual({ from: killed.size, basis: 'file', reRead: 1, readBack: killed.size });
    expect(status).toContain(`resumed at ${kib(killed.size)} (file; 0 KiB fetched again, ${kib(killed.size)} read back from disk)`);

    const download = await finish(handle, emulator);
    expect(download.resumedFrom).toBe(killed.size);
    expect(emulator.stats.storage.bytesServed - servedAtKill).toBe(ARCHIVE_BYTES - killed.size + 1);
    expect(emulator.stats.storage.rangeRequests).toBe(1);
  });
});
