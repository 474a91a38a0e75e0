/**
 * Source-import input and answer validation, the author-mapping and project-choice rules, the LFS
 * policy, and named import credentials resolved on the worker (never echoing the secret; env:/file: references
 * refused without reading anything).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import {
  authorMappingProblems,
  importCredentialProblems,
  decideLfs,
  describeSourceImportStatus,
  desiredIdentity,
  importInputProblems,
  parseLfsPolicy,
  selectChoice,
  type ImportAuthor,
  type LargeFile,
  type SourceImportInput,
  type SourceImportStatus,
} from '../../src/processes/source-import/model';
import { importCredential } from '../../src/activities/named-secrets';
import { parseAuthorsFile } from '../../src/processes/source-import/cli';
import { GHP } from '../helpers/fake-secrets';

const valid: SourceImportInput = { owner: 'octo-org', repo: 'alpha', vcsUrl: 'https://svn.example.test/repos/happy' };

describe('source-import input validation', () => {
  it('accepts a minimal input and a full one', () => {
    expect(importInputProblems(valid)).toEqual([]);
    expect(
      importInputProblems({
        ...valid,
        vcs: 'tfvc',
        tfvcProject: 'Contoso',
        credentials: 'svn-main',
        authors: [{ remote: 'alice', name: 'Alice Liddell', email: 'alice@example.com' }],
        lfs: { auto: { maxTotalBytes: 5e9 } },
        projectChoice: { humanName: 'Contoso (tfs)' },
        maxRestarts: 0,
        answerTimeoutMs: 60_000,
        outage: { initialBackoffMs: 1_000 },
        eventsPerRun: 500,
        poll: { initialIntervalMs: 1_000, maxIntervalMs: 30_000, backoffFactor: 1.5 },
      }),
    ).toEqual([]);
  });

  it('lists every problem at once', () => {
    const problems = importInputProblems({
      owner: '-bad-',
      repo: '..',
      vcsUrl: 'svn.example.test/repo',
      vcs: 'cvs' as never,
      tfvcProject: '',
      lfs: 'sometimes' as never,
      projectChoice: {},
      maxRestarts: -1,
      answerTimeoutMs: 0,
      poll: { initialIntervalMs: 10_000, maxIntervalMs: 1_000, backoffFactor: 0.5 },
    });
    expect(problems).toEqual([
      'owner "-bad-" is not a valid account name',
      'repo ".." is not a valid repository name',
      'vcsUrl "svn.example.test/repo" must be an absolute URL of the source repository',
      'vcs must be one of subversion, git, mercurial, tfvc, got "cvs"',
      'tfvcProject must be a non-empty string',
      'lfs must be "opt_in", "opt_out" or { auto: { maxTotalBytes } } with a non-negative size',
      'projectChoice needs at least one of vcs, tfvcProject, humanName',
      'maxRestarts must be an integer from 0 to 100',
      'answerTimeoutMs must be a positive number',
      'poll.backoffFactor must be between 1 and 10 (got 0.5)',
    ]);
  });

  it('checks poll bounds, the outage budget and the event budget by the kit\'s rules (floor 1 s, max ≥ initial against the defaults)', () => {
    expect(importInputProblems({ ...valid, poll: { initialIntervalMs: 100 } })).toEqual(['poll.initialIntervalMs must be between 1000 and 604800000 ms (got 100)']);
    expect(importInputProblems({ ...valid, poll: { initialIntervalMs: 700_000 } })).toEqual(['poll.maxIntervalMs (600000) must be at least poll.initialIntervalMs (700000)']);
    expect(importInputProblems({ ...valid, outage: { budgetMs: 10 } })[0]).toContain('outage.budgetMs must be a number of milliseconds between 1000');
    expect(importInputProblems({ ...valid, eventsPerRun: 20_000 })).toEqual(['eventsPerRun must be an integer between 50 and 8000']);
  });

  it('refuses credentials inside the URL or in place of a name without repeating them', () => {
    const problems = importInputProblems({ ...valid, vcsUrl: 'https://me:hunter2@svn.example.test/r', credentials: GHP });
    expect(problems).toEqual([
      'vcsUrl carries credentials in its user-info part (user:password@host); remove it from vcsUrl and pass the secret by reference instead (import --credentials NAME, or credentials: "NAME" in workflow input, a credential configured on the workers (LONGHAUL_IMPORT_CREDENTIALS))',
      'credentials looks like a secret: name a source-import credential configured on the workers (LONGHAUL_IMPORT_CREDENTIALS), never the secret itself',
    ]);
    expect(problems.join(' ')).not.toContain('hunter2');
    expect(problems.join(' ')).not.toContain('ghp_');
  });

  it('accepts only the name of a configured credential: env: and file: references are refused, unechoed', () => {
    expect(importCredentialProblems('svn-main')).toEqual([]);
    for (const reference of ['env:GITHUB_TOKEN', 'file:/proc/self/environ', 'ENV:X', ' file:relative']) {
      const problems = importCredentialProblems(reference);
      expect(problems).toEqual([
        "credentials must be the name of a source-import credential configured on the workers (LONGHAUL_IMPORT_CREDENTIALS): env: and file: references are refused, nothing is read from the worker's environment or files",
      ]);
    }
    expect(importCredentialProblems('two words')[0]).toContain('letters, digits');
    expect(importCredentialProblems('')).toHaveLength(1);
    expect(importCredentialProblems(undefined)).toHaveLength(1);
  });

  it('checks author mappings field by field', () => {
    expect(authorMappingProblems({ remote: 'alice', name: 'Alice', email: 'alice@example.com' })).toEqual([]);
    expect(authorMappingProblems({ remote: ' ', name: 'A <b>', email: 'nope', extra: 1 })).toEqual([
      'unknown field "extra" in author mapping',
      'author mapping: remote must name the remote id, name or email of an author',
      'author mapping for " ": name must be a non-empty Git name without <, > or line breaks',
      'author mapping for " ": email "nope" is not an email address',
    ]);
    expect(authorMappingProblems(null)).toEqual(['an author mapping needs remote, name and email']);
  });
});

describe('source-import rules', () => {
  const author = (remoteId: string, email = `${remoteId}@guid`): ImportAuthor => ({ id: 1, remoteId, remoteName: remoteId, name: remoteId, email });

  it('maps an author by remote id, remote name or email, the last matching mapping winning', () => {
    const mappings = [
      { remote: 'alice', name: 'Alice One', email: 'a1@example.com' },
      { remote: 'BOB@GUID', name: 'Bob', email: 'bob@example.com' },
      { remote: 'alice', name: 'Alice Two', email: 'a2@example.com' },
    ];
    expect(desiredIdentity(mappings, author('alice'))?.name).toBe('Alice Two');
    expect(desiredIdentity(mappings, author('bob'))?.name).toBe('Bob');
    expect(desiredIdentity(mappings, author('carol'))).toBeUndefined();
  });

  it('selects exactly one project choice by index or fields, or says why not', () => {
    const choices = [{ vcs: 'git', humanName: 'Git' }, { vcs: 'tfvc', tfvcProject: 'A', humanName: 'A (tfs)' }, { vcs: 'tfvc', tfvcProject: 'B', humanName: 'B (tfs)' }];
    expect(selectChoice({ index: 1 }, choices)).toEqual({ choice: choices[1] });
    expect(selectChoice({ tfvcProject: 'B' }, choices)).toEqual({ choice: choices[2] });
    expect(selectChoice({ index: 3 }, choices)).toEqual({ problem: 'index 3 is not one of the offered choices (0: Git, 1: A (tfs), 2: B (tfs))' });
    expect(selectChoice({ vcs: 'tfvc' }, choices)).toEqual({ problem: '2 offered choices match {"vcs":"tfvc"}; be more specific (offered: 0: Git, 1: A (tfs), 2: B (tfs))' });
    expect(selectChoice({}, choices)).toEqual({ problem: 'give an index or fields of one of the offered choices (0: Git, 1: A (tfs), 2: B (tfs))' });
  });

  it('parses the --lfs policy', () => {
    expect(parseLfsPolicy('opt_in')).toBe('opt_in');
    expect(parseLfsPolicy('opt_out')).toBe('opt_out');
    expect(parseLfsPolicy('auto:5GB')).toEqual({ auto: { maxTotalBytes: 5e9 } });
    expect(parseLfsPolicy('auto:1.5GiB')).toEqual({ auto: { maxTotalBytes: 1.5 * 2 ** 30 } });
    expect(parseLfsPolicy('auto:1000')).toEqual({ auto: { maxTotalBytes: 1000 } });
    expect(() => parseLfsPolicy('auto:5 parsecs')).toThrow('--lfs must be opt_in, opt_out or auto:SIZE');
    expect(() => parseLfsPolicy('yes')).toThrow('--lfs must be opt_in, opt_out or auto:SIZE');
  });

  it('decides LFS by policy, the auto rule opting in up to the size budget', () => {
    const files: LargeFile[] = [
      { refName: 'refs/heads/trunk', path: 'a.bin', oid: 'x', size: 300_000_000 },
      { refName: 'refs/heads/trunk', path: 'b.bin', oid: 'y', size: 200_000_000 },
    ];
    expect(decideLfs('opt_in', files).useLfs).toBe('opt_in');
    expect(decideLfs('opt_out', files).useLfs).toBe('opt_out');
    expect(decideLfs({ auto: { maxTotalBytes: 500_000_000 } }, files)).toMatchObject({ useLfs: 'opt_in', totalBytes: 500_000_000 });
    const over = decideLfs({ auto: { maxTotalBytes: 499_999_999 } }, files);
    expect(over.useLfs).toBe('opt_out');
    expect(over.reason).toBe('policy auto: 2 large files total 500000000 bytes, over 499999999: left out');
  });
});

describe('named import credentials resolved on the worker', () => {
  function failure(fn: () => unknown): ApplicationFailure {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(ApplicationFailure);
      return err as ApplicationFailure;
    }
    return expect.fail('should have thrown');
  }
  const configured = { LONGHAUL_IMPORT_CREDENTIALS: 'svn-main, tfs' };

  it('reads the username and password of a configured name from its variables or their _FILE', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'longhaul-import-cred-'));
    await writeFile(join(dir, 'password'), 'p:with:colons\n');
    expect(importCredential('svn-main', { ...configured, LONGHAUL_IMPORT_SVN_MAIN_USERNAME: 'u0', LONGHAUL_IMPORT_SVN_MAIN_PASSWORD: 'p0' })).toEqual({ username: 'u0', password: 'p0' });
    expect(importCredential('tfs', { ...configured, LONGHAUL_IMPORT_TFS_USERNAME: 'u1', LONGHAUL_IMPORT_TFS_PASSWORD_FILE: join(dir, 'password') })).toEqual({ username: 'u1', password: 'p:with:colons' });
  });

  it('fails non-retryably with its type, listing the configured names, never a value', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'longhaul-import-cred-'));
    const env = { ...configured, GITHUB_TOKEN: 'the-workers-own-token', LONGHAUL_IMPORT_SVN_MAIN_USERNAME: 'u' };
    const cases: [() => unknown, string, string][] = [
      [() => importCredential('other', env), 'UnknownCredential', 'no import credential of that name on this worker (configured: svn-main, tfs)'],
      [() => importCredential('other', {}), 'UnknownCredential', 'configured: none: set LONGHAUL_IMPORT_CREDENTIALS'],
      [() => importCredential('env:GITHUB_TOKEN', env), 'CredentialReferenceRefused', 'which is refused: name a secret configured on the workers (LONGHAUL_IMPORT_CREDENTIALS); nothing was read or sent'],
      [() => importCredential('svn-main', env), 'CredentialReferenceError', 'but LONGHAUL_IMPORT_SVN_MAIN_PASSWORD (or LONGHAUL_IMPORT_SVN_MAIN_PASSWORD_FILE) is not set on the worker'],
      [() => importCredential('tfs', { ...configured, LONGHAUL_IMPORT_TFS_USERNAME_FILE: join(dir, 'absent') }), 'CredentialReferenceError', 'LONGHAUL_IMPORT_TFS_USERNAME_FILE could not be read on the worker (ENOENT)'],
    ];
    for (const [fn, type, message] of cases) {
      const f = failure(fn);
      expect(f.type).toBe(type);
      expect(f.nonRetryable).toBe(true);
      expect(f.message).toContain(message);
      expect(f.message).not.toContain('the-workers-own-token');
    }
  });
});

describe('author mapping files for the starter', () => {
  it('reads CSV with or without a header, comments and quoted commas, and JSON arrays', () => {
    expect(parseAuthorsFile('# svn authors\njdoe,"Doe, Jane",jane@example.com\n\nbsmith,Bob Smith,bob@example.com\n', 'a.csv')).toEqual([
      { remote: 'jdoe', name: 'Doe, Jane', email: 'jane@example.com' },
      { remote: 'bsmith', name: 'Bob Smith', email: 'bob@example.com' },
    ]);
    expect(parseAuthorsFile('remote,name,email\r\njdoe,"Jane ""JD"" Doe",jane@example.com\r\n', 'a.csv')).toEqual([
      { remote: 'jdoe', name: 'Jane "JD" Doe', email: 'jane@example.com' },
    ]);
    expect(parseAuthorsFile('[{"remote":"jdoe","name":"Jane","email":"jane@example.com"}]', 'a.json')).toEqual([{ remote: 'jdoe', name: 'Jane', email: 'jane@example.com' }]);
  });

  it('says which line or entry is wrong', () => {
    expect(() => parseAuthorsFile('jdoe,Jane\n', 'a.csv')).toThrow('a.csv:1: expected 3 columns remote,name,email, got 2');
    expect(() => parseAuthorsFile('{"jdoe": "Jane"}', 'a.json')).toThrow('a.json: expected a JSON array of { remote, name, email }');
    expect(() => parseAuthorsFile('ok,Ok,ok@example.com\nbad,Bad,bad-at-example\n', 'a.csv')).toThrow(
      'a.csv entry 2: author mapping for "bad": email "bad-at-example" is not an email address',
    );
  });
});

describe('describeSourceImportStatus', () => {
  const base: SourceImportStatus = {
    phase: 'polling',
    owner: 'octo-org',
    repo: 'alpha',
    vcsUrl: 'https://svn.example.test/repos/happy',
    statesSeen: ['detecting', 'importing'],
    status: 'importing',
    percent: 42.7,
    commitCount: 1234,
    polls: 7,
    failedPolls: 0,
    restarts: 1,
    maxRestarts: 2,
    runs: 1,
    authorsFound: 2,
    authorsMapped: [{ id: 1, remoteId: 'alice', remoteName: 'alice', name: 'Alice', email: 'alice@example.com' }],
    authorsComplete: false,
  };

  it('gives the one line the UI and the CLI show, the percent and the search attributes', () => {
    const view = describeSourceImportStatus(base, 'import-alpha');
    expect(view.line).toBe('https://svn.example.test/repos/happy → octo-org/alpha · importing · importing 42.7% of 1234 commits · authors mapped 1/2 · restarts 1/2');
    expect(view.percent).toBe(42.7);
    expect(view.attributes).toEqual({ process: 'source-import', org: 'octo-org', target: 'octo-org/alpha', state: 'importing', progress: 42 });
  });

  it('names the command that answers a waiting import, with the workflow id, and an outage being waited out', () => {
    const waiting = describeSourceImportStatus({ ...base, phase: 'waiting-for-credentials', status: 'auth_failed', answerDeadline: '2026-11-24T10:00:00.000Z' }, 'import-alpha');
    expect(waiting.line).toContain('npx longhaul import-credentials --workflow-id import-alpha --credentials NAME');
    expect(describeSourceImportStatus({ ...base, phase: 'waiting-out-outage', failedPolls: 3 }).line).toContain('calls failing (3 failed polls so far): waiting the outage out');
  });
});
