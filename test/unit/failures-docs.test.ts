/**
 * The docs cannot drift from the failure registry (`src/common/failures.ts`): docs/failures.md's table is the
 * registry, row for row, and no page names a failure type the registry does not have.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAILURES, type FailureHandling, type FailureSpec } from '../../src/common/failures';

const DOCS = join(__dirname, '../../docs');
const PAGE = join(DOCS, 'failures.md');
const BEGIN = '<!-- failure-table: generated from src/common/failures.ts, checked by test/unit/failures-docs.test.ts -->';
const END = '<!-- /failure-table -->';

/** Who raises each group's failures, as the table says it. */
const RAISED_BY: Record<keyof typeof FAILURES, string> = {
  http: 'HTTP core',
  activity: 'any activity',
  outage: 'recurring runs',
  quietPoll: 'quiet polls',
  credential: 'credentials',
  path: 'data paths',
  migration: 'org migration',
  archive: 'archive download',
  objectStore: 'archive upload',
  import: 'source import',
  googleOperation: 'Google operations',
  feed: 'feed polling',
  sink: 'HTTP sink',
  hook: 'hook repair',
  backup: 'backup',
  governor: 'rate governor',
};

const HANDLING: Record<FailureHandling, string> = {
  permanent: 'permanent',
  'wait-as-told': 'wait as told',
  'back-off': 'back off',
  outage: 'outage',
};

/** The table as the registry makes it. */
function registryTable(): string {
  const rows = Object.entries(FAILURES).flatMap(([group, specs]) =>
    (Object.values(specs) as FailureSpec[]).map((spec) => `| \`${spec.type}\` | ${RAISED_BY[group as keyof typeof FAILURES]} | ${HANDLING[spec.handling]} | ${spec.meaning} |`),
  );
  return ['| Type | Raised by | Handling | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

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
    const begin = page.indexOf(BEGIN);
    const end = page.indexOf(END);
    expect(begin, `docs/failures.md has the marker ${BEGIN}`).toBeGreaterThanOrEqual(0);
    expect(page.slice(begin + BEGIN.length, end).trim(), 'docs/failures.md: paste this table between the markers').toBe(registryTable());
  });

  it('names no failure type on any page that the registry does not have', () => {
    const known = new Set(Object.values(FAILURES).flatMap((specs) => (Object.values(specs) as FailureSpec[]).map((s) => s.type)));
    const unknown: string[] = [];
    for (const file of readdirSync(DOCS).filter((f) => f.endsWith('.md'))) {
      for (const [, name] of readFileSync(join(DOCS, file), 'utf8').matchAll(/`([A-Za-z]+)`/g)) {
        if (FAILURE_LIKE.some((like) => like.test(name)) && !known.has(name) && !isCodeName(name)) unknown.push(`${file}: ${name}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
