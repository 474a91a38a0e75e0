/**
 * A worker dies in the middle of the archive download; a new worker on the same task queue (sharing the
 * data directory, as a restarted worker does) resumes the download with `Range` instead of starting over,
 * and the archive's SHA-256 matches what the server exported.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/workflows/org-migration';
import type { Emulator } from '../../src/emulator/emulator';
import { emulatorDeps, startTestEmulator } from '../helpers/emulator';
import { startTestWorker, type TestWorker } from '../helpers/temporal';

const ARCHIVE_BYTES = 2_000_000;
/** 5 s for the whole archive: long enough to interrupt it in the middle. */
const BYTES_PER_SECOND = 400_000;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('org migration: worker killed during the download', () => {
  let emulator: Emulator | undefined;
  const workers: TestWorker[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop().catch(() => undefined);
    await emulator?.close();
  });

  it('resumes on a new worker with Range and produces an archive whose SHA-256 matches', async () => {
    emulator = await startTestEmulator({ migrations: { exportMs: 500, archiveBytes: ARCHIVE_BYTES }, storageBytesPerSecond: BYTES_PER_SECOND });
    const deps = await emulatorDeps(emulator);
    // The first worker hands its sticky workflow cache back quickly once it is gone.
    const first = await startTestWorker(deps, { workerOptions: { stickyQueueScheduleToStartTimeout: '1s', shutdownGraceTime: 0 } });
    workers.push(first);

    const handle = await first.client.workflow.start(orgMigration, {
      taskQueue: first.taskQueue,
      workflowId: `migration-resume-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha', 'beta'], lockRepositories: true, poll: { initialIntervalMs: 1_000, maxIntervalMs: 1_000 } }],
    });

    // Kill the first worker once a good part (but not all) of the archive went out.
    const deadline = Date.now() + 20_000;
    while (emulator.stats.storage.bytesServed < ARCHIVE_BYTES * 0.3) {
      if (Date.now() > deadline) throw new Error('the download never started');
      await new Promise((r) => setTimeout(r, 50));
    }
    await first.stop();
    const servedToFirst = emulator.stats.storage.bytesServed;
    expect(servedToFirst).toBeLessThan(ARCHIVE_BYTES);

    const second = await startTestWorker(deps, { taskQueue: first.taskQueue });
    workers.push(second);
    // The first worker's client connection is closed with it.
    const resumed = second.client.workflow.getHandle(handle.workflowId);
    const result = await resumed.result();

    const expected = emulator.migrations.archiveBytes(result.migrationId)!;
    expect(result.archive.bytes).toBe(ARCHIVE_BYTES);
    expect(result.archive.sha256).toBe(sha256(expected));
    expect(sha256(await readFile(result.archive.path))).toBe(sha256(expected));

    // The second attempt asked for the rest only.
    expect(emulator.stats.storage.rangeRequests).toBeGreaterThan(0);
    expect(emulator.stats.storage.bytesServed).toBeLessThan(2 * ARCHIVE_BYTES);
    expect(emulator.stats.storage.bytesServed - servedToFirst).toBeLessThan(ARCHIVE_BYTES);
    expect(emulator.stats.storage.rejectedWithAuthorization).toBe(0);

    const { events } = await resumed.fetchHistory();
    const downloadStarts = (events ?? []).filter(
      (e) => e.activityTaskStartedEventAttributes && (events ?? []).some((s) => s.activityTaskScheduledEventAttributes?.activityType?.name === 'downloadArchive' && String(s.eventId) === String(e.activityTaskStartedEventAttributes?.scheduledEventId)),
    );
    expect(downloadStarts.map((e) => e.activityTaskStartedEventAttributes?.attempt)).toEqual([2]);
    expect(result.unlockedRepositories).toEqual(['alpha', 'beta']);
    for (const repo of ['alpha', 'beta']) expect(emulator.migrations.isLocked('octo-org', repo)).toBe(false);
  });
});
