/**
 * What the backup tests share (issue 38): the three store servers with a bucket each and one worker environment
 * that reaches all of them, a fleet of worker processes for backups, and a backup's input and start.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import type { Emulator } from '@longhaul/emulator';
import { startAzurite, startFakeGcs, startVersitygw } from '../servers/object-stores';
import type { StoreKind } from '../../src/archive/object-store/destination';
import { orgBackup } from '../../src/processes/org-backup/workflow';
import type { BackupInput } from '../../src/processes/org-backup/model';
import type { FleetTest } from './fleet';
import { createBucket } from './object-stores';
import { githubHostEnv, startHosts, type Host } from './multi-host';
import { FAST_POLL } from './presets';

export const BACKUP_ORG = 'big-org';
export const BACKUP_BUCKET = 'org-backups';
export const BACKUP_STORES: StoreKind[] = ['s3', 'gs', 'azblob'];

/** versitygw, fake-gcs-server and Azurite, a bucket in each, and one worker environment that reaches all three. */
export async function backupStores(fleet: FleetTest): Promise<Record<string, string>> {
  const servers = await Promise.all([startVersitygw(), startFakeGcs(), startAzurite()]);
  for (const s of servers) fleet.closeLater(() => s.destroy());
  const env = Object.assign({}, ...servers.map((s) => s.env)) as Record<string, string>;
  await Promise.all(BACKUP_STORES.map((kind) => createBucket(kind, env, BACKUP_BUCKET)));
  return env;
}

/**
 * versitygw with the backup bucket, started once for the file (`beforeAll`) and destroyed after it (`afterAll`), for a
 * file whose backups all go to S3, each test under a prefix of its own: one server start instead of three per test.
 * The returned function gives the worker environment that reaches it (once `beforeAll` has run).
 */
export function useS3BackupStore(): () => Record<string, string> {
  let server: Awaited<ReturnType<typeof startVersitygw>> | undefined;
  beforeAll(async () => {
    server = await startVersitygw();
    await createBucket('s3', server.env, BACKUP_BUCKET);
  });
  afterAll(async () => {
    await server?.destroy();
  });
  return () => {
    if (!server) throw new Error('the S3 store starts in beforeAll');
    return server.env;
  };
}

/**
 * `count` worker processes (separate data directories) for backups. Mutations (export starts) spaced by 20 ms
 * instead of a second: many short exports.
 */
export async function backupFleet(fleet: FleetTest, e: Emulator, env: Record<string, string>, count = 2, taskQueue = `org-backup-${randomUUID()}`): Promise<{ hosts: Host[]; taskQueue: string }> {
  const hosts = await startHosts(fleet, count, { taskQueue, env: { ...githubHostEnv(e.apiUrl, 'backup'), ...env, LONGHAUL_MUTATION_SPACING_MS: '20' } });
  return { hosts, taskQueue };
}

export function backupInput(kind: StoreKind, prefix: string, extra: Partial<BackupInput> = {}): BackupInput {
  return { org: BACKUP_ORG, archiveTo: `${kind}://${BACKUP_BUCKET}/${prefix}`, reposPerExport: 100, concurrentExports: 4, exportPoll: FAST_POLL, apiCallTimeoutMs: 10_000, ...extra };
}

export async function startBackup(fleet: FleetTest, taskQueue: string, input: BackupInput): Promise<WorkflowHandle<typeof orgBackup>> {
  const client = await fleet.client();
  return fleet.track(await client.workflow.start(orgBackup, { taskQueue, workflowId: `backup-test-${randomUUID()}`, args: [input] }));
}
