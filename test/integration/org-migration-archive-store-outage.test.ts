/**
 * A store that fails every request for 5 minutes in the middle of an upload (issue 26): waited out, and the archive
 * is complete and byte-identical afterwards. Through the real workflow and worker, into versitygw behind a relay
 * that, for the 5 minutes, drops every other connection and answers the rest `503 Service Unavailable`.
 *
 * Time is what this test is about, and the 5 minutes are waited out inside one download attempt (the upload retries
 * a failing store for 10 minutes, heartbeating, before it gives the attempt up). A time-skipping test server skips
 * no time while an activity runs, so the activity gets a clock of its own (`ActivityDeps.clock` and `sleep`) that
 * runs 30 times as fast as the wall clock: the upload's deadline, its waits between tries (0.2 s doubling to 5 s,
 * each lasting a thirtieth on the wall clock, concurrent ones overlapping as they would) and the relay's outage
 * window are all on it. The store's calls and their failures are real.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ListMultipartUploadsCommand, ListPartsCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import type { ConnectionFault } from '../servers/counting-proxy';
import { s3Client } from '../../src/archive/object-store/stores/s3';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { useStack } from '../helpers/stack';
import { readBack } from '../helpers/object-stores';
import { useS3BehindRelay } from '../helpers/s3-relay';
import { FAST_POLL, SHORT_OUTAGE_MS } from '../helpers/presets';
import { waitFor } from '../helpers/wait';

const BUCKET = 'archives';
/** Three parts of 8 MiB (the default part size), served at 2 MB/s: the outage begins with two parts to go. */
const ARCHIVE_BYTES = 24_000_000;
const STORAGE_BYTES_PER_SECOND = 2_000_000;

/** How much faster than the wall clock the activity's clock runs: the 5 minutes pass in 10 s. */
const SPEED = 30;

/** The activity's clock: `SPEED` times the wall clock, and waits on it (a wait of 5 s lasts 5 s / `SPEED`). */
function fasterClock() {
  const origin = Date.now();
  const waits: number[] = [];
  return {
    now: () => origin + (Date.now() - origin) * SPEED,
    waits,
    sleep(ms: number, signal: AbortSignal): Promise<void> {
      waits.push(ms);
      return sleep(Math.ceil(ms / SPEED), undefined, { signal });
    },
  };
}

describe('org migration: the object store fails every request for 5 minutes mid-upload', () => {
  const clock = fasterClock();
  const stack = useStack({
    emulator: { migrations: { exportMs: 300, archiveBytes: ARCHIVE_BYTES }, storageBytesPerSecond: STORAGE_BYTES_PER_SECOND },
    deps: { clock: clock.now, sleep: clock.sleep },
  });
  const s3 = useS3BehindRelay(BUCKET);

  it('waits the outage out inside the download attempt and completes the archive, byte-identical', async () => {
    const direct = s3Client(s3.server.env);
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `archive-store-outage-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL, archiveTo: `s3://${BUCKET}/outage/` }],
    });
    // Mid-upload: the first part is in the store, two are to come.
    await waitFor(
      'the first part stored',
      async () => {
        const [upload] = (await direct.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads ?? [];
        return upload ? ((await direct.send(new ListPartsCommand({ Bucket: BUCKET, Key: upload.Key, UploadId: upload.UploadId }))).Parts ?? []).length : 0;
      },
      (parts) => parts >= 1,
      60_000,
    );

    const outageStartsAt = clock.now();
    const outageEndsAt = outageStartsAt + SHORT_OUTAGE_MS;
    let connections = 0;
    let lastFailureAt = 0;
    const wallStart = Date.now();
    s3.relay.failWith((): ConnectionFault | undefined => {
      if (clock.now() >= outageEndsAt) return undefined;
      lastFailureAt = clock.now();
      return connections++ % 2 === 0 ? 'unavailable' : 'refuse';
    });

    const result = await handle.result();
    const wallMs = Date.now() - wallStart;
    s3.relay.failWith(undefined);

    // The outage lasted its 5 minutes on the activity's clock, and every connection in it failed.
    const failed = s3.relay.failed();
    expect(failed.unavailable).toBeGreaterThan(3);
    expect(failed.refuse).toBeGreaterThan(3);
    expect(lastFailureAt - outageStartsAt).toBeGreaterThan(SHORT_OUTAGE_MS - 10_000);
    expect(clock.now()).toBeGreaterThanOrEqual(outageEndsAt);

    // Complete and byte-identical, with nothing left open.
    const expected = createHash('sha256').update(stack.emulator.migrations.archiveBytes(result.migrationId)!).digest('hex');
    const key = `outage/octo-org-migration-${result.migrationId}.tar.gz`;
    expect(result.archive).toMatchObject({ url: `s3://${BUCKET}/${key}`, bytes: ARCHIVE_BYTES, sha256: expected });
    expect(await readBack('s3', s3.server.env, BUCKET, key)).toEqual({ bytes: ARCHIVE_BYTES, sha256: expected, metadataSha256: expected });
    expect((await direct.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads ?? []).toEqual([]);

    // Waited out inside one download attempt, as on the wall clock (the upload retries for 10 minutes).
    const events = (await handle.fetchHistory()).events ?? [];
    const attempts = events.filter((e) => e.activityTaskStartedEventAttributes && events.find((s) => s.eventId?.toString() === e.activityTaskStartedEventAttributes!.scheduledEventId?.toString())?.activityTaskScheduledEventAttributes?.activityType?.name === 'downloadArchive');
    expect(attempts.map((e) => e.activityTaskStartedEventAttributes!.attempt)).toEqual([1]);
    console.log(
      `store outage test: ${failed.unavailable} connections answered 503 and ${failed.refuse} dropped over ${Math.round((lastFailureAt - outageStartsAt) / 1000)} s of the activity's clock; ` +
        `${clock.waits.length} waits between tries (longest ${Math.max(...clock.waits)} ms); ${(wallMs / 1000).toFixed(1)} s of wall time from the outage's start to the result`,
    );
  });
});
