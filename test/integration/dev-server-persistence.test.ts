/**
 * The embedded default keeps workflows in SQLite under the data directory: a workflow started before a
 * server restart is still there, and finishes, after it.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { startDevServer, freePort, type RunningDevServer } from '../../src/temporal/dev-server';
import { orgMigration } from '../../src/workflows/org-migration';
import type { Emulator } from '../../src/emulator/emulator';
import { emulatorDeps, startTestEmulator } from '../helpers/emulator';
import { NativeConnection } from '@temporalio/worker';
import { createLonghaulWorker } from '../../src/worker';
import { inject } from 'vitest';

describe('embedded dev server persistence', () => {
  let server: RunningDevServer | undefined;
  let emulator: Emulator | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    await server?.stop();
    await emulator?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('a workflow started before a server restart completes after it, with search attributes registered', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'longhaul-persist-'));
    const port = await freePort();
    server = await startDevServer({ dataDir, port, uiPort: false, log: () => undefined });
    expect((await stat(join(dataDir, 'temporal.sqlite'))).size).toBeGreaterThan(0);
    emulator = await startTestEmulator({ migrations: { exportMs: 4000, archiveBytes: 10_000 } });

    let connection = await Connection.connect({ address: server.address });
    let client = new Client({ connection, namespace: 'default' });
    const taskQueue = `persist-${Date.now()}`;
    const workflowId = `persist-${Date.now()}`;
    await client.workflow.start(orgMigration, { taskQueue, workflowId, args: [{ org: 'octo-org', repositories: ['beta'], poll: { initialIntervalMs: 1_000 } }] });
    await connection.close();
    await server.stop();

    server = await startDevServer({ dataDir, port, uiPort: false, log: () => undefined });
    connection = await Connection.connect({ address: server.address });
    client = new Client({ connection, namespace: 'default' });
    const workerConnection = await NativeConnection.connect({ address: server.address });
    const worker = await createLonghaulWorker({
      connection: workerConnection,
      namespace: 'default',
      taskQueue,
      deps: await emulatorDeps(emulator),
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    const result = await worker.runUntil(client.workflow.getHandle(workflowId).result());
    await workerConnection.close();
    expect(result.state).toBe('exported');
    const description = await client.workflow.getHandle(workflowId).describe();
    expect(description.typedSearchAttributes.get({ name: 'LonghaulOrg', type: 'KEYWORD' })).toBe('octo-org');
    await connection.close();
  });
});
