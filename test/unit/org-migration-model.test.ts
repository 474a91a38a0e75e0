/** The org-migration model file: validation, the workflow id per repository set, and the one status text. */
import { describe, expect, it } from 'vitest';
import {
  describeOrgMigration,
  migrationInputProblems,
  migrationWorkflowId,
  newMigrationStatus,
  type OrgMigrationStatus,
} from '../../src/processes/org-migration/model';
import { KEYWORD_MAX_BYTES, utf8Bytes } from '../../src/common/search-attributes';

describe('org-migration model', () => {
  it('accepts a plain input and names every problem of a bad one', () => {
    expect(migrationInputProblems({ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: { initialIntervalMs: 1_000 }, eventsPerRun: 8_000 })).toEqual([]);
    const problems = migrationInputProblems({
      org: 'octo_org',
      repositories: ['alpha', '..'],
      lockRepositories: 'yes' as unknown as boolean,
      poll: { timeoutMs: 1e15, initialIntervalMs: 1 },
      outage: { budgetMs: 5 },
      eventsPerRun: 10,
    });
    expect(problems).toEqual([
      expect.stringContaining('org "octo_org" is not a valid organization name'),
      expect.stringContaining('repositories[1] ".." is not a valid repository name'),
      'lockRepositories must be true or false (got "yes")',
      expect.stringContaining('poll.initialIntervalMs must be between 1000'),
      expect.stringContaining('poll.timeoutMs must be between'),
      expect.stringContaining('outage.budgetMs'),
      'eventsPerRun must be an integer between 50 and 8000',
    ]);
  });

  it('takes a download heartbeat timeout between 5 s and 10 minutes', () => {
    const input = (ms: number) => ({ org: 'o', repositories: ['a'], downloadHeartbeatTimeoutMs: ms });
    expect(migrationInputProblems(input(5_000))).toEqual([]);
    expect(migrationInputProblems(input(600_000))).toEqual([]);
    for (const ms of [4_999, 600_001, Infinity, '30000' as unknown as number]) expect(migrationInputProblems(input(ms)), String(ms)).toEqual(['downloadHeartbeatTimeoutMs must be a number of milliseconds between 5000 and 600000']);
  });

  it('checks the max interval against the default initial interval too', () => {
    expect(migrationInputProblems({ org: 'o', repositories: ['a'], poll: { maxIntervalMs: 1_500 } })).toEqual(['poll.maxIntervalMs (1500) must be at least poll.initialIntervalMs (30000)']);
  });

  it('derives one workflow id per organization and repository set, whatever the order or case', () => {
    const id = migrationWorkflowId('Octo-Org', ['beta', 'Alpha']);
    expect(id).toMatch(/^migrate-octo-org-alpha-beta-[0-9a-f]{16}$/);
    expect(migrationWorkflowId('octo-org', ['alpha', 'beta'])).toBe(id);
    expect(migrationWorkflowId('octo-org', ['alpha', 'beta', 'gamma'])).not.toBe(id);
    expect(migrationWorkflowId('other', ['alpha', 'beta'])).not.toBe(id);
    const many = migrationWorkflowId('octo-org', Array.from({ length: 5_000 }, (_, i) => `repository-${i}`));
    expect(many.length).toBeLessThan(120);
  });

  it('describes a status in one line and keeps the search attributes within the Keyword limit', () => {
    const repositories = Array.from({ length: 5_000 }, (_, i) => `repository-${i}`);
    const status: OrgMigrationStatus = { ...newMigrationStatus({ org: 'octo-org', repositories }), phase: 'waiting', migrationId: 42, state: 'exporting', polls: 7, failedPolls: 2, failuresInRow: 2, nextPollInMs: 20_000 };
    const view = describeOrgMigration(status);
    expect(view.line).toBe('waiting · migration 42 · state exporting · 7 polls (2 failed) · API failing: 2 polls in a row · next poll in 20 s');
    expect(view.attributes).toMatchObject({ process: 'org-migration', org: 'octo-org', state: 'exporting' });
    expect(utf8Bytes(view.attributes.target!)).toBeLessThanOrEqual(KEYWORD_MAX_BYTES);
    expect(view.attributes.target).toMatch(/… \(\+[\d,]+ more\)$/);
  });

  it('lists a cancelled or failed migration under its ending, not under the export state it last saw', () => {
    const waiting: OrgMigrationStatus = { ...newMigrationStatus({ org: 'o', repositories: ['a'] }), phase: 'waiting', migrationId: 1, state: 'exporting' };
    expect(describeOrgMigration(waiting).attributes.state).toBe('exporting');
    expect(describeOrgMigration({ ...waiting, phase: 'cancelled' }).attributes.state).toBe('cancelled');
    expect(describeOrgMigration({ ...waiting, phase: 'failed', state: 'failed' }).attributes.state).toBe('failed');
    expect(describeOrgMigration({ ...waiting, phase: 'done', state: 'exported' }).attributes.state).toBe('exported');
    // Replaying a run recorded before this rule (the workflow's patch says no): the old attribute stays.
    expect(describeOrgMigration({ ...waiting, phase: 'cancelled' }, undefined, { listEnding: false }).attributes.state).toBe('exporting');
  });

  it('shows the download with the heartbeat the CLI has, as a percentage', () => {
    const status: OrgMigrationStatus = { ...newMigrationStatus({ org: 'o', repositories: ['a'] }), phase: 'downloading', migrationId: 1 };
    expect(describeOrgMigration(status, { offset: 512 * 1024, total: 1024 * 1024 })).toMatchObject({ line: 'downloading · migration 1 · 512 KiB of 1024 KiB', percent: 50 });
    // An upload's heartbeat: the bytes stored, and where.
    const upload = { offset: 256 * 1024, total: 1024 * 1024, url: 's3://archives/o-migration-1.tar.gz' };
    expect(describeOrgMigration(status, upload)).toMatchObject({ line: 'downloading · migration 1 · 256 KiB of 1024 KiB stored in s3://archives/o-migration-1.tar.gz', percent: 25 });
  });

  it('names the destination while the workflow has no bytes (the UI\'s current details), then the archive where it went', () => {
    const status: OrgMigrationStatus = { ...newMigrationStatus({ org: 'o', repositories: ['a'] }), phase: 'downloading', migrationId: 1, archiveTo: 's3://archives/x/o-migration-1.tar.gz' };
    expect(describeOrgMigration(status).line).toBe('downloading · migration 1 · into s3://archives/x/o-migration-1.tar.gz');
    // The CLI's heartbeat of an older worker, without the object's URL: the destination the workflow knows.
    expect(describeOrgMigration(status, { offset: 1024, total: 2048 }).line).toBe('downloading · migration 1 · 1 KiB of 2 KiB stored in s3://archives/x/o-migration-1.tar.gz');
    const stored = { path: 's3://archives/x/o-migration-1.tar.gz', url: 's3://archives/x/o-migration-1.tar.gz', bytes: 2048 };
    expect(describeOrgMigration({ ...status, phase: 'unlocking', archive: stored }).line).toBe('unlocking · migration 1 · archive 2 KiB stored in s3://archives/x/o-migration-1.tar.gz');
    expect(describeOrgMigration({ ...status, archiveTo: undefined, phase: 'done', archive: { path: '/data/archives/o-migration-1.tar.gz', bytes: 2048 } }).line).toBe(
      'done · migration 1 · archive 2 KiB at /data/archives/o-migration-1.tar.gz',
    );
  });

  it('refuses an archive destination with an unknown scheme or a credential, naming the field', () => {
    const input = { org: 'octo-org', repositories: ['alpha'] };
    expect(migrationInputProblems({ ...input, archiveTo: 's3://archives/exports/' })).toEqual([]);
    expect(migrationInputProblems({ ...input, archiveTo: 'ftp://archives/exports/' })).toEqual([expect.stringContaining('archiveTo "ftp://archives/exports/" has an unknown scheme "ftp"')]);
    const [credential] = migrationInputProblems({ ...input, archiveTo: 's3://AKIAEXAMPLE:hunter2secret@archives/' });
    expect(credential).toContain('archiveTo');
    expect(credential).not.toContain('hunter2secret');
    expect(migrationInputProblems({ ...input, archiveTo: 42 as unknown as string })).toEqual([expect.stringContaining('archiveTo must be a URL')]);
  });
});
