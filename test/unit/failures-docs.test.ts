/**
 * The docs cannot drift from the failure registry (`src/common/failures.ts` and each process's `failures.ts`):
 * docs/failures.md's table is the registry, row for row (`npm run docs:failures` writes it), and no page names a
 * failure type the registry does not have.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allFailures } from '../../src/common/failures';
import { failuresTable, FAILURES_TABLE_BEGIN, FAILURES_TABLE_END, tableGroups } from '../../scripts/failures-table';

const DOCS = join(__dirname, '../../docs');
const PAGE = join(DOCS, 'failures.md');

/** Names in backticks that look like a failure type: how this project's failure types begin or end. */
const FAILURE_LIKE = [
  /^[A-Z][A-Za-z]+(Error|Failed|TimedOut|Input|Exhausted|Missing|Rejected|Unavailable|Gone|Busy|Loop|Denied|Unusable|Broken|Stopping|Answer|Credential|Ended|Unchanged|NotFound)$/,
  /^(Migration|Import|Archive|Feed|Sink|Hook|GoogleOperation|QuietPoll|Invalid|Outage)[A-Z][A-Za-z]*$/,
];
/** Names of that look that are not failure types: other errors (a codec's, the worker configuration's, the emulator's) and code names (schemas too). */
const NOT_FAILURE_TYPES = new Set(['CodecKeyError', 'CodecServerConfigError', 'ConfigError', 'EmulatorStateError', 'FeedFailure', 'MigrationFailure', 'OutageWatch', 'SinkReceiver']);
const isCodeName = (name: string) => NOT_FAILURE_TYPES.has(name) || name.endsWith('Schema');

describe('the docs and the failure registry', () => {
  it('docs/failures.md lists exactly the registry, in its order, with its handling and meaning', () => {
    const page = readFileSync(PAGE, 'utf8');
    const begin = page.indexOf(FAILURES_TABLE_BEGIN);
    const end = page.indexOf(FAILURES_TABLE_END);
    expect(begin, `docs/failures.md has the marker ${FAILURES_TABLE_BEGIN}`).toBeGreaterThanOrEqual(0);
    expect(page.slice(begin + FAILURES_TABLE_BEGIN.length, end).trim(), 'docs/failures.md is stale: run npm run docs:failures').toBe(failuresTable());
    // The table is the whole registry: every group once, none left out.
    expect(tableGroups().flatMap((g) => Object.values(g.specs))).toHaveLength(allFailures().length);
  });

  it('names no failure type on any page that the registry does not have', () => {
    const known = new Set(allFailures().map((s) => s.type));
    const unknown: string[] = [];
    for (const file of readdirSync(DOCS).filter((f) => f.endsWith('.md'))) {
      for (const [, name] of readFileSync(join(DOCS, file), 'utf8').matchAll(/`([A-Za-z]+)`/g)) {
        if (FAILURE_LIKE.some((like) => like.test(name)) && !known.has(name) && !isCodeName(name)) unknown.push(`${file}: ${name}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
