/**
 * Issue 38, "Must show": an organization of over 1,000 repositories backed up by two worker PROCESSES with separate
 * data directories, one SIGKILLed mid-run, into each of versitygw (S3), fake-gcs-server (GCS) and Azurite (Azure) at
 * once, one repository making every export that contains it fail. Archives are tiny and exports short: what is
 * under test is coverage, halving, the manifest and the fleet.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { s3Client } from '../../src/archive/object-store/stores/s3';
import { objectsFor } from '../../src/archive/object-store/objects';
import { parseDestination } from '../../src/archive/object-store/destination';
import { backupStatusQuery } from '../../src/processes/org-backup/workflow';
import type { BackupResult, Manifest } from '../../src/processes/org-backup/model';
import { useFleetTeardown } from '../helpers/fleet';
import { BACKUP_BUCKET, BACKUP_ORG, BACKUP_STORES, backupFleet, backupInput, backupStores, startBackup } from '../helpers/backup';
import { waitFor } from '../helpers/wait';
import type { Host } from '../helpers/multi-host';

const fleet = useFleetTeardown();

const REPOSITORIES = 1_050;
const BAD = 'repo-00042';

async function manifestOf(env: Record<string, string>, url: string): Promise<Manifest> {
  const d = parseDestination(url, 'manifest');
  const body = await objectsFor(d, env).get(d.prefix.replace(/\/$/, ''));
  expect(body, `${url} is stored`).toBeDefined();
  return JSON.parse(body!.toString('utf8')) as Manifest;
}

async function sha256Of(env: Record<string, string>, url: string): Promise<{ sha256: string; bytes: number }> {
  const d = parseDestination(url, 'archive');
  const body = await objectsFor(d, env).read(d.prefix.replace(/\/$/, ''));
  expect(body, `${url} is stored`).toBeDefined();
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of body!) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/**
 * Waits for `work`, printing every minute meanwhile each run's phase and counts, what each of its running exports
 * waits on (pending activities with their attempt, state, last worker and last failure; a pending workflow task),
 * and the last lines of the surviving host's output: inside the whole suite beside a CPU load (`test:busy`), this
 * file ran past its 600 s hang guard three times, every run frozen at 4 exports stored and 4 running.
 */
async function withProgress<T>(handles: WorkflowHandle[], survivor: Host, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const describeRun = async (h: WorkflowHandle): Promise<string> => {
    const s = await h.query(backupStatusQuery);
    const children = (await h.describe()).raw.pendingChildren ?? [];
    const waits = await Promise.all(children.map((c) => childWaits(h, c.workflowId ?? '')));
    return `${s.phase}: ${s.exportsStarted} exports started, ${s.exportsStored} stored, ${s.runningExports} running, ${s.halvings} halvings${waits.map((w) => `\n    ${w}`).join('')}`;
  };
  const report = setInterval(() => {
    void Promise.all(handles.map((h) => describeRun(h).catch((err: Error) => err.message))).then((all) =>
      console.info(
        `org backup after ${Math.round((Date.now() - started) / 1000)} s since the kill:\n  ${all.join('\n  ')}\n` +
          `  ${survivor.name} ${survivor.alive() ? 'alive' : 'DEAD'}; its last output:\n${survivor.worker.output().slice(-1_500)}`,
      ),
    );
  }, 60_000);
  try {
    return await work();
  } finally {
    clearInterval(report);
  }
}

/** One running export (a child workflow): what it waits on. */
async function childWaits(parent: WorkflowHandle, workflowId: string): Promise<string> {
  const { raw } = await parent.client.getHandle(workflowId).describe();
  const activities = (raw.pendingActivities ?? []).map(
    (a) => `${a.activityType?.name} attempt ${a.attempt} state ${a.state} worker ${a.lastWorkerIdentity || '-'}${a.lastFailure?.message ? ` last failure: ${a.lastFailure.message}` : ''}`,
  );
  const task = raw.pendingWorkflowTask ? `workflow task ${raw.pendingWorkflowTask.state} attempt ${raw.pendingWorkflowTask.attempt}` : '';
  return `${workflowId}: ${[...activities, task].filter(Boolean).join('; ') || 'nothing pending'}`;
}

/** History event ids: every child's end, and the manifest activity's schedule. */
async function manifestAfterEveryExport(handle: WorkflowHandle): Promise<{ lastChildEnd: number; manifestScheduled: number }> {
  const { events } = await handle.fetchHistory();
  let lastChildEnd = 0;
  let manifestScheduled = 0;
  for (const e of events ?? []) {
    const id = Number(e.eventId);
    if (e.childWorkflowExecutionCompletedEventAttributes || e.childWorkflowExecutionFailedEventAttributes) lastChildEnd = Math.max(lastChildEnd, id);
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'writeBackupManifest') manifestScheduled = id;
  }
  return { lastChildEnd, manifestScheduled };
}


describe('backups of a whole organization', () => {
  it('backs up every repository of 1,050 but the bad one into S3, GCS and Azure, with a host SIGKILLed mid-run', async () => {
    const env = await backupStores(fleet);
    const e = await fleet.emulator({ organizations: { [BACKUP_ORG]: { repositories: REPOSITORIES } }, migrations: { exportMs: 400, archiveBytes: 2_048, failRepositories: [BAD] } });
    const { hosts, taskQueue } = await backupFleet(fleet, e, env);
    const prefix = `nightly-${randomUUID().slice(0, 6)}`;
    const handles = await Promise.all(BACKUP_STORES.map((kind) => startBackup(fleet, taskQueue, backupInput(kind, prefix))));

    // Mid-run: every run has stored exports and has more to make.
    await waitFor(
      'every run to be mid-way through its exports',
      () => Promise.all(handles.map((h) => h.query(backupStatusQuery))),
      (all) => all.every((s) => s.exportsStored >= 2 && s.phase === 'exporting'),
      240_000,
      100,
    );
    await hosts[0].kill();
    const results: BackupResult[] = await withProgress(handles, hosts[1], () => Promise.all(handles.map((h) => h.result())));

    const migrations = e.migrations.all().filter((m) => m.org === BACKUP_ORG);
    let budget = 0;
    for (const [i, kind] of BACKUP_STORES.entries()) {
      const r = results[i];
      expect(r.listed).toBe(REPOSITORIES);
      expect(r.failed.map((f) => [f.name, f.kind])).toEqual([[BAD, 'export-failed']]);
      expect(r.backedUp).toBe(REPOSITORIES - 1);
      expect(r.manifest).toMatch(new RegExp(`^${kind}://${BACKUP_BUCKET}/${prefix}/${BACKUP_ORG}/\\d{8}T\\d{6}Z/manifest\\.json$`));
      const m = await manifestOf(env, r.manifest);
      expect(m.org).toBe(BACKUP_ORG);
      expect(m.failed.map((f) => f.name)).toEqual([BAD]);
      // Every other repository in exactly one stored archive.
      const names = m.repositories.map((x) => x.name);
      expect(names).toHaveLength(REPOSITORIES - 1);
      expect(new Set(names).size).toBe(REPOSITORIES - 1);
      expect(names).not.toContain(BAD);
      // Each archive byte-identical to its export (the emulator's bytes), read back from the store.
      for (const x of m.exports) {
        const expected = createHash('sha256').update(e.migrations.archiveBytes(x.exportId)!).digest('hex');
        expect(x.sha256).toBe(expected);
        expect(await sha256Of(env, x.archive)).toEqual({ sha256: expected, bytes: x.bytes });
      }
      // The plan: ceil(1,050 / 100) = 11 exports; the bad repository's export halved down to it.
      const status = await handles[i].query(backupStatusQuery);
      expect(status.plannedExports).toBe(11);
      expect(status.halvings).toBeGreaterThanOrEqual(7);
      budget += status.plannedExports + 2 * status.halvings;
      const order = await manifestAfterEveryExport(handles[i]);
      expect(order.manifestScheduled).toBeGreaterThan(order.lastChildEnd);
    }
    // Exports created: at most the plans plus the halvings (the send-once start), none locking anything.
    expect(migrations.length).toBeLessThanOrEqual(budget);
    expect(migrations.every((m) => m.flags.lock_repositories !== true && m.locked.size === 0)).toBe(true);
    // GitHub's copies deleted once stored.
    expect(migrations.filter((m) => e.migrations.stateOf(m.id) === 'exported').every((m) => m.archiveDeleted)).toBe(true);
    // No upload left open (S3's own listing of multipart uploads).
    expect((await s3Client(env).send(new ListMultipartUploadsCommand({ Bucket: BACKUP_BUCKET }))).Uploads ?? []).toEqual([]);
    expect(hosts[0].alive()).toBe(false);
    console.info(`org backup: ${REPOSITORIES} repositories × 3 stores; ${migrations.length} exports created (budget ${budget}); host-a SIGKILLed mid-run`);
  });
});
