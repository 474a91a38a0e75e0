/**
 * `npm run docs:failures`: writes the table of every failure type (the registry: the layers' groups in
 * `src/common/failures.ts`, then each process's `failures.ts` in the order of `PROCESSES`) into docs/failures.md,
 * between its markers; `test/unit/failures-docs.test.ts` fails when the two differ. A new process's failures reach
 * the page by running this, not by editing it.
 */
import { writeDocsTable } from './docs-table';
import { FAILURES, registeredGroup, type FailureGroup, type FailureHandling, type RegisteredGroup } from '../src/common/failures';
import { PROCESSES } from '../src/processes';

export const FAILURES_TABLE_BEGIN = '<!-- failure-table: npm run docs:failures writes it from the failure registry (src/common/failures.ts, src/processes/*/failures.ts) -->';
export const FAILURES_TABLE_END = '<!-- /failure-table -->';

const HANDLING: Record<FailureHandling, string> = {
  permanent: 'permanent',
  'wait-as-told': 'wait as told',
  'back-off': 'back off',
  outage: 'outage',
};

/** The registry's groups in the table's order: the layers', then each process's as `PROCESSES` lists them. */
export function tableGroups(): RegisteredGroup[] {
  const groups: FailureGroup[] = [...Object.values(FAILURES), ...PROCESSES.flatMap((p): readonly FailureGroup[] => p.failures ?? [])];
  return groups.map((specs) => {
    const group = registeredGroup(specs);
    if (!group) throw new Error(`a descriptor lists a failure table that is not a group of the registry (make it with failureGroup): ${Object.keys(specs).join(', ')}`);
    return group;
  });
}

export function failuresTable(): string {
  const rows = tableGroups().flatMap(({ raisedBy, specs }) => Object.values(specs).map((spec) => `| \`${spec.type}\` | ${raisedBy} | ${HANDLING[spec.handling]} | ${spec.meaning} |`));
  return ['| Type | Raised by | Handling | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** Writes the table into docs/failures.md (when run, not when a test imports the table). */
function write(): void {
  writeDocsTable('failures.md', FAILURES_TABLE_BEGIN, FAILURES_TABLE_END, failuresTable(), 'the table of failure types');
}

if (require.main === module) write();
