/**
 * Issue 13, one org migration per case: the API answers the export's start (or its status) with a malformed
 * success. Each case ends in the documented way: a malformed answer to the POST is an unknown outcome (the
 * migration is looked up by its repositories and creation time, adopted if it exists, the POST sent again
 * only when it does not), no repository is left locked, and no call ever names an id the workflow did not
 * know (the emulator's request log has no `/migrations/null` or `NaN`).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { orgMigration, MigrationFailure } from '../../src/processes/org-migration/workflow';
import type { OrgMigrationInput, OrgMigrationResult } from '../../src/processes/org-migration/model';
import type { FaultRule } from '../../packages/emulator/src/faults';
import { LonghaulTarget, KEYWORD_MAX_BYTES, utf8Bytes } from '../../src/common/search-attributes';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { useStack } from '../helpers/stack';
import { expectFailure } from '../helpers/failures';
import { FAST_POLL } from '../helpers/presets';

const REPOS = ['alpha', 'beta'];
const POST = { method: 'POST', path: '/orgs/:org/migrations' } as const;
const outcomes: string[] = [];
afterAll(() => console.log(`\nmalformed answers — org migration\n${outcomes.join('\n')}\n`));

describe('org migration: malformed answers (issue 13)', () => {
  const s = useStack({ emulator: { migrations: { exportMs: 800, archiveBytes: 8_192 } } });

  /** Runs one migration against these faults; returns its ending, the time it took and the requests it made. */
  async function migrate(name: string, faults: FaultRule[], extra: Partial<OrgMigrationInput> = {}) {
    s.emulator.setFaults(faults);
    const logStart = s.emulator.requestLog.length;
    const before = s.emulator.migrations.all().length;
    const started = Date.now();
    const handle = await s.client.workflow.start(orgMigration, {
      taskQueue: s.taskQueue,
      workflowId: `malformed-${name.replace(/\W+/g, '-')}-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: REPOS, lockRepositories: true, poll: FAST_POLL, startGraceMs: 1_000, ...extra }],
    });
    let result: OrgMigrationResult | undefined;
    let error: unknown;
    try {
      result = await handle.result();
    } catch (err) {
      error = err;
    }
    const ms = Date.now() - started;
    const requests = s.emulator.requestLog.slice(logStart).map((r) => `${r.method} ${r.path}`);
    const created = s.emulator.migrations.all().slice(before);
    // Never a call naming an id the workflow did not know.
    expect(requests.filter((r) => /\/migrations\/(?!\d+(\/|$))/.test(r))).toEqual([]);
    const ids = new Set(created.map((m) => String(m.id)));
    for (const r of requests) {
      const id = /\/migrations\/(\d+)/.exec(r)?.[1];
      if (id !== undefined) expect(ids.has(id), `${r} names a migration this workflow did not create`).toBe(true);
    }
    // Nothing left locked.
    for (const repo of REPOS) expect(s.emulator.migrations.isLocked('octo-org', repo), `${repo} left locked`).toBe(false);
    const count = (prefix: string) => requests.filter((r) => r.startsWith(prefix)).length;
    const ending = result ? `COMPLETED (migration ${result.migrationId}${created.length === 1 ? ', adopted/created once' : ''})` : `FAILED ${describeError(error)}`;
    outcomes.push(
      `| ${name} | ${ending} | ${ms} ms | ${requests.length} requests (POST ${count('POST /orgs/octo-org/migrations')}, GET list ${requests.filter((r) => r === 'GET /orgs/octo-org/migrations').length}, unlock ${count('DELETE')}) | migrations created ${created.length} |`,
    );
    return { result, error, requests, created, count };
  }

  it('201 with truncated JSON (created, locked): the migration is found and adopted, nothing sent twice', async () => {
    const { result, created, requests } = await migrate('POST 201 truncated JSON', [{ kind: 'truncated-json', ...POST, afterProcessing: true, times: 1 }]);
    expect(result).toBeDefined();
    expect(created.map((m) => m.id)).toEqual([result!.migrationId]);
    expect(requests.filter((r) => r === 'POST /orgs/octo-org/migrations')).toHaveLength(1);
    expect(requests).toContain('GET /orgs/octo-org/migrations');
    expect(result!.unlockedRepositories).toEqual(REPOS);
  });

  it('201 JSON without id (created, locked): the migration is found and adopted', async () => {
    const { result, created, requests } = await migrate('POST 201 without id', [{ kind: 'missing-field', field: 'id', ...POST, afterProcessing: true, times: 1 }]);
    expect(created.map((m) => m.id)).toEqual([result!.migrationId]);
    expect(requests.filter((r) => r === 'POST /orgs/octo-org/migrations')).toHaveLength(1);
    expect(result!.unlockedRepositories).toEqual(REPOS);
  });

  it('201 with a wrong content type (created, locked): adopted as well', async () => {
    const { result, created } = await migrate('POST 201 JSON as text/plain', [{ kind: 'content-type', ...POST, afterProcessing: true, times: 1 }]);
    expect(created.map((m) => m.id)).toEqual([result!.migrationId]);
  });

  it('200 with an HTML page (nothing created): the lookup finds nothing, the POST is sent again once the grace is over', async () => {
    const { result, created, requests } = await migrate('POST 200 HTML page (once)', [{ kind: 'html-page', ...POST, status: 200, times: 1 }]);
    expect(created.map((m) => m.id)).toEqual([result!.migrationId]);
    expect(requests.filter((r) => r === 'POST /orgs/octo-org/migrations')).toHaveLength(2);
    expect(result!.unlockedRepositories).toEqual(REPOS);
  });

  it('200 with an HTML page to every POST: MigrationStartFailed after the tries, nothing created, no unlock call', async () => {
    const { error, created, count } = await migrate('POST 200 HTML page (always)', [{ kind: 'html-page', ...POST, status: 200 }]);
    const failure = await expectFailure(Promise.reject(error), MigrationFailure.StartFailed);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('malformed answer');
    expect(failure.message).toContain('HTML page');
    expect(created).toEqual([]);
    expect(count('DELETE')).toBe(0);
    expect(count('POST /orgs/octo-org/migrations')).toBe(6);
  });

  it('a status poll answered with truncated JSON is polled again; the migration completes', async () => {
    const { result } = await migrate('GET status truncated JSON (twice)', [{ kind: 'truncated-json', method: 'GET', path: /^\/orgs\/:org\/migrations\/:id$/, afterProcessing: true, times: 2 }]);
    expect(result).toBeDefined();
    expect(s.emulator.stats.faultsInjected).toBeGreaterThan(0);
  });
});

describe('org migration: 5,000 repositories in one migration (issue 13)', () => {
  // The spec (002) states no per-migration maximum, so a large migration keeps working: what could not take
  // it was the LonghaulTarget search attribute (a Keyword: 2,048 bytes on Temporal, 255 characters on SQL
  // visibility), now summarised.
  const fixture = defaultGithubFixture();
  const many = Array.from({ length: 5_000 }, (_, i) => `bulk-repository-${i}`);
  for (const [i, name] of many.entries()) fixture.repositories.push({ id: 90_000 + i, name, owner: 'octo-org', private: false, workflowsEnabled: false });
  const s = useStack({ emulator: { fixture, migrations: { exportMs: 500, archiveBytes: 4_096 } } });

  it('completes, never terminated by the server: LonghaulTarget stays within the Keyword limit', async () => {
    const started = Date.now();
    const handle = await s.client.workflow.start(orgMigration, {
      taskQueue: s.taskQueue,
      workflowId: `malformed-5000-repositories-${Date.now()}`,
      args: [{ org: 'octo-org', repositories: many, poll: FAST_POLL }],
    });
    const result = await handle.result();
    const description = await handle.describe();
    expect(description.status.name).toBe('COMPLETED');
    const target = description.typedSearchAttributes.get(LonghaulTarget)!;
    expect(utf8Bytes(target)).toBeLessThanOrEqual(KEYWORD_MAX_BYTES);
    expect(target).toMatch(/^bulk-repository-0, bulk-repository-1, .*… \(\+[\d,]+ more\)$/);
    expect(s.emulator.migrations.all().find((m) => m.id === result.migrationId)?.repositories).toHaveLength(5_000);
    outcomes.push(`| 5,000 repositories in one migration | COMPLETED (LonghaulTarget ${utf8Bytes(target)} bytes) | ${Date.now() - started} ms | ${s.emulator.stats.requests} requests | migrations created 1 |`);
  });
});

function describeError(err: unknown): string {
  const chain: unknown[] = [];
  for (let e = err; e && chain.length < 10; e = (e as { cause?: unknown }).cause) chain.push(e);
  const typed = chain.find((e) => typeof (e as { type?: unknown }).type === 'string') as { type: string } | undefined;
  return typed?.type ?? String(err);
}
