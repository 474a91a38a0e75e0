/**
 * A workflow input names its credential: one worker process configured with two credentials on two hosts
 * (two emulators, each accepting only its own token) runs a migration that names the second one. Every
 * request goes to that host with that token; the default host is never called; the workflow history
 * names the credential and never contains a secret.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '@longhaul/emulator';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { useFleetTeardown } from '../helpers/fleet';
import { startWorkerProcess } from '../helpers/worker-process';
import { expectFailure } from '../helpers/failures';
import { GHP } from '../helpers/fake-secrets';
import { FAST_POLL } from '../helpers/presets';

const TOKEN_A = 'default-host-token-5b1e0c7d-never-in-history';
const TOKEN_B = 'second-host-token-93fa62e1-never-in-history';

const fleet = useFleetTeardown();

async function hostWithToken(token: string): Promise<Emulator> {
  const fixture = defaultGithubFixture();
  fixture.repositories.push({ id: 8100, name: 'named-repo', owner: 'octo-org', private: false, workflowsEnabled: false });
  return fleet.emulator({ token, fixture, migrations: { exportMs: [500, 500], archiveBytes: 2_048 } });
}

describe('a workflow input names its credential', () => {
  it('sends every request of a migration naming the second credential to that host with that token only', async () => {
    const [a, b] = [await hostWithToken(TOKEN_A), await hostWithToken(TOKEN_B)];
    const client = await fleet.client();
    const suffix = randomUUID().slice(0, 8);
    const first = `main-${suffix}`;
    const second = `ghes-${suffix}`;
    const prefix = `GITHUB_${second.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_`;
    const taskQueue = `named-credential-${suffix}`;
    await startWorkerProcess({
      LONGHAUL_TASK_QUEUE: taskQueue,
      LONGHAUL_GITHUB_CREDENTIAL: first,
      LONGHAUL_GITHUB_CREDENTIALS: second,
      GITHUB_API_URL: a.apiUrl,
      GITHUB_TOKEN: TOKEN_A,
      [`${prefix}API_URL`]: b.apiUrl,
      [`${prefix}TOKEN`]: TOKEN_B,
      LONGHAUL_DATA_DIR: `/tmp/longhaul-named-credential-${suffix}`,
    });

    const handle = await client.workflow.start(orgMigration, {
      taskQueue,
      workflowId: `named-credential-${randomUUID()}`,
      args: [{ org: 'octo-org', repositories: ['named-repo'], lockRepositories: true, credential: second, poll: FAST_POLL }],
    });
    fleet.track(handle);
    const result = await handle.result();

    expect(result.unlockedRepositories).toEqual(['named-repo']);
    // The second host did the whole migration (start, polls, download, unlock), every request authorised…
    expect(b.stats.byRoute['POST /orgs/:org/migrations']).toBe(1);
    expect(b.stats.byRoute['DELETE /orgs/:org/migrations/:id/repos/:repo/lock']).toBe(1);
    expect(b.stats.byStatus['401'] ?? 0).toBe(0);
    // …and the default host was never called.
    expect(a.stats.requests).toBe(0);

    const history = JSON.stringify(await handle.fetchHistory());
    // Every scheduled activity carries the name (the header, base64 of the JSON string)…
    const named = Buffer.from(JSON.stringify(second)).toString('base64');
    const { events } = await handle.fetchHistory();
    const scheduled = (events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);
    expect(scheduled.length).toBeGreaterThan(3);
    for (const e of scheduled) {
      const data = e.activityTaskScheduledEventAttributes!.header?.fields?.['longhaul-credential']?.data;
      expect(data && Buffer.from(data).toString('base64')).toBe(named);
    }
    // …and no secret is anywhere in it.
    expect(history).not.toContain(TOKEN_A);
    expect(history).not.toContain(TOKEN_B);
    expect(history).not.toContain(Buffer.from(TOKEN_B).toString('base64'));
  });

  it('fails a workflow whose input puts a secret where the credential name goes, before any request', async () => {
    const a = await hostWithToken(TOKEN_A);
    const client = await fleet.client();
    const taskQueue = `named-credential-bad-${randomUUID().slice(0, 8)}`;
    await startWorkerProcess({ LONGHAUL_TASK_QUEUE: taskQueue, GITHUB_API_URL: a.apiUrl, GITHUB_TOKEN: TOKEN_A, LONGHAUL_DATA_DIR: `/tmp/longhaul-named-credential-bad` });
    const handle = await client.workflow.start(orgMigration, {
      taskQueue,
      workflowId: `named-credential-bad-${randomUUID()}`,
      args: [{ org: 'octo-org', repositories: ['named-repo'], credential: GHP }],
    });
    fleet.track(handle);
    const cause = await expectFailure(handle.result(), 'InvalidCredential');
    expect(cause.message).not.toContain('ghp_');
    expect(a.stats.requests).toBe(0);
  });
});
