/** Issue 38: a backup's plan (exports balanced by size, at most N repositories each) and the halving of a failed export. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_REPOS_PER_EXPORT, halves, planExports } from '../../src/processes/org-backup/plan';
import { backupInputProblems, runStamp, stampTime, runFolderUrl } from '../../src/processes/org-backup/model';

const repos = (n: number, size: (i: number) => number) => Array.from({ length: n }, (_, i) => ({ name: `repo-${String(i + 1).padStart(5, '0')}`, size: size(i + 1) }));

describe('the plan of a backup run', () => {
  it('puts every repository in exactly one export of at most N, in ceil(n/N) exports', () => {
    const listed = repos(1_234, (i) => (i * 7919) % 5_000);
    const plan = planExports(listed, 100);
    expect(plan).toHaveLength(13);
    expect(Math.max(...plan.map((e) => e.length))).toBeLessThanOrEqual(100);
    const all = plan.flat();
    expect(all).toHaveLength(1_234);
    expect(new Set(all).size).toBe(1_234);
    expect(new Set(all)).toEqual(new Set(listed.map((r) => r.name)));
  });

  it('balances the exports by size: the largest total is within the largest repository of the smallest', () => {
    // Skewed: a few 50 MB repositories among many small ones, as organizations are.
    const listed = repos(1_000, (i) => (i % 97 === 0 ? 50_000 : i % 10 === 0 ? 5_000 : 1 + ((i * 7919) % 900)));
    const size = new Map(listed.map((r) => [r.name, r.size]));
    const totals = planExports(listed, 100).map((e) => e.reduce((n, name) => n + size.get(name)!, 0));
    const biggest = Math.max(...listed.map((r) => r.size));
    expect(Math.max(...totals) - Math.min(...totals)).toBeLessThanOrEqual(biggest);
    // Splitting by position instead would not be: the 50 MB repositories fall where they fall.
    const naive = Array.from({ length: 10 }, (_, k) => listed.slice(k * 100, k * 100 + 100).reduce((n, r) => n + r.size, 0));
    expect(Math.max(...naive) - Math.min(...naive)).toBeGreaterThan(Math.max(...totals) - Math.min(...totals));
  });

  it('is the same plan whatever the listing order', () => {
    const listed = repos(345, (i) => i % 13);
    expect(planExports([...listed].reverse(), 50)).toEqual(planExports(listed, 50));
  });

  it('refuses a size per export outside 1..5000 and plans nothing for an empty organization', () => {
    expect(() => planExports(repos(3, () => 1), 0)).toThrow(/from 1 to 5000/);
    expect(() => planExports(repos(3, () => 1), 5_001)).toThrow(/from 1 to 5000/);
    expect(planExports([], DEFAULT_REPOS_PER_EXPORT)).toEqual([]);
  });
});

describe('halving a failed export', () => {
  it('finds the one bad repository of 100 in at most 2·ceil(log2 100) = 14 more exports, and backs up every other', () => {
    const names = repos(100, () => 1).map((r) => r.name);
    const bad = 'repo-00042';
    let exports = 1;
    const queue = [names];
    const stored: string[] = [];
    const failed: string[] = [];
    // The first export (all 100) failed; each failing set is halved, as the workflow does.
    queue.splice(0, 1, ...halves(names));
    while (queue.length) {
      const set = queue.shift()!;
      exports++;
      if (!set.includes(bad)) stored.push(...set);
      else if (set.length === 1) failed.push(set[0]);
      else queue.push(...halves(set));
    }
    expect(failed).toEqual([bad]);
    expect(stored.sort()).toEqual(names.filter((n) => n !== bad));
    expect(exports - 1).toBeLessThanOrEqual(14);
  });

  it('splits into two halves, the first one longer when odd; one repository cannot be split', () => {
    expect(halves(['a', 'b', 'c'])).toEqual([['a', 'b'], ['c']]);
    expect(() => halves(['a'])).toThrow(/cannot be split/);
  });
});

describe('the run folder and the input', () => {
  it('names a run folder by its start, UTC, and reads it back', () => {
    const at = Date.UTC(2026, 10, 28, 2, 0, 7);
    expect(runStamp(at)).toBe('20261128T020007Z');
    expect(stampTime('20261128T020007Z')).toBe(at);
    expect(stampTime('latest')).toBeUndefined();
    expect(runFolderUrl('s3://backups/github', 'octo-org', at)).toBe('s3://backups/github/octo-org/20261128T020007Z/');
  });

  it('refuses bad input with each problem named', () => {
    expect(backupInputProblems({ org: 'octo-org', archiveTo: 's3://backups/github' })).toEqual([]);
    expect(backupInputProblems({ org: 'octo-org', archiveTo: 'ftp://x/y' }).join('; ')).toMatch(/unknown scheme/);
    expect(backupInputProblems({ org: 'octo-org', archiveTo: 's3://backups/github', reposPerExport: 6_000 }).join('; ')).toMatch(/from 1 to 5000/);
    expect(backupInputProblems({ archiveTo: 's3://backups/github' }).length).toBeGreaterThan(0);
  });
});
