/** GitHub name rules and the search-attribute limits of the status tracker. */
import { describe, expect, it } from 'vitest';
import { isGithubLogin, isRepositoryName, loginSchema, RepositoryListSchema } from '../../src/common/github-names';
import { problemsOf } from '../../src/common/schema';
import { hookTargetProblems } from '../../src/processes/hook-repair/model';
import { isFeedProblem, parseFeed } from '../../src/processes/feed-poll/model';
import {
  fitSearchAttributes,
  KEYWORD_BUDGET_BYTES,
  keywordPayloadBytes,
  keywordValue,
  LonghaulMigrationGuid,
  LonghaulProgress,
  LonghaulTarget,
  searchAttributeUpdates,
  summarizeList,
} from '../../src/common/search-attributes';

/** What the server measures, computed with Node (not with the rule under test). */
const payloadBytes = (value: string) => Buffer.byteLength(JSON.stringify(value));

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
    expect(problemsOf(loginSchema(), 'a_b', 'org')[0]).toContain('org "a_b" is not a valid organization name');
    expect(problemsOf(loginSchema(), '', 'org')).toEqual(['org must be a non-empty organization name']);
    expect(problemsOf(RepositoryListSchema, ['alpha', 'Alpha', '..'], 'repositories')).toEqual([
      expect.stringContaining('repositories[2] ".." is not a valid repository name'),
      'repositories[1] Alpha is listed twice',
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
  it('summarises a long list within the budget, measured as its JSON payload, saying how many were left out', () => {
    const names = Array.from({ length: 5_000 }, (_, i) => `repository-${i}`);
    const value = summarizeList(names);
    expect(payloadBytes(value)).toBeLessThanOrEqual(KEYWORD_BUDGET_BYTES);
    expect(value.startsWith('repository-0, repository-1, ')).toBe(true);
    const shown = value.split(', ').filter((s) => s.startsWith('repository-')).length;
    expect(value.endsWith(`… (+${(5_000 - shown).toLocaleString('en-US')} more)`)).toBe(true);
    expect(summarizeList(['alpha', 'beta', 'gamma'])).toBe('alpha, beta, gamma');
  });

  it('keeps as many names as fit, for lists of every name length, and never one too many', () => {
    for (let length = 1; length <= 100; length++) {
      for (const count of [300, 5_000]) {
        const names = Array.from({ length: count }, (_, i) => `${i}-`.padEnd(length, 'r'));
        const value = summarizeList(names);
        expect(payloadBytes(value)).toBeLessThanOrEqual(KEYWORD_BUDGET_BYTES);
        if (value === names.join(', ')) continue;
        const shown = value.split(', ').length - 1;
        const oneMore = `${names.slice(0, shown + 1).join(', ')}, … (+${(count - shown - 1).toLocaleString('en-US')} more)`;
        if (shown < count) expect(payloadBytes(oneMore), `${count} names of ${length}`).toBeGreaterThan(KEYWORD_BUDGET_BYTES);
      }
    }
  });

  it('leaves a list whole when its payload fits the budget exactly, and cuts it one byte later', () => {
    const fits = ['a'.repeat(KEYWORD_BUDGET_BYTES - 2 - 2 - 6), 'beta-x']; // quotes, ", ", the second name
    expect(payloadBytes(fits.join(', '))).toBe(KEYWORD_BUDGET_BYTES);
    expect(summarizeList(fits)).toBe(fits.join(', '));
    expect(summarizeList([fits[0], 'beta-xy'])).toBe('… (+2 more)'); // the long name and the tail do not fit together
  });

  it('cuts a long value at a character boundary, counting what JSON makes of each character', () => {
    for (const text of ['é'.repeat(2_000), `a${'漢'.repeat(700)}`, '🚀'.repeat(600), '"\\'.repeat(700), 'x\u0001\n'.repeat(400), '\ud800'.repeat(400)]) {
      const value = keywordValue(text);
      expect(payloadBytes(value)).toBeLessThanOrEqual(KEYWORD_BUDGET_BYTES);
      expect(payloadBytes(value)).toBeGreaterThan(KEYWORD_BUDGET_BYTES - 12);
      expect(keywordPayloadBytes(value)).toBe(payloadBytes(value));
      expect(value.endsWith('…')).toBe(true);
      expect(text.startsWith(value.slice(0, -1))).toBe(true);
    }
    expect(keywordValue('short')).toBe('short');
  });

  it('keeps every Keyword value within the 255 characters SQL visibility stores (VARCHAR(255) on PostgreSQL and MySQL)', () => {
    // A longer value fails the visibility store's write: the workflow would drop out of list queries.
    const sqlVisibilityChars = 255;
    expect(summarizeList(Array.from({ length: 5_000 }, (_, i) => `repository-${i}`)).length).toBeLessThanOrEqual(sqlVisibilityChars);
    for (const text of ['x'.repeat(10_000), 'é'.repeat(10_000), '"\\'.repeat(5_000)]) expect(keywordValue(text).length).toBeLessThanOrEqual(sqlVisibilityChars);
  });

  it('fits every Keyword of a set, cuts none it can leave whole, and leaves out an exact-match value too long for the server', () => {
    const guid = '"'.repeat(1_500);
    const { pairs, leftOut } = fitSearchAttributes([
      { key: LonghaulTarget, value: '"'.repeat(1_200) },
      { key: LonghaulMigrationGuid, value: guid },
      { key: LonghaulProgress, value: 42 },
    ]);
    expect(pairs.map((p) => p.key.name)).toEqual(['LonghaulTarget', 'LonghaulProgress']);
    expect(payloadBytes(pairs[0].value as string)).toBeLessThanOrEqual(KEYWORD_BUDGET_BYTES);
    expect(pairs[1].value).toBe(42);
    expect(leftOut).toEqual([`LonghaulMigrationGuid (3,002 bytes encoded, over the limit of ${KEYWORD_BUDGET_BYTES})`]);
    // An exact-match value is never cut (a cut one would be false): whole up to the budget, left out beyond it,
    // since SQL visibility cannot store a longer one either.
    const fits = 'g'.repeat(KEYWORD_BUDGET_BYTES - 2);
    expect(fitSearchAttributes([{ key: LonghaulMigrationGuid, value: fits }]).pairs[0].value).toBe(fits);
    expect(fitSearchAttributes([{ key: LonghaulMigrationGuid, value: `${fits}g` }]).pairs).toEqual([]);
  });

  it('upserts only the attributes that changed', () => {
    const before = { process: 'org-migration', org: 'octo-org', state: 'pending' };
    const updates = searchAttributeUpdates(before, { ...before, state: 'exporting' });
    expect(updates.map((u) => [u.key.name, u.value])).toEqual([['LonghaulState', 'exporting']]);
    expect(searchAttributeUpdates(before, before)).toEqual([]);
  });
});
