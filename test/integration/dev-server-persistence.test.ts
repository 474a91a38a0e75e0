/**
 * The embedded default keeps workflows in SQLite under the data directory: a workflow started before a
 * server restart is still there, and finishes, after it. The last resort (no CLI, no Go: the SDK's own dev
 * server, run by the worker's runtime since `@temporalio/testing` is only a development dependency) starts
 * with longhaul's search attributes and stops.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDevServer, freePort, portIsOpen, startWithSdkDownload, type RunningDevServer } from '../../src/temporal/dev-server';
import { findTemporalCli } from '../../src/temporal/cli-binary';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { startStack, type TestStack } from '../helpers/stack';
import { quietRuntime, testClient } from '../helpers/temporal';

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

  it("the SDK's dev server through the worker's runtime: longhaul's search attributes, and stopped by stop()", async () => {
    // The binary at hand instead of the download (tests reach loopback only); the rest is the fallback's own path.
    const executable = await findTemporalCli(() => undefined);
    const port = await freePort();
    // The runtime this path asks for is the test process's: installed quietly here, not by this call with the SDK's
    // defaults, which a later file sharing this fork would keep (it logs at INFO, and `runtimeLog` would stay empty).
    quietRuntime();
    const sdk = await startWithSdkDownload({ ip: '127.0.0.1', port, namespace: 'default', executable }, () => undefined);
    try {
      expect(sdk.address).toBe(`127.0.0.1:${port}`);
      const client = await testClient({ address: sdk.address, namespace: 'default' });
      const { customAttributes } = await client.connection.operatorService.listSearchAttributes({ namespace: 'default' });
      await client.connection.close();
      expect(Object.keys(customAttributes ?? {})).toEqual(expect.arrayContaining(ALL_SEARCH_ATTRIBUTES.map((a) => a.name)));
    } finally {
      await sdk.stop();
    }
    expect(await portIsOpen('127.0.0.1', port)).toBe(false);
  });
});
