/**
 * Validation first, by construction: every workflow the worker bundles (the entry written from the list of processes) is made by
 * `validatedWorkflow`, under its workflow type's name, so no workflow reads a field of an input it has not checked.
 * The integration side (each type started with null, a string, an array… through the client) is
 * test/integration/malformed-inputs.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../helpers/workflows-entry';
import { INPUT_CHECK, inputShapeProblem, MAX_INPUT_DEPTH, type InputCheck } from '../../src/workflows/kit/validated-input';
import { failureHandling } from '../../src/common/failures';
import { MAX_REPOSITORIES_PER_EXPORT, migrationInputProblems } from '../../src/processes/org-migration/model';


/** A value nested `depth` levels: `{ a: { a: … } }`. */
function nested(depth: number): object {
  let value: object = {};
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

describe('validated workflows', () => {
  /** The functions the workflow bundle's entry (written from the list of processes) exports: the workflow types. */
  let functions: [string, unknown][] = [];
  beforeAll(async () => {
    functions = Object.entries(await bundleEntry()).filter(([, value]) => typeof value === 'function');
  });

  it('exports only workflows whose input is checked first, each under its own name', () => {
    expect(functions.length).toBeGreaterThan(0);
    for (const [exported, fn] of functions) {
      const check = (fn as unknown as Record<symbol, InputCheck | undefined>)[INPUT_CHECK];
      expect(check, `${exported} is exported by the bundle's entry without validatedWorkflow`).toBeDefined();
      expect((fn as { name: string }).name, `${exported}'s function name is its workflow type`).toBe(exported);
      expect(failureHandling(check!.failures.InvalidInput.type), `${exported}'s InvalidInput is in the registry`).toBe('permanent');
    }
  });

  it('keeps every workflow type name running work and schedules use', () => {
    expect(functions.map(([name]) => name).sort()).toEqual(
      ['apiKeyDelete', 'dnsChange', 'feedCursor', 'feedPollRun', 'hookPing', 'hookRepair', 'logBucketCreate', 'logBucketUpdate', 'orgBackup', 'orgMigration', 'rateGovernor', 'sourceImport'].sort(),
    );
  });

  it.each([
    ['null', null, 'input must be an object (got null)'],
    ['a string', 'org', 'input must be an object (got string)'],
    ['a number', 7, 'input must be an object (got number)'],
    ['an array', [{ org: 'x' }], 'input must be an object (got an array)'],
  ])('refuses %s as an input before any schema runs', (_label, input, problem) => {
    expect(inputShapeProblem(input)).toBe(problem);
  });

  it('measures depth without recursion: a 10,000-deep object is refused, not a stack overflow', () => {
    expect(inputShapeProblem(nested(MAX_INPUT_DEPTH))).toBeUndefined();
    expect(inputShapeProblem(nested(MAX_INPUT_DEPTH + 1))).toBe(`input must nest at most ${MAX_INPUT_DEPTH} levels of objects and arrays`);
    expect(inputShapeProblem({ org: 'x', extra: nested(10_000) })).toMatch(/at most 32 levels/);
    // Arrays count as levels too.
    let array: unknown = [];
    for (let i = 0; i < 10_000; i++) array = [array];
    expect(inputShapeProblem({ list: array })).toMatch(/at most 32 levels/);
  });

  it('passes a wide, huge but shallow object through the shape check (the schema judges its fields)', () => {
    const wide = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, { v: i }]));
    expect(inputShapeProblem(wide)).toBeUndefined();
  });

  it(`refuses a migration of more than ${MAX_REPOSITORIES_PER_EXPORT} repositories, GitHub's maximum per export`, () => {
    const repos = (n: number) => Array.from({ length: n }, (_, i) => `repo-${i}`);
    expect(migrationInputProblems({ org: 'octo-org', repositories: repos(MAX_REPOSITORIES_PER_EXPORT) })).toEqual([]);
    expect(migrationInputProblems({ org: 'octo-org', repositories: repos(MAX_REPOSITORIES_PER_EXPORT + 1) })).toEqual([
      `repositories may name at most 5000 repositories, GitHub's maximum per export (got 5001): split them over several migrations`,
    ]);
  });
});
