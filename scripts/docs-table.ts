/**
 * What the `npm run docs:…` scripts share: a table generated from the code, written between two markers of a docs
 * page, where a unit test compares it with the code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes `table` into `docs/<page>` between `begin` and `end` (the markers stay), and says so. */
export function writeDocsTable(page: string, begin: string, end: string, table: string, what: string): void {
  const path = join(__dirname, '..', 'docs', page);
  const text = readFileSync(path, 'utf8');
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/${page} has no ${begin} … ${end} markers`);
  writeFileSync(path, `${text.slice(0, from)}${begin}\n${table}\n${text.slice(to)}`);
  console.log(`docs/${page}: ${what} written`);
}
