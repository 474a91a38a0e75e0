/**
 * How a backup run divides an organization into exports (issue 38), pure and deterministic (the workflow runs
 * it; so do the unit tests and the planning activity).
 *
 * - **Balanced by size.** `ceil(n / perExport)` exports; repositories are taken largest first and each goes to
 *   the export with the least total size that still has room (longest-processing-time first, with a cap on the
 *   count). GitHub's export time grows with the content, so exports of like size end at like times and the
 *   concurrency bound is used evenly; no export holds more than `perExport` repositories.
 * - **Halving.** An export that GitHub ends `failed` is split in two halves of like size, each exported again,
 *   down to one repository: the one that fails is found in `2·⌈log2 k⌉` further exports at most for an export
 *   of k repositories, and every other repository of it is backed up.
 */

/** What the planner needs of a listed repository. */
export interface ListedRepository {
  name: string;
  /** @format kilobytes — GitHub's `size`. */
  size: number;
}

/** GitHub's hard maximum of repositories in one export. */
export const GITHUB_MAX_REPOSITORIES_PER_EXPORT = 5_000;

/**
 * The default: 100 repositories an export (docs/backups.md, "Export size"). Small enough that a failed export
 * costs at most 14 more exports (7 halvings, two halves each) and that one export's archive stays in the range
 * GitHub produces in minutes; large enough that 12,000 repositories are 120 exports, each polled quietly.
 */
export const DEFAULT_REPOS_PER_EXPORT = 100;

/** The exports of a run: each a list of repository names, balanced by size, at most `perExport` each. */
export function planExports(repositories: readonly ListedRepository[], perExport: number): string[][] {
  if (!Number.isInteger(perExport) || perExport < 1 || perExport > GITHUB_MAX_REPOSITORIES_PER_EXPORT) {
    throw new RangeError(`repositories per export must be a whole number from 1 to ${GITHUB_MAX_REPOSITORIES_PER_EXPORT} (got ${perExport})`);
  }
  if (repositories.length === 0) return [];
  const count = Math.ceil(repositories.length / perExport);
  // Not `exports`: in the compiled CommonJS that name is the module's own (the bench's worker failed on it).
  const planned = Array.from({ length: count }, () => ({ names: [] as string[], size: 0 }));
  // Largest first; ties by name so the plan does not depend on the listing's order.
  const sorted = [...repositories].sort((a, b) => b.size - a.size || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const repo of sorted) {
    let best = -1;
    for (let i = 0; i < count; i++) {
      const e = planned[i];
      if (e.names.length >= perExport) continue;
      if (best === -1 || e.size < planned[best].size) best = i;
    }
    planned[best].names.push(repo.name);
    planned[best].size += Math.max(0, repo.size);
  }
  return planned.map((e) => e.names.sort());
}

/** The two halves (first half one longer when odd) an export is split into when GitHub ends it `failed`. */
export function halves(names: readonly string[]): [string[], string[]] {
  if (names.length < 2) throw new RangeError('an export of one repository cannot be split');
  const mid = Math.ceil(names.length / 2);
  return [names.slice(0, mid), names.slice(mid)];
}
