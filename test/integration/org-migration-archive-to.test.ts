/**
 * Org migrations into an object store (issue 26): `archiveTo` (and the worker's `LONGHAUL_ARCHIVE_TO`) stream the
 * archive from the emulator's storage into versitygw, the real S3 server, through the real worker and the AWS SDK
 * configured from the standard AWS_* variables; the object is read back and its SHA-256 checked. A bad destination
 * ends the workflow with its own failure type before the API is called.
 */
import { createHash } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ObjectStoreFailure } from '../../src/object-store';
import { startVersitygw, type StoreServer } from '../../src/object-store/servers/run';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { archiveDownloader } from '../../src/processes/org-migration/activities/archive-download';
import type { UploadProgress } from '../../src/processes/org-migration/activities/archive-upload';
import { TEST_TOKEN } from '../helpers/emulator';
import { useStack } from '../helpers/stack';
import { eventually } from '../helpers/wait';
import { createBucket, openUploads, readBack } from '../helpers/object-stores';
import { FAST_POLL } from '../helpers/presets';

const BUCKET = 'archives';
/** 6 MB: two parts of the smallest size S3 allows (5 MiB), so the multipart path runs. */
const ARCHIVE_BYTES = 6_000_000;

describe('org migration into an object store', () => {
  const stack = useStack({ emulator: { migrations: { exportMs: 500, archiveBytes: ARCHIVE_BYTES } } });
  let server: StoreServer;
  beforeAll(async () => {
    server = await startVersitygw();
    await createBucket('s3', server.env, BUCKET);
    // The worker runs in this process: its SDK reads the standard variables, as a deployed worker's would.
    for (const [name, value] of Object.entries(server.env)) vi.stubEnv(name, value);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await server?.destroy();
  });

  const expectedSha = (migrationId: number) => createHash('sha256').update(stack.emulator.migrations.archiveBytes(migrationId)!).digest('hex');

  it('streams each archive into the bucket: complete, byte-identical, no multipart upload left open', async () => {
    const results = await Promise.all(
      ['alpha', 'beta'].map((repo) =>
        stack.client.workflow.execute(orgMigration, {
          taskQueue: stack.taskQueue,
          workflowId: `archive-to-${repo}-${Date.now()}`,
          args: [{ org: 'octo-org', repositories: [repo], poll: FAST_POLL, archiveTo: `s3://${BUCKET}/exports/` }],
        }),
      ),
    );
    for (const result of results) {
      const key = `exports/octo-org-migration-${result.migrationId}.tar.gz`;
      expect(result.archive.url).toBe(`s3://${BUCKET}/${key}`);
      expect(result.archive.path).toBe(result.archive.url);
      expect(result.archive.bytes).toBe(ARCHIVE_BYTES);
      expect(result.archive.sha256).toBe(expectedSha(result.migrationId));
      expect(result.archive.version).toMatch(/\S/);
      const back = await readBack('s3', server.env, BUCKET, key);
      expect(back).toEqual({ bytes: ARCHIVE_BYTES, sha256: result.archive.sha256, metadataSha256: result.archive.sha256 });
      expect(await openUploads('s3', server.env, BUCKET, key)).toBe(0);
    }
    expect(stack.emulator.stats.storage.rejectedWithAuthorization).toBe(0);
  });

  it('uses the worker\'s LONGHAUL_ARCHIVE_TO when the input names no destination', async () => {
    vi.stubEnv('LONGHAUL_ARCHIVE_TO', `s3://${BUCKET}/fleet-default`);
    try {
      const workflowId = `archive-to-default-${Date.now()}`;
      const result = await stack.client.workflow.execute(orgMigration, {
        taskQueue: stack.taskQueue,
        workflowId,
        args: [{ org: 'octo-org', repositories: ['gamma'], poll: FAST_POLL }],
      });
      const key = `fleet-default/octo-org-migration-${result.migrationId}.tar.gz`;
      expect(result.archive.url).toBe(`s3://${BUCKET}/${key}`);
      expect((await readBack('s3', server.env, BUCKET, key)).sha256).toBe(expectedSha(result.migrationId));
      // The worker's setting stays on the worker: no workflow or activity input in the history names it.
      const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
      const inputs = history.events!.flatMap((e) => [...(e.workflowExecutionStartedEventAttributes?.input?.payloads ?? []), ...(e.activityTaskScheduledEventAttributes?.input?.payloads ?? [])]);
      expect(inputs.length).toBeGreaterThan(1);
      for (const payload of inputs) expect(Buffer.from(payload.data!).toString()).not.toContain('fleet-default');
    } finally {
      vi.stubEnv('LONGHAUL_ARCHIVE_TO', '');
    }
  });

  it('starts a continued attempt over from its one storage answer when the archive changed since the checkpoint (If-Range not matched), and heartbeats the validator', async () => {
    const e = stack.emulator;
    const created = await fetch(`${e.apiUrl}/orgs/octo-org/migrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ repositories: ['alpha'] }),
    });
    const { id } = (await created.json()) as { id: number };
    await eventually(async () => {
      const res = await fetch(`${e.apiUrl}/orgs/octo-org/migrations/${id}`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
      return ((await res.json()) as { state: string }).state === 'exported' || undefined;
    }, 'the export');
    const name = `octo-org-migration-${id}.tar.gz`;
    // An earlier attempt's heartbeat: 5 MiB stored of an upload the store no longer has, read from an archive whose
    // validator storage no longer answers to.
    const previous: UploadProgress = {
      offset: 5 * 1024 * 1024,
      total: ARCHIVE_BYTES,
      validator: '"an-earlier-archive"',
      upload: { url: `s3://${BUCKET}/changed/${name}`, size: ARCHIVE_BYTES, partBytes: 5 * 1024 * 1024, upload: 'gone', offset: 5 * 1024 * 1024, hashState: '', sentBytes: 5 * 1024 * 1024 },
    };
    const servedBefore = e.stats.storage.bytesServed;
    const requestsBefore = e.stats.storage.requests;
    const rangesBefore = e.stats.storage.rangeRequests;
    const beats: UploadProgress[] = [];
    const download = archiveDownloader(stack.deps);
    const result = await download({ org: 'octo-org', migrationId: id, path: name, archiveTo: `s3://${BUCKET}/changed/` }, { heartbeat: (p) => beats.push(p), previous });
    // One request, from the checkpoint with If-Range: answered 200 with the whole archive (no ranged answer), which
    // was uploaded from it.
    expect(e.stats.storage.requests - requestsBefore).toBe(1);
    expect(e.stats.storage.rangeRequests - rangesBefore).toBe(0);
    expect(e.stats.storage.bytesServed - servedBefore).toBe(ARCHIVE_BYTES);
    expect(result).toMatchObject({ url: `s3://${BUCKET}/changed/${name}`, bytes: ARCHIVE_BYTES, sha256: expectedSha(id), resumedFrom: 0, fetchedBytes: ARCHIVE_BYTES });
    expect(await readBack('s3', server.env, BUCKET, `changed/${name}`)).toEqual({ bytes: ARCHIVE_BYTES, sha256: expectedSha(id), metadataSha256: expectedSha(id) });
    // Its own heartbeats name the validator its bytes came from, for the next attempt's If-Range.
    expect(beats.at(-1)?.validator).toMatch(/^"/);
    expect(beats.at(-1)?.validator).not.toBe(previous.validator);
  });

  it.each([
    ['ftp://archives/exports/', ObjectStoreFailure.DestinationInvalid],
    ['s3://AKIAEXAMPLE:wJalrXUtnFEMI@archives/exports/', ObjectStoreFailure.DestinationCredential],
    ['s3://archives/exports/?X-Amz-Signature=abc', ObjectStoreFailure.DestinationCredential],
  ])('refuses %s with its type before any API call', async (archiveTo, type) => {
    const before = stack.emulator.stats.requests;
    const err = await stack.client.workflow
      .execute(orgMigration, { taskQueue: stack.taskQueue, workflowId: `archive-to-bad-${Date.now()}`, args: [{ org: 'octo-org', repositories: ['alpha'], archiveTo }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(type);
    expect((cause as ApplicationFailure).message).not.toContain('wJalrXUtnFEMI');
    expect(stack.emulator.stats.requests).toBe(before);
  });
});
