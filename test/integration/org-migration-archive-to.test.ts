/**
 * Org migrations into an object store (issue 26): `archiveTo` (and the worker's `LONGHAUL_ARCHIVE_TO`) stream the
 * archive from the emulator's storage into versitygw, the real S3 server, through the real worker and the AWS SDK
 * configured from the standard AWS_* variables; the object is read back and its SHA-256 checked. A bad destination
 * ends the workflow with its own failure type before the API is called: a malformed URL in the workflow itself, a
 * missing bucket or a refusal (403) after one check of the store, before the export is started (no migration POST);
 * a store that is down during that check is waited out.
 */
import { createHash } from 'node:crypto';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { defineQuery } from '@temporalio/workflow';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { ObjectStoreFailure } from '../../src/archive/object-store';
import { s3Client } from '../../src/archive/object-store/stores/s3';
import { startAzurite, startVersitygw, type StoreServer } from '../servers/object-stores';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { archiveDownloader } from '../../src/processes/org-migration/activities/archive';
import type { UploadProgress } from '../../src/archive/to-store';
import { TEST_TOKEN } from '../helpers/emulator';
import { useStack } from '../helpers/stack';
import { createBucket, openUploads, readBack } from '../helpers/object-stores';
import { FAST_POLL } from '../helpers/presets';
import { expectFailure } from '../helpers/failures';
import { runLonghaul } from '../helpers/starter';
import { eventually, waitFor } from '../helpers/wait';
import { decodeHeartbeat } from '../../src/cli/kit/run-workflow';
import { newMigrationStatus, type MigrationArchive, type OrgMigrationInput } from '../../src/processes/org-migration/model';

/** The SDK's built-in query the Temporal UI reads a workflow's current details from. */
const workflowMetadataQuery = defineQuery<{ currentDetails?: string }>('__temporal_workflow_metadata');

/** What the Temporal UI shows as a workflow's current details. */
async function currentDetails(handle: WorkflowHandle): Promise<string | undefined> {
  return (await handle.query(workflowMetadataQuery)).currentDetails;
}

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

  /** Workflows whose archive `longhaul list` must name, with where it went. */
  const listed = new Map<string, string>();

  it('shows the destination and the bytes stored: the UI\'s current details, the download\'s summary, its heartbeat; then where the archive went', async () => {
    // 6 MB at 1.5 MB/s: about 4 s of upload to look at.
    stack.emulator.storage.bytesPerSecond = 1_500_000;
    try {
      const workflowId = `archive-to-ui-${Date.now()}`;
      const handle = await stack.client.workflow.start(orgMigration, {
        taskQueue: stack.taskQueue,
        workflowId,
        args: [{ org: 'octo-org', repositories: ['alpha'], poll: FAST_POLL, archiveTo: `s3://${BUCKET}/ui` }],
      });
      // While the bytes flow, the workflow knows the object (from its input), not the bytes: the details name it.
      const downloading = await waitFor('the current details of the download', () => currentDetails(handle).catch(() => undefined), (d) => d?.startsWith('downloading') ?? false, 60_000);
      const migrationId = Number(/migration (\d+)/.exec(downloading!)![1]);
      const object = `s3://${BUCKET}/ui/octo-org-migration-${migrationId}.tar.gz`;
      expect(downloading).toBe(`downloading · migration ${migrationId} · state exported · into ${object}`);
      // The bytes are the pending activity's heartbeat (the UI shows it; `status` and `wait --follow` read it).
      const beat = await waitFor(
        'an upload heartbeat',
        async () => {
          const pending = (await handle.describe()).raw.pendingActivities?.[0];
          return pending ? ((await decodeHeartbeat(handle, pending.heartbeatDetails?.payloads?.[0])) as { offset?: number; total?: number; url?: string } | undefined) : undefined;
        },
        (b) => b?.url !== undefined,
        60_000,
      );
      // The SDK sends the first heartbeat at once, later ones at most once every 24 s (80 % of the 30 s heartbeat timeout).
      expect(beat).toMatchObject({ offset: expect.any(Number), total: ARCHIVE_BYTES, url: object });
      // The activity's summary in the UI's timeline names the object too.
      const scheduled = (await handle.fetchHistory()).events!.map((e) => e.activityTaskScheduledEventAttributes && e.userMetadata?.summary).filter(Boolean);
      expect(scheduled.map((summary) => defaultPayloadConverter.fromPayload(summary!))).toContain(`Download archive of export ${migrationId} of octo-org into ${object}`);

      const result = await handle.result();
      expect(result.archive.url).toBe(object);
      expect(await currentDetails(handle)).toBe(`done · migration ${migrationId} · state exported · archive ${Math.round(ARCHIVE_BYTES / 1024)} KiB stored in ${object}`);
      expect((await handle.describe()).memo).toEqual({ archive: result.archive });
      listed.set(workflowId, object);
    } finally {
      stack.emulator.storage.bytesPerSecond = 0;
    }
  });

  it('records where the archive went when the worker chose it (LONGHAUL_ARCHIVE_TO) or kept it on its disk', async () => {
    const run = async (label: string, archiveTo: string) => {
      vi.stubEnv('LONGHAUL_ARCHIVE_TO', archiveTo);
      try {
        const workflowId = `archive-to-${label}-${Date.now()}`;
        const result = await stack.client.workflow.execute(orgMigration, { taskQueue: stack.taskQueue, workflowId, args: [{ org: 'octo-org', repositories: ['beta'], poll: FAST_POLL }] });
        const handle = stack.client.workflow.getHandle(workflowId);
        expect((await handle.describe()).memo).toEqual({ archive: result.archive });
        expect(await currentDetails(handle)).toContain(`· archive ${Math.round(ARCHIVE_BYTES / 1024)} KiB ${result.archive.url ? `stored in ${result.archive.url}` : `at ${result.archive.path}`}`);
        listed.set(workflowId, result.archive.url ?? result.archive.path);
        return result;
      } finally {
        vi.stubEnv('LONGHAUL_ARCHIVE_TO', '');
      }
    };
    expect((await run('worker-default', `s3://${BUCKET}/by-worker/`)).archive.url).toMatch(new RegExp(`^s3://${BUCKET}/by-worker/octo-org-migration-\\d+\\.tar\\.gz$`));
    const local = await run('local-disk', '');
    expect(local.archive.url).toBeUndefined();
    expect(local.archive.path).toMatch(/^\/.*\/archives\/octo-org-migration-\d+\.tar\.gz$/);
  });

  it('records the archive again in a run continued after the download (its memo starts empty)', async () => {
    const archive: MigrationArchive = { path: `s3://${BUCKET}/resumed/x.tar.gz`, url: `s3://${BUCKET}/resumed/x.tar.gz`, bytes: 3, sha256: 'ab', version: '"e"' };
    const base: OrgMigrationInput = { org: 'octo-org', repositories: ['gamma'] };
    const workflowId = `archive-to-resumed-${Date.now()}`;
    const input: OrgMigrationInput = { ...base, resume: { migrationId: 4242, locked: [], status: { ...newMigrationStatus(base), migrationId: 4242 }, ending: { kind: 'exported', archive } } };
    const result = await stack.client.workflow.execute(orgMigration, { taskQueue: stack.taskQueue, workflowId, args: [input] });
    expect(result.archive).toEqual(archive);
    expect((await stack.client.workflow.getHandle(workflowId).describe()).memo).toEqual({ archive });
    listed.set(workflowId, archive.url!);
  });

  it('`longhaul list` shows where each archive went', async () => {
    expect(listed.size).toBe(4);
    const args = ['list', '--process', 'org-migration', '--org', 'octo-org', '--closed', '--limit', '1000'];
    // Visibility is eventually consistent: wait until every closed run is listed with its memo.
    const rows = await eventually(async () => {
      const { code, stdout } = await runLonghaul([...args, '--json'], stack.taskQueue);
      if (code !== 0) return undefined;
      const workflows = (JSON.parse(stdout) as { workflows: { workflowId: string; archive?: { where: string; sha256?: string } }[] }).workflows.filter((w) => listed.has(w.workflowId));
      return workflows.length === listed.size && workflows.every((w) => w.archive) ? workflows : undefined;
    }, 'every migration listed with its archive', 60_000, 1_000);
    for (const row of rows) expect(row.archive!.where).toBe(listed.get(row.workflowId));
    const { stdout, stderr } = await runLonghaul(args, stack.taskQueue);
    expect(stderr).toBe('');
    for (const [workflowId, where] of listed) expect(stdout).toMatch(new RegExp(`^${workflowId}  COMPLETED  org-migration  .*  → ${where.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  });

  const startPosts = () => stack.emulator.stats.byRoute['POST /orgs/:org/migrations'] ?? 0;
  const migrate = (workflowId: string, archiveTo?: string) =>
    stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL, ...(archiveTo !== undefined ? { archiveTo } : {}) }],
    });

  it.each([
    ['a bucket that does not exist', { archiveTo: `s3://no-such-bucket/exports/` }, ObjectStoreFailure.BucketNotFound],
    ["the worker's default naming a bucket that does not exist", { env: { LONGHAUL_ARCHIVE_TO: 's3://no-such-bucket/fleet/' } }, ObjectStoreFailure.BucketNotFound],
    ['a store that refuses the credentials (403)', { archiveTo: `s3://${BUCKET}/exports/`, env: { AWS_SECRET_ACCESS_KEY: 'not-the-secret' } }, ObjectStoreFailure.AccessDenied],
  ] as const)('refuses %s with its type before the export is started, leaving nothing behind', async (_what, c, type) => {
    const env: Record<string, string> = 'env' in c ? c.env : {};
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    try {
      const postsBefore = startPosts();
      const migrationsBefore = stack.emulator.migrations.all().length;
      const handle = await migrate(`archive-to-refused-${Date.now()}`, 'archiveTo' in c ? c.archiveTo : undefined);
      const failure = await expectFailure(handle.result(), type);
      expect(failure.nonRetryable).toBe(true);
      expect(failure.message).toMatch(/no export was started/);
      expect(failure.message).not.toContain('not-the-secret');
      // Nothing was sent to the API: no export, so nothing locked and nothing to clean up.
      expect(startPosts()).toBe(postsBefore);
      expect(stack.emulator.migrations.all()).toHaveLength(migrationsBefore);
      expect(stack.emulator.migrations.isLocked('octo-org', 'alpha')).toBe(false);
      expect((await s3Client(server.env).send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads ?? []).toEqual([]);
      // One check, failed for good: not retried.
      const history = await handle.fetchHistory();
      expect(history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkArchiveDestination')).toHaveLength(1);
      expect(history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt)).toEqual([1]);
    } finally {
      for (const name of Object.keys(env)) vi.stubEnv(name, name === 'AWS_SECRET_ACCESS_KEY' ? server.env.AWS_SECRET_ACCESS_KEY : '');
    }
  });

  it('waits out a store that is down when the destination is checked, then migrates once', async () => {
    await server.stop();
    let restarted = false;
    try {
      const postsBefore = startPosts();
      const handle = await migrate(`archive-to-store-down-${Date.now()}`, `s3://${BUCKET}/exports/`);
      // The check fails retryable (connection refused) and is tried again; nothing reaches the API meanwhile.
      await waitFor(
        'a second attempt of the destination check',
        async () => (await handle.describe()).raw.pendingActivities ?? [],
        (pending) => pending.some((a) => a.activityType?.name === 'checkArchiveDestination' && (a.attempt ?? 0) >= 2),
        60_000,
      );
      expect(startPosts()).toBe(postsBefore);
      await server.start();
      restarted = true;
      const result = await handle.result();
      expect(startPosts()).toBe(postsBefore + 1);
      const key = `exports/octo-org-migration-${result.migrationId}.tar.gz`;
      expect((await readBack('s3', server.env, BUCKET, key)).sha256).toBe(expectedSha(result.migrationId));
    } finally {
      if (!restarted) await server.start();
    }
  });
});

describe('org migration into Azure Blob Storage refused before the export', () => {
  const stack = useStack({ emulator: { migrations: { exportMs: 500, archiveBytes: 4_096 } } });
  let azurite: StoreServer;
  beforeAll(async () => {
    azurite = await startAzurite();
    await createBucket('azblob', azurite.env, BUCKET);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await azurite?.destroy();
  });

  it.each([
    ['a container that does not exist', 'azblob://no-such-container/exports/', (azurite: StoreServer) => azurite.env.AZURE_STORAGE_CONNECTION_STRING, ObjectStoreFailure.BucketNotFound],
    // Azurite checks the shared-key signature: another key is refused with 403.
    ['a key Azurite refuses (403)', `azblob://${BUCKET}/exports/`, (azurite: StoreServer) => azurite.env.AZURE_STORAGE_CONNECTION_STRING.replace(/AccountKey=[^;]+/, `AccountKey=${Buffer.from('not-the-key').toString('base64')}`), ObjectStoreFailure.AccessDenied],
  ] as const)('refuses %s with its type and no migration POST', async (_what, archiveTo, connectionString, type) => {
    vi.stubEnv('AZURE_STORAGE_CONNECTION_STRING', connectionString(azurite));
    const posts = () => stack.emulator.stats.byRoute['POST /orgs/:org/migrations'] ?? 0;
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `archive-to-azure-refused-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL, archiveTo }],
    });
    const failure = await expectFailure(handle.result(), type);
    expect(failure.nonRetryable).toBe(true);
    expect(posts()).toBe(0);
    expect(stack.emulator.migrations.all()).toHaveLength(0);
  });
});
