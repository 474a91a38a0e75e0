/** The CLI's batch files, list filters and exit codes (pure functions; the commands are tested end to end in cli-lifecycle). */
import { describe, expect, it } from 'vitest';
import { parseBatchCsv, parseReposFile } from '../../src/processes/org-migration/cli-batch';
import { archiveOfMemo, listQuery } from '../../src/cli/lifecycle';
import { exitCodeForStatus } from '../../src/common/exit-codes';
import { CliError } from '../../src/cli/kit/context';

describe('migrate batch files', () => {
  it('--repos-file: one migration per line, groups by commas or spaces, comments and blank lines skipped', () => {
    expect(parseReposFile('# wave 1\nalpha\n\nbeta, gamma\ndelta epsilon\n', 'repos.txt', 'octo-org')).toEqual([
      { org: 'octo-org', repositories: ['alpha'], source: 'repos.txt:2' },
      { org: 'octo-org', repositories: ['beta', 'gamma'], source: 'repos.txt:4' },
      { org: 'octo-org', repositories: ['delta', 'epsilon'], source: 'repos.txt:5' },
    ]);
    expect(() => parseReposFile('# nothing\n', 'empty.txt', 'octo-org')).toThrow(CliError);
  });

  it('--batch: header names the columns (gh gei style names too), rows of one org and group form one migration, URLs reduce to names', () => {
    const csv = 'Org_Name,Repo_Name,Group\nocto-org,alpha,w1\nother-org,alpha,w1\nocto-org,"https://github.com/octo-org/beta/",w1\nocto-org,gamma,\n';
    expect(parseBatchCsv(csv, 'm.csv')).toEqual([
      { org: 'octo-org', repositories: ['alpha', 'beta'], source: 'm.csv:2' },
      { org: 'other-org', repositories: ['alpha'], source: 'm.csv:3' },
      { org: 'octo-org', repositories: ['gamma'], source: 'm.csv:5' },
    ]);
  });

  it('--batch: a header without org or repository columns, or a row without them, is a usage error naming the line', () => {
    expect(() => parseBatchCsv('name,size\nalpha,1\n', 'm.csv')).toThrow(/m\.csv:1: the header must name an org column/);
    expect(() => parseBatchCsv('org,repo\nocto-org,\n', 'm.csv')).toThrow(/m\.csv:2: needs an org and a repository/);
    let caught: unknown;
    try {
      parseBatchCsv('org,repo\n', 'm.csv');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CliError);
    expect((caught as CliError).exitCode).toBe(2);
  });
});

describe('list filters', () => {
  it('go through the search attributes, and refuse values that could leave their quotes', () => {
    expect(listQuery({ process: 'org-migration', org: 'octo-org', state: 'exporting', running: true })).toBe(
      "LonghaulProcess = 'org-migration' AND LonghaulOrg = 'octo-org' AND LonghaulState = 'exporting' AND ExecutionStatus = 'Running'",
    );
    expect(listQuery({ closed: true })).toBe("LonghaulProcess IS NOT NULL AND ExecutionStatus != 'Running'");
    expect(() => listQuery({ org: "x' OR 1=1 --" })).toThrow(/--org must not contain quotes/);
    expect(() => listQuery({ running: true, closed: true })).toThrow(/--running or --closed/);
  });

  it('list: where the archive went, from the memo a migration sets once it is stored', () => {
    const object = { path: 's3://archives/x/o-migration-1.tar.gz', url: 's3://archives/x/o-migration-1.tar.gz', bytes: 3, sha256: 'ab', version: '"e1"' };
    expect(archiveOfMemo({ archive: object })).toEqual({ ...object, where: object.url });
    expect(archiveOfMemo({ archive: { path: '/data/archives/o-migration-2.tar.gz', bytes: 3, sha256: 'cd' } })).toMatchObject({ where: '/data/archives/o-migration-2.tar.gz' });
    expect(archiveOfMemo({ archive: { unreadable: 'payload was encrypted with key "k9", which is not configured' } })).toEqual({ where: '(unreadable: payload was encrypted with key "k9", which is not configured)' });
    for (const memo of [undefined, {}, { archive: null }, { archive: 'x' }, { archive: { bytes: 3 } }]) expect(archiveOfMemo(memo)).toBeUndefined();
  });
});

describe('exit codes', () => {
  it('tell completed, failed, cancelled and timed out or terminated apart', () => {
    expect(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'TERMINATED', 'CONTINUED_AS_NEW'].map(exitCodeForStatus)).toEqual([0, 1, 3, 4, 4, 1]);
  });
});
