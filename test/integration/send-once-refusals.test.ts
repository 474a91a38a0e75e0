/**
 * A start the API refuses before processing it (429 with `retry-after`: nothing was created) is sent again
 * after the demanded wait for as long as the refusals last, within the outage budget: refusals are not tries.
 * At scale this is the fleet's rate budget holding 200 starts back for minutes; before the rule, the sixth
 * refusal failed the migration (`MigrationStartFailed`) although nothing had gone wrong.
 */
import { describe, expect, it } from 'vitest';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { useTimeSkippingStack } from '../helpers/stack';
import { FAST_POLL } from '../helpers/presets';

const REFUSALS = 9;

describe('sendOnce: refusals are waited out, not counted as tries', () => {
  const stack = useTimeSkippingStack({
    emulator: {
      migrations: { exportMs: 500, archiveBytes: 4_096 },
      faults: [{ kind: 'status', status: 429, retryAfterSeconds: 1, method: 'POST', path: '/orgs/:org/migrations', times: REFUSALS }],
    },
  });

  it(`starts the export after ${REFUSALS} refusals (more than the 6 tries of a send), exactly once`, async () => {
    const result = await stack.client.workflow.execute(orgMigration, {
      taskQueue: stack.taskQueue,
      workflowId: `refused-start-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: ['alpha'], poll: FAST_POLL }],
    });
    expect(result.state).toBe('exported');
    expect(stack.emulator.stats.byRoute['POST /orgs/:org/migrations']).toBe(REFUSALS + 1);
    expect(stack.emulator.migrations.all()).toHaveLength(1);
  });
});
