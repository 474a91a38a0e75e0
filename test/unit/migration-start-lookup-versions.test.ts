/**
 * The exactly-once start's lookup under both GitHub REST API versions (issue 39): it reads repository names from
 * what both return (`name` of a `repository` or a `simple-repository`), and an export of the attempt window whose
 * answer names no repositories (started with `exclude: ["repositories"]`, or a version that would leave them out) is
 * neither adopted nor passed over: the lookup fails, typed, and nothing is started again.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { Emulator } from '@longhaul/emulator';
import { createMigrationActivities } from '../../src/processes/org-migration/activities';
import { emulatorDeps, startTestEmulator } from '../helpers/emulator';
import { call } from '../helpers/emulator-http';
import { expectFailure } from '../helpers/failures';
import { GITHUB_API_VERSIONS } from '../../src/config';

let emulator: Emulator;
beforeEach(async () => {
  emulator = await startTestEmulator();
});
afterEach(() => emulator.close());

const windowAround = (now: number) => ({ notBefore: new Date(now - 60_000).toISOString(), notAfter: new Date(now + 60_000).toISOString() });

describe.each(GITHUB_API_VERSIONS)('the start lookup under %s', (apiVersion) => {
  it('passes over an export of other repositories, and refuses to judge one whose repositories it cannot read', async () => {
    const find = createMigrationActivities(await emulatorDeps(emulator, { apiVersion })).findMigration;
    // The failure is the subject: the SDK's "Activity failed" warning would only repeat it on stderr.
    const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
    const org = 'octo-org';
    const other = await call(emulator.apiUrl, 'POST', `/orgs/${org}/migrations`, { body: { repositories: ['gamma'], exclude_releases: true }, headers: { 'x-github-api-version': apiVersion } });
    expect(other.status).toBe(201);
    const input = { org, repositories: ['alpha'], flags: { excludeReleases: true }, ...windowAround(Date.now()) };
    expect(await env.run(() => find(input))).toBeUndefined();

    const hidden = await call(emulator.apiUrl, 'POST', `/orgs/${org}/migrations`, { body: { repositories: ['alpha'], exclude_releases: true, exclude: ['repositories'] } });
    expect(hidden.status).toBe(201);
    const failure = await expectFailure(env.run(() => find(input)), 'MigrationStartUnidentifiable');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(`migration ${String((hidden.json as { id: number }).id)}`);
  });
});
