/**
 * The embedded default keeps workflows in SQLite under the data directory: a workflow started before a
 * server restart is still there, and finishes, after it.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDevServer, freePort, type RunningDevServer } from '../../src/temporal/dev-server';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { startStack, type TestStack } from '../helpers/stack';
import { testClient } from '../helpers/temporal';

describe('embedded dev server persistence', () => {
  let server: RunningDevServer | undefined;
  let stack: TestStack | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    await stack?.stop();
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('a workflow started before a server restart completes after it, with search attributes registered', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'longhaul-persist-'));
    const port = await freePort();
    server = await startDevServer({ dataDir, port, uiPort: false, log: () => undefined });
    expect((await stat(join(dataDir, 'temporal.sqlite'))).size).toBeGreaterThan(0);

    const client = await testClient({ address: server.address, namespace: 'default' });
    const taskQueue = `persist-${Date.now()}`;
    const workflowId = `persist-${Date.now()}`;
    await client.workflow.start(orgMigration, { taskQueue, workflowId, args: [{ org: 'octo-org', repositories: ['beta'], poll: { initialIntervalMs: 1_000 } }] });
    await client.connection.close();
    await server.stop();

    server = await startDevServer({ dataDir, port, uiPort: false, log: () => undefined });
    // The worker (and the emulator it calls) only now, on the restarted server.
    stack = await startStack({ server: { address: server.address, namespace: 'default' }, taskQueue, emulator: { migrations: { exportMs: 4000, archiveBytes: 10_000 } } });
    const result = await stack.client.workflow.getHandle<typeof orgMigration>(workflowId).result();
    expect(result.state).toBe('exported');
    const description = await stack.client.workflow.getHandle(workflowId).describe();
    expect(description.typedSearchAttributes.get({ name: 'LonghaulOrg', type: 'KEYWORD' })).toBe('octo-org');
  });
});
