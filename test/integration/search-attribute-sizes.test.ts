/**
 * Issue 31, item 1, on the real dev server: the server measures a search attribute's value as its encoded
 * payload (the JSON text: quotes and escapes included), so a Keyword of 2,047 bytes is refused as 2,049 and the
 * workflow that upserts it is TERMINATED (BadSearchAttributes). Every value longhaul sets goes through one rule
 * (`src/common/search-attributes.ts`); these migrations probe it where it matters: lists whose text lands on
 * every byte count from the limit − 16 to the limit and around longhaul's own budget, 5,000 repositories, and
 * values full of multi-byte characters and characters JSON escapes (GitHub names hold neither, so they come
 * from the API: an export state and a GUID no documentation names).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import type { OrgMigrationInput } from '../../src/processes/org-migration/model';
import { KEYWORD_BUDGET_BYTES, KEYWORD_MAX_BYTES, LonghaulMigrationGuid, LonghaulState, LonghaulTarget, summarizeList } from '../../src/common/search-attributes';
import { defaultGithubFixture } from '../../packages/emulator/src/github/fixture';
import { useStack } from '../helpers/stack';
import { runtimeLog } from '../helpers/temporal';
import { FAST_POLL } from '../helpers/presets';

/** What the server measures: the bytes of the value's JSON text (measured here with Node, not the rule under test). */
const payloadBytes = (value: string) => Buffer.byteLength(JSON.stringify(value));
const NAMES_PER_LIST = 22;

/** `NAMES_PER_LIST` valid repository names whose ", "-joined text is exactly `bytes` bytes long. */
function listOfBytes(bytes: number): string[] {
  const nameBytes = bytes - 2 * (NAMES_PER_LIST - 1);
  const base = Math.floor(nameBytes / NAMES_PER_LIST);
  return Array.from({ length: NAMES_PER_LIST }, (_, i) => {
    const length = base + (i < nameBytes % NAMES_PER_LIST ? 1 : 0);
    return `s${bytes}-${i}-`.padEnd(length, 'x');
  });
}

// The old limit's last 16 bytes, and the budget's edges (the text's payload is its length + 2 quotes).
const SWEEP = [
  ...Array.from({ length: 17 }, (_, i) => KEYWORD_MAX_BYTES - 16 + i),
  KEYWORD_BUDGET_BYTES - 3,
  KEYWORD_BUDGET_BYTES - 2,
  KEYWORD_BUDGET_BYTES - 1,
];
const sweepLists = SWEEP.map((bytes) => ({ bytes, names: listOfBytes(bytes) }));
// 5,000 repositories (GitHub's maximum) named so that a summary measured without its quotes lands on 2,047 bytes.
const many = Array.from({ length: 5_000 }, (_, i) => `repo-${i}`);

const fixture = defaultGithubFixture();
let nextId = 300_000;
for (const name of [...sweepLists.flatMap((l) => l.names), ...many]) {
  fixture.repositories.push({ id: nextId++, name, owner: 'octo-org', private: false, workflowsEnabled: false });
}

const s = useStack({ emulator: { fixture, migrations: { exportMs: 300, archiveBytes: 4_096 } } });
const outcomes: string[] = [];
afterAll(() => console.log(`\nsearch attribute sizes on the dev server\n${outcomes.join('\n')}\n`));

function start(name: string, input: Partial<OrgMigrationInput> & { repositories: string[] }): Promise<WorkflowHandle<typeof orgMigration>> {
  return s.client.workflow.start(orgMigration, {
    taskQueue: s.taskQueue,
    workflowId: `sa-size-${name}-${Date.now()}`,
    args: [{ org: 'octo-org', poll: FAST_POLL, ...input }],
  });
}

/** Waits for the end; returns how it ended (TERMINATED included, which `result()` would only throw). */
async function ending(handle: WorkflowHandle<typeof orgMigration>) {
  await handle.result().catch(() => undefined);
  return handle.describe();
}

describe('search attribute values are measured as the server measures them (issue 31)', () => {
  it('lists whose text lands on every byte count from the limit − 16 to the limit, and around the budget, all run to the end', async () => {
    const handles = await Promise.all(sweepLists.map(({ bytes, names }) => start(`sweep-${bytes}`, { repositories: names })));
    const described = await Promise.all(handles.map(ending));
    const rows = described.map((d, i) => {
      const { bytes, names } = sweepLists[i];
      const target = d.typedSearchAttributes.get(LonghaulTarget);
      return { bytes, status: d.status.name, target, names };
    });
    outcomes.push(...rows.map((r) => `| list text ${r.bytes} bytes | ${r.status} | LonghaulTarget payload ${r.target === undefined ? '-' : payloadBytes(r.target)} bytes |`));
    expect(rows.filter((r) => r.status !== 'COMPLETED').map((r) => `${r.bytes}: ${r.status}`)).toEqual([]);
    for (const r of rows) {
      expect(r.target).toBe(summarizeList(r.names));
      expect(payloadBytes(r.target!)).toBeLessThanOrEqual(KEYWORD_BUDGET_BYTES);
      // Nothing is cut that fits: a list whose payload is within the budget is shown whole.
      if (r.bytes + 2 <= KEYWORD_BUDGET_BYTES) expect(r.target).toBe(r.names.join(', '));
      else expect(r.target).toMatch(/… \(\+\d+ more\)$/);
    }
  });

  it('a migration of 5,000 repositories starts and runs to the end, never TERMINATED', async () => {
    const started = Date.now();
    const handle = await start('5000', { repositories: many });
    const d = await ending(handle);
    const target = d.typedSearchAttributes.get(LonghaulTarget);
    outcomes.push(`| 5,000 repositories | ${d.status.name} | LonghaulTarget payload ${target === undefined ? '-' : payloadBytes(target)} bytes | ${Date.now() - started} ms |`);
    expect(d.status.name).toBe('COMPLETED');
    expect(target).toMatch(/^repo-0, repo-1, .*… \(\+[\d,]+ more\)$/);
    expect(payloadBytes(target!)).toBeLessThanOrEqual(KEYWORD_BUDGET_BYTES);
  });

  const strange = [
    // One ASCII letter first: cut by its UTF-8 length alone, this lands on 2,047 bytes (2,049 with its quotes).
    ['multi-byte characters (3 bytes each)', `a${'漢'.repeat(700)}`],
    ['characters of 4 bytes (surrogate pairs in JavaScript)', '🚀'.repeat(600)],
    ['quotes and backslashes (escaped: twice the bytes)', '"\\'.repeat(700)],
    ['control characters (escaped: up to six times the bytes)', 'exporting\u0001\n\t'.repeat(150)],
  ] as const;
  for (const [what, state] of strange) {
    it(`an export state of ${what} is shown cut to fit, and the migration runs to the end`, async () => {
      s.emulator.setFaults([{ kind: 'field-value', field: 'state', value: state, method: 'POST', path: '/orgs/:org/migrations', afterProcessing: true, times: 1 }]);
      const handle = await start(`state-${strange.findIndex(([w]) => w === what)}`, { repositories: ['alpha'] });
      const d = await ending(handle);
      const upserted = await shownStates(handle);
      outcomes.push(`| state of ${what} (${payloadBytes(state)} bytes encoded) | ${d.status.name} | largest LonghaulState payload ${Math.max(...upserted.map(payloadBytes))} bytes |`);
      expect(d.status.name).toBe('COMPLETED');
      const shown = upserted.find((v) => v.endsWith('…'));
      expect(shown, 'the strange state was upserted, cut').toBeDefined();
      expect(state.startsWith(shown!.slice(0, -1))).toBe(true);
      for (const v of upserted) expect(payloadBytes(v)).toBeLessThanOrEqual(KEYWORD_BUDGET_BYTES);
    });
  }

  it('a migration GUID too long for a Keyword is not recorded, and the migration still runs to the end', async () => {
    const guid = '"'.repeat(1_500);
    s.emulator.setFaults([{ kind: 'field-value', field: 'guid', value: guid, method: 'POST', path: '/orgs/:org/migrations', afterProcessing: true, times: 1 }]);
    const handle = await start('guid', { repositories: ['beta'] });
    const d = await ending(handle);
    outcomes.push(`| GUID of ${payloadBytes(guid)} bytes encoded | ${d.status.name} | LonghaulMigrationGuid ${d.typedSearchAttributes.get(LonghaulMigrationGuid) ?? 'not recorded'} |`);
    expect(d.status.name).toBe('COMPLETED');
    expect(d.typedSearchAttributes.get(LonghaulMigrationGuid)).toBeUndefined();
    const warned = runtimeLog.filter((e) => e.meta?.event === 'search-attribute-left-out' && e.meta?.workflowId === handle.workflowId);
    expect(warned.map((e) => e.meta?.leftOut)).toEqual([`LonghaulMigrationGuid (3,002 bytes encoded, over the limit of ${KEYWORD_BUDGET_BYTES})`]);
  });
});

/** Every LonghaulState value the workflow upserted, in order, read from its history. */
async function shownStates(handle: WorkflowHandle<typeof orgMigration>): Promise<string[]> {
  const history = await handle.fetchHistory();
  const values: string[] = [];
  for (const event of history.events ?? []) {
    const field = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.[LonghaulState.name];
    if (field?.data) values.push(JSON.parse(Buffer.from(field.data).toString('utf8')) as string);
  }
  return values;
}
