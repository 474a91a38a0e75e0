/**
 * The emulator killed mid-migration (issue 12, item 4). The emulator runs as its own process, started as a
 * user starts it (`npm run emulator`: tsx on packages/emulator/src/cli.ts) with a data directory; a longhaul worker
 * runs an org migration against it. While the export runs, the emulator gets SIGKILL (no shutdown, nothing
 * flushed on the way out); the workflow sees its polls fail; the emulator is started again on the same ports
 * and data directory, and the same migration finishes: the archive downloaded with the SHA-256 of what that
 * migration exported, deleted after, and both repositories unlocked (a new locking migration of them is
 * accepted).
 */
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationStatusQuery, orgMigration } from '../../src/processes/org-migration/workflow';
import { createGithubClient } from '../../src/http/github';
import { createGoogleClients } from '../../src/http/google';
import { freePort } from '../../src/temporal/dev-server';
import { contentBytes, generatedArchive } from '../../packages/emulator/src/storage/archive-content';
import { call } from '../helpers/emulator-http';
import { TEST_TOKEN } from '../helpers/emulator';
import { startTestWorker, testClient, type TestWorker } from '../helpers/temporal';
import { waitFor } from '../helpers/wait';
import { FAST_POLL } from '../helpers/presets';
import { startEmulatorProcess, stopEmulatorProcess, type EmulatorProcess } from '../helpers/emulator-process';

const ARCHIVE_BYTES = 256 * 1024;
/** Long enough that the kill lands in the export, whatever the machine's load. */
const EXPORT_MS = 8_000;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const running: EmulatorProcess[] = [];

describe('emulator killed with SIGKILL mid-migration and started again on its data directory', () => {
  let worker: TestWorker | undefined;
  afterAll(async () => {
    await worker?.stop();
    for (const proc of running) await stopEmulatorProcess(proc, 'SIGKILL');
  });

  it('lets the migration finish: same migration, archive SHA-256 of its export, repositories unlocked', { timeout: 5 * 60_000 }, async () => {
    const [port, storagePort] = [await freePort(), await freePort()];
    const stateDir = await mkdtemp(join(tmpdir(), 'longhaul-emulator-restart-'));
    const args = ['--port', String(port), '--storage-port', String(storagePort), '--token', TEST_TOKEN, '--data-dir', stateDir, '--export-ms', String(EXPORT_MS), '--archive-bytes', String(ARCHIVE_BYTES)];
    const api = `http://127.0.0.1:${port}`;
    const first = await startEmulatorProcess(args, {}, running);
    await waitFor('the banner to name the data directory', first.output, (o) => o.includes(`kept in ${stateDir}`), 30_000);

    worker = await startTestWorker({
      github: createGithubClient({ baseUrl: api, token: () => TEST_TOKEN }),
      // Not called by a migration.
      google: createGoogleClients({ apikeys: api, logging: api, dns: api }, { token: () => TEST_TOKEN }),
      dataDir: await mkdtemp(join(tmpdir(), 'longhaul-worker-')),
      clock: Date.now,
    });
    const client = await testClient();
    try {
      const handle = await client.workflow.start(orgMigration, {
        taskQueue: worker.taskQueue,
        workflowId: `migration-emulator-restart-${Date.now()}`,
        args: [
          {
            org: 'octo-org',
            repositories: ['alpha', 'beta'],
            lockRepositories: true,
            deleteArchiveAfterDownload: true,
            poll: FAST_POLL,
            outage: { initialBackoffMs: 1_000, maxBackoffMs: 2_000 },
          },
        ],
      });
      const status = () => handle.query(migrationStatusQuery).catch(() => undefined);
      const exporting = await waitFor('the export to be under way', status, (s) => s?.migrationId !== undefined && (s.state === 'pending' || s.state === 'exporting'), 120_000);
      const listed = await call(api, 'GET', '/orgs/octo-org/migrations');
      const [migration] = listed.json as { id: number; guid: string; state: string }[];
      expect(migration.id).toBe(exporting!.migrationId);
      expect(migration.state).not.toBe('exported');

      await stopEmulatorProcess(first, 'SIGKILL');
      // The worker notices: its polls fail while nothing listens.
      await waitFor('a poll to fail while the emulator is down', status, (s) => (s?.failedPolls ?? 0) > 0, 120_000);

      const second = await startEmulatorProcess(args, {}, running);
      const result = await handle.result();
      expect(result.migrationId).toBe(migration.id);
      expect(result.archive.bytes).toBe(ARCHIVE_BYTES);
      expect(result.archive.sha256).toBe(sha256(contentBytes(generatedArchive(migration.guid, ARCHIVE_BYTES))));
      expect(result.unlockedRepositories).toEqual(['alpha', 'beta']);

      // The restarted emulator knows that one migration, exported, its archive deleted, nothing locked.
      const after = (await call(api, 'GET', '/orgs/octo-org/migrations')).json as { id: number; guid: string; state: string }[];
      expect(after.map((m) => [m.id, m.guid, m.state])).toEqual([[migration.id, migration.guid, 'exported']]);
      expect((await call(api, 'GET', `/orgs/octo-org/migrations/${migration.id}/archive`)).status).toBe(404);
      expect((await call(api, 'POST', '/orgs/octo-org/migrations', { body: { repositories: ['alpha', 'beta'], lock_repositories: true } })).status).toBe(201);
      const final = await handle.query(migrationStatusQuery);
      console.log(`emulator restart: migration ${migration.id} finished after the kill; ${final.polls} polls answered, ${final.failedPolls} failed while the emulator was down`);
      await stopEmulatorProcess(second, 'SIGINT');
    } finally {
      await client.connection.close();
    }
  });
});
