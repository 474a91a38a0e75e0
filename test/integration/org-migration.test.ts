import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/workflows/org-migration';
import type { Emulator } from '../../src/emulator/emulator';
import { emulatorDeps, startTestEmulator } from '../helpers/emulator';
import { startTestWorker, type TestWorker } from '../helpers/temporal';

describe('org migration workflow', () => {
  let emulator: Emulator;
  let tw: TestWorker;

  beforeAll(async () => {
    emulator = await startTestEmulator({ migrations: { exportMs: 1500, archiveBytes: 300_000 } });
    tw = await startTestWorker(await emulatorDeps(emulator));
  });
  afterAll(async () => {
    await tw?.stop();
    await emulator?.close();
  });

  it('exports, downloads the archive with a matching SHA-256 and unlocks every locked repository', async () => {
    const result = await tw.client.workflow.execute(orgMigration, {
      taskQueue: tw.taskQueue,
      workflowId: `migration-happy-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha', 'beta', 'gamma'], lockRepositories: true, poll: { initialIntervalMs: 1_000, maxIntervalMs: 1_000 } }],
    });
    expect(result.state).toBe('exported');
    expect(result.unlockedRepositories.sort()).toEqual(['alpha', 'beta', 'gamma']);
    const expected = emulator.migrations.archiveBytes(result.migrationId)!;
    expect(result.archive.bytes).toBe(expected.length);
    expect(result.archive.sha256).toBe(createHash('sha256').update(expected).digest('hex'));
    const onDisk = await readFile(result.archive.path);
    expect(createHash('sha256').update(onDisk).digest('hex')).toBe(result.archive.sha256);
    for (const repo of ['alpha', 'beta', 'gamma']) expect(emulator.migrations.isLocked('octo-org', repo)).toBe(false);
    expect(emulator.stats.storage.rejectedWithAuthorization).toBe(0);
  });
});
