/** GitHub name rules and the search-attribute limits of the status tracker. */
import { describe, expect, it } from 'vitest';
import { isGithubLogin, isRepositoryName, loginProblems, repositoryListProblems } from '../../src/common/github-names';
import { hookTargetProblems } from '../../src/common/hook-repair';
import { isFeedProblem, parseFeed } from '../../src/common/feeds';
import { KEYWORD_MAX_BYTES, keywordValue, searchAttributeUpdates, summarizeList, utf8Bytes } from '../../src/common/search-attributes';

describe('GitHub names', () => {
  it('accepts logins of alphanumerics and single inner hyphens up to 39 characters', () => {
    for (const ok of ['octo-org', 'a', 'A1', 'a-b-c', 'x'.repeat(39)]) expect(isGithubLogin(ok)).toBe(true);
    for (const bad of ['', '-a', 'a-', 'a--b', 'a_b', 'a.b', 'x'.repeat(40), 'a b', 42]) expect(isGithubLogin(bad)).toBe(false);
  });

  it('accepts repository names of letters, digits, . _ - up to 100, never . or ..', () => {
    for (const ok of ['alpha', 'a_b', 'a.b', '.github', '-x', 'x'.repeat(100)]) expect(isRepositoryName(ok)).toBe(true);
    for (const bad of ['', '.', '..', 'a/b', 'a b', 'x'.repeat(101), null]) expect(isRepositoryName(bad)).toBe(false);
  });

  it('names the problems, including duplicates in any case', () => {
    expect(loginProblems('a_b', 'org')[0]).toContain('org "a_b" is not a valid organization name');
    expect(loginProblems('', 'org')).toEqual(['org must be a non-empty organization name']);
    expect(repositoryListProblems(['alpha', 'Alpha', '..'])).toEqual([
      'repository alpha is listed twice'.replace('alpha', 'Alpha'),
      expect.stringContaining('repository ".." is not a valid repository name'),
    ]);
  });

  it('are the same rules for hook repair and feeds as for migrations and imports', () => {
    // Hook repair and feeds used to accept `a_b` as an organization (their own regex); GitHub does not.
    expect(hookTargetProblems({ org: 'a_b' }, 1)).toEqual([expect.stringContaining('org "a_b" is not a valid organization name')]);
    expect(hookTargetProblems({ owner: 'a_b', repo: 'alpha' }, 1)).toEqual(['repository must be OWNER/REPO']);
    expect(hookTargetProblems({ owner: 'octo-org', repo: '.github' }, 1)).toEqual([]);
    expect(isFeedProblem(parseFeed('/orgs/a_b/events'))).toBe(true);
    expect(isFeedProblem(parseFeed('/users/a--b/events'))).toBe(true);
    expect(parseFeed('/repos/Octo-Org/.github/events')).toMatchObject({ kind: 'repo', path: '/repos/octo-org/.github/events' });
    expect(parseFeed('/repos/octo-org/a_b.c/events')).toMatchObject({ kind: 'repo' });
  });
});

describe('search attribute values', () => {
  it('summarises a long list within the Keyword limit, saying how many were left out', () => {
    const names = Array.from({ length: 5_000 }, (_, i) => `repository-${i}`);
    const value = summarizeList(names);
    expect(utf8Bytes(value)).toBeLessThanOrEqual(KEYWORD_MAX_BYTES);
    expect(value.startsWith('repository-0, repository-1, ')).toBe(true);
    const shown = value.split(', ').filter((s) => s.startsWith('repository-')).length;
    expect(value.endsWith(`… (+${(5_000 - shown).toLocaleString('en-US')} more)`)).toBe(true);
    expect(summarizeList(['alpha', 'beta', 'gamma'])).toBe('alpha, beta, gamma');
  });

  it('cuts a long value at a character boundary, counting UTF-8 bytes', () => {
    const value = keywordValue('é'.repeat(2_000));
    expect(utf8Bytes(value)).toBeLessThanOrEqual(KEYWORD_MAX_BYTES);
    expect(value.endsWith('…')).toBe(true);
    expect(keywordValue('short')).toBe('short');
  });

  it('upserts only the attributes that changed', () => {
    const before = { process: 'org-migration', org: 'octo-org', state: 'pending' };
    const updates = searchAttributeUpdates(before, { ...before, state: 'exporting' });
    expect(updates.map((u) => [u.key.name, u.value])).toEqual([['LonghaulState', 'exporting']]);
    expect(searchAttributeUpdates(before, before)).toEqual([]);
  });
});
