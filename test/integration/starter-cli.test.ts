/**
 * The starter CLI as a user runs it: a real process against the shared dev server and a real worker.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { useStack } from '../helpers/stack';
import { runStarter } from '../helpers/starter';

describe('starter CLI', () => {
  const stack = useStack({ emulator: { migrations: { exportMs: 800, archiveBytes: 50_000 } } });

  it('migrate --wait --json prints one JSON object with the result, workflowId and workflowStatus, and exits 0', async () => {
    const { code, stdout } = await runStarter(['migrate', '--org', 'octo-org', '--repo', 'alpha', '--lock', '--poll-initial', '1', '--wait', '--json'], stack.taskQueue);
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.workflowStatus).toBe('COMPLETED');
    expect(out.workflowId).toMatch(/^migrate-octo-org-alpha-/);
    expect(out.state).toBe('exported');
    expect(out.unlockedRepositories).toEqual(['alpha']);
    expect(out.archive.bytes).toBe(50_000);
    expect(out.archive.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('--poll-fraction reaches the workflow as the share of the wait its polls grow to', async () => {
    // Its own workflow id: the natural one of a single repository can be another file's on the shared server.
    const id = `starter-poll-fraction-${Date.now()}`;
    const args = ['migrate', '--org', 'octo-org', '--repo', 'beta', '--workflow-id', id, '--poll-initial', '1', '--poll-fraction', '50', '--wait', '--json'];
    const { code, stdout } = await runStarter(args, stack.taskQueue);
    expect(code).toBe(0);
    const { workflowId } = JSON.parse(stdout) as { workflowId: string };
    const { events } = await stack.client.workflow.getHandle(workflowId).fetchHistory();
    const input = defaultPayloadConverter.fromPayload(events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0]) as { poll?: object };
    expect(input.poll).toEqual({ initialIntervalMs: 1_000, elapsedFraction: 0.5 });
  });

  it('a failed migration exits 1 and --json carries the typed error', async () => {
    stack.emulator.migrations.options.failRepositories.push('gamma');
    const { code, stdout } = await runStarter(['migrate', '--org', 'octo-org', '--repo', 'gamma', '--lock', '--poll-initial', '1', '--wait', '--json'], stack.taskQueue);
    expect(code).toBe(1);
    const out = JSON.parse(stdout);
    expect(out.workflowStatus).toBe('FAILED');
    expect(out.error.type).toBe('MigrationExportFailed');
    expect(stack.emulator.migrations.isLocked('octo-org', 'gamma')).toBe(false);
  });

  it('bad input is one clear line on stderr and exit code 2, and nothing is started', async () => {
    const before = stack.emulator.stats.requests;
    const { code, stdout, stderr } = await runStarter(['migrate', '--org', 'octo-org', '--repo', 'not a repo!'], stack.taskQueue);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('is not a valid repository name');
    expect(stack.emulator.stats.requests).toBe(before);
  });
});
