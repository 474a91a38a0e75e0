/**
 * The shared stack helper: one call gives a working emulator + worker + client, and a restarted worker picks up a
 * workflow that the previous one had started.
 */
import { describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { useStack } from '../helpers/stack';
import { waitFor } from '../helpers/wait';
import { FAST_POLL } from '../helpers/presets';

describe('test stack helper', () => {
  const stack = useStack({ emulator: { migrations: { exportMs: 4_000, archiveBytes: 2_048 } } });

  it('finishes on a restarted worker a migration that the first worker started', async () => {
    const workflowId = `stack-restart-${Date.now()}`;
    const handle = await stack.client.workflow.start(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL }],
    });
    // Wait until the first worker has started the export, then replace the worker mid-wait.
    await waitFor('the export to start', () => stack.emulator.migrations.all().length, (n) => n > 0, 30_000, 100);
    expect(stack.emulator.migrations.all()).toHaveLength(1);
    await stack.restartWorker();
    const result = await handle.result();
    expect(result.state).toBe('exported');
    expect(stack.emulator.migrations.all()).toHaveLength(1);
    expect(stack.emulator.migrations.isLocked('octo-org', 'alpha')).toBe(false);
  });
});
