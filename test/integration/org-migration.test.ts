import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useStack } from '../helpers/stack';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { FAST_POLL } from '../helpers/presets';

describe('org migration workflow', () => {
  const stack = useStack({ emulator: { migrations: { exportMs: 1500, archiveBytes: 300_000 } } });

  it('exports, downloads the archive with a matching SHA-256 and unlocks every locked repository', async () => {
    const result = await stack.client.workflow.execute(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `migration-happy-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha', 'beta', 'gamma'], lockRepositories: true, poll: FAST_POLL }],
    });
    expect(result.state).toBe('exported');
    expect(result.unlockedRepositories.sort()).toEqual(['alpha', 'beta', 'gamma']);
    const expected = stack.emulator.migrations.archiveBytes(result.migrationId)!;
    expect(result.archive.bytes).toBe(expected.length);
    expect(result.archive.sha256).toBe(createHash('sha256').update(expected).digest('hex'));
    const onDisk = await readFile(result.archive.path);
    expect(createHash('sha256').update(onDisk).digest('hex')).toBe(result.archive.sha256);
    for (const repo of ['alpha', 'beta', 'gamma']) expect(stack.emulator.migrations.isLocked('octo-org', repo)).toBe(false);
    expect(stack.emulator.stats.storage.rejectedWithAuthorization).toBe(0);
  });
});
