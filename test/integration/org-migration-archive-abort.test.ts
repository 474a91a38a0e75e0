/**
 * A migration cancelled mid-upload leaves no multipart upload behind (issue 26), even when no download attempt is
 * able to abort it: the store (versitygw, behind a relay) refuses every connection from the moment of the
 * cancellation until the download's attempt has ended, so that attempt's own abort fails; the workflow's cleanup
 * then aborts the upload (`abortArchiveUpload`, patched 'archive-upload-aborted') once the store answers again.
 */
import { ListMultipartUploadsCommand, ListPartsCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { s3Client } from '../../src/archive/object-store/stores/s3';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { useStack } from '../helpers/stack';
import { useS3BehindRelay } from '../helpers/s3-relay';
import { FAST_POLL } from '../helpers/presets';
import { expectCancelled } from '../helpers/failures';
import { waitFor } from '../helpers/wait';

const BUCKET = 'archives';
/** Three parts of 8 MiB (the default part size), served at 2 MB/s: the upload takes about 12 s. */
const ARCHIVE_BYTES = 24_000_000;
const STORAGE_BYTES_PER_SECOND = 2_000_000;

describe('org migration cancelled mid-upload', () => {
  const stack = useStack({ emulator: { migrations: { exportMs: 300, archiveBytes: ARCHIVE_BYTES }, storageBytesPerSecond: STORAGE_BYTES_PER_SECOND } });
  const s3 = useS3BehindRelay(BUCKET);

  const direct = () => s3Client(s3.server.env);
  const openUploadsFor = async (key: string) => ((await direct().send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads ?? []).filter((u) => u.Key === key);

  it('aborts the multipart upload from the workflow when the download attempt could not: no parts left', async () => {
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `archive-abort-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL, archiveTo: `s3://${BUCKET}/cancelled/` }],
    });
    // Mid-upload: the multipart upload exists and holds at least one part.
    const [upload] = await waitFor(
      'a multipart upload with a part stored',
      async () => {
        const uploads = (await direct().send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads ?? [];
        const parts = uploads[0] ? ((await direct().send(new ListPartsCommand({ Bucket: BUCKET, Key: uploads[0].Key, UploadId: uploads[0].UploadId }))).Parts ?? []) : [];
        return parts.length > 0 ? uploads : [];
      },
      (uploads) => uploads.length === 1,
      60_000,
    );
    const key = upload.Key!;
    expect(key).toMatch(/^cancelled\/octo-org-migration-\d+\.tar\.gz$/);

    // The store goes away, then the migration is cancelled: the download attempt learns it on a heartbeat and
    // tries to abort, which the store refuses.
    s3.relay.refuse(true);
    await handle.cancel();
    const events = async () => (await handle.fetchHistory()).events ?? [];
    await waitFor('the download attempt to end cancelled', events, (e) => e.some((ev) => ev.activityTaskCanceledEventAttributes), 90_000);
    // The attempt is gone and its abort was refused: the upload is still open in the store.
    expect(await openUploadsFor(key)).toHaveLength(1);

    s3.relay.refuse(false);
    await expectCancelled(handle.result());
    expect(await openUploadsFor(key)).toEqual([]);
    expect(stack.emulator.migrations.isLocked('octo-org', 'alpha')).toBe(false);

    // The workflow's abort was tried while the store refused, and again once it answered.
    const history = await events();
    const scheduled = history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'abortArchiveUpload');
    expect(scheduled.length).toBeGreaterThanOrEqual(1);
    expect(history.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toBe(true);
  });
});
