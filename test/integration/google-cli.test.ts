/** The starter's Google commands as a user runs them: a real process, the shared dev server, a real worker, the emulator. */
import { describe, expect, it } from 'vitest';
import { runStarter } from '../helpers/starter';
import { useStack } from '../helpers/stack';

describe('starter Google commands', () => {
  const stack = useStack({ emulator: { google: { apikeys: { deleteOperationMs: 300 }, buckets: { scheduledMs: 200, waitingForPermissionsMs: 200, runningMs: 400 }, dns: { changeMs: 300 } } } });
  const fast = ['--poll-initial', '1', '--poll-max', '1', '--poll-timeout', '300'];

  it('bucket-create --wait --json prints one JSON object with the result, workflowId and workflowStatus, and exits 0', async () => {
    const { code, stdout } = await runStarter(
      ['bucket-create', '--parent', 'folders/demo-folder/locations/global', '--bucket-id', 'cli-audit', '--retention-days', '45', ...fast, '--wait', '--json'],
      stack.taskQueue,
    );
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ workflowStatus: 'COMPLETED', bucket: 'folders/demo-folder/locations/global/buckets/cli-audit', state: 'SUCCEEDED', response: { retentionDays: 45 } });
    expect(out.workflowId).toMatch(/^log-bucket-create-cli-audit-/);
  });

  it('bucket-update --follow prints the operation state as it moves, then the result', async () => {
    await runStarter(['bucket-create', '--parent', 'projects/demo-project/locations/global', '--bucket-id', 'cli-follow', ...fast, '--wait'], stack.taskQueue);
    // Long enough for the follower (which asks twice a second) to see the operation running.
    stack.emulator.google.buckets.options.runningMs = 2_500;
    const { code, stdout, stderr } = await runStarter(
      ['bucket-update', '--name', 'projects/demo-project/locations/global/buckets/cli-follow', '--update-mask', 'retentionDays', '--retention-days', '90', ...fast, '--follow'],
      stack.taskQueue,
    );
    stack.emulator.google.buckets.options.runningMs = 400;
    expect(code).toBe(0);
    // Progress goes to stderr; stdout carries only the result.
    expect(stderr).toMatch(/phase: waiting · operation projects\/demo-project\/locations\/global\/operations\/\S+ · state: (SCHEDULED|WAITING_FOR_PERMISSIONS|RUNNING)/);
    expect(stdout).toContain('log bucket projects/demo-project/locations/global/buckets/cli-follow: operation');
    expect(stdout).toContain('retention: 90 days');
  });

  it('dns-change --add … --wait applies the record set and prints the change', async () => {
    const { code, stdout } = await runStarter(
      ['dns-change', '--project', 'demo-project', '--zone', 'demo-zone', '--add', 'cli.demo.example.com. A 300 192.0.2.40', ...fast, '--wait'],
      stack.taskQueue,
    );
    expect(code).toBe(0);
    expect(stdout).toContain('+ cli.demo.example.com. A 300 192.0.2.40');
    expect(stack.emulator.google.dns.rrsets('demo-project', 'demo-zone').some((r) => r.name === 'cli.demo.example.com.')).toBe(true);
  });

  it('apikey-delete with a stale etag exits 1 and --json carries the EtagMismatchError', async () => {
    const name = 'projects/demo-project/locations/global/keys/demo-key-2';
    const etag = stack.emulator.google.apikeys.etag(name);
    stack.emulator.google.apikeys.modify(name, 'changed');
    const { code, stdout } = await runStarter(['apikey-delete', '--name', name, '--etag', etag, ...fast, '--wait', '--json'], stack.taskQueue);
    expect(code).toBe(1);
    const out = JSON.parse(stdout);
    expect(out.workflowStatus).toBe('FAILED');
    expect(out.error.type).toBe('EtagMismatchError');
    expect(out.error.message).toContain('changed since you read it');
  });

  it('a key name outside location global is one clear line on stderr and exit code 2, and nothing is sent', async () => {
    stack.emulator.resetStats();
    const { code, stdout, stderr } = await runStarter(['apikey-delete', '--name', 'projects/demo-project/locations/us-east1/keys/demo-key-1', '--wait'], stack.taskQueue);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('the location must be "global"');
    expect(stack.emulator.stats.requests).toBe(0);
  });
});
