/**
 * longhaul's custom search attributes: what a user filters and reads in the Temporal UI.
 * Registered on the embedded dev server at start; on another server, register them once with
 * `npx longhaul setup-namespace` or `temporal operator search-attribute create` (see docs/operations.md,
 * "Production stack"). A worker checks them all, with their types, before it polls (docs/operations.md,
 * "Upgrading"): an attribute added here is one an upgrade must register.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The process kind (`org-migration`, `source-import`, …). */
export const LonghaulProcess = defineSearchAttributeKey('LonghaulProcess', SearchAttributeType.KEYWORD);
/** The GitHub organization or owner the process works on. */
export const LonghaulOrg = defineSearchAttributeKey('LonghaulOrg', SearchAttributeType.KEYWORD);
/** The remote resource's state as last seen (`exporting`, `importing`, `RUNNING`…). */
export const LonghaulState = defineSearchAttributeKey('LonghaulState', SearchAttributeType.KEYWORD);
/** A free-text target (repository, bucket, key or zone name). */
export const LonghaulTarget = defineSearchAttributeKey('LonghaulTarget', SearchAttributeType.KEYWORD);
/** Progress in percent, where the API reports one. */
export const LonghaulProgress = defineSearchAttributeKey('LonghaulProgress', SearchAttributeType.INT);

/**
 * The GUID of the GitHub migration a workflow created or adopted (GUIDs are unique across organizations and
 * servers, ids are not): a lookup after an unknown start outcome never adopts a migration another workflow
 * recorded here.
 */
export const LonghaulMigrationGuid = defineSearchAttributeKey('LonghaulMigrationGuid', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [LonghaulProcess, LonghaulOrg, LonghaulState, LonghaulTarget, LonghaulProgress, LonghaulMigrationGuid] as const;

/** `KEY=Type` arguments for `temporal server start-dev --search-attribute`. */
export function searchAttributeArgs(): string[] {
  const typeName: Record<string, string> = { KEYWORD: 'Keyword', INT: 'Int', TEXT: 'Text', BOOL: 'Bool', DOUBLE: 'Double', DATETIME: 'Datetime', KEYWORD_LIST: 'KeywordList' };
  return ALL_SEARCH_ATTRIBUTES.flatMap((key) => ['--search-attribute', `${key.name}=${typeName[key.type]}`]);
}

/**
 * Temporal's limit on one search attribute value, as the server measures it: the bytes of the value's encoded
 * payload, which for a Keyword is its JSON text (quotes, and escapes for `"`, `\\` and control characters,
 * included). A value over it fails the start, and an upsert over it TERMINATES the workflow (BadSearchAttributes).
 */
export const KEYWORD_MAX_BYTES = 2_048;
/**
 * What SQL visibility (PostgreSQL and MySQL, as in the compose stack) keeps of a custom Keyword: a `VARCHAR(255)`
 * column. The server accepts a longer value, but its visibility write of it then fails and is retried for ever,
 * and the workflow stays out of `list`, the lookups by key and the UI's filters (`npm run check:production-stack`).
 */
export const SQL_VISIBILITY_KEYWORD_CHARS = 255;
/**
 * What longhaul lets one Keyword's encoded payload take: SQL visibility's column, since a payload of 255 bytes
 * holds at most 253 characters. That is far enough below the server's limit that no encoder's escapes (Go's
 * writes `<`, `>`, `&` as six bytes each) bring a value near it. Changing it changes the values of upserts,
 * never which commands a workflow sends (replay compares an upsert's command, not its value).
 */
export const KEYWORD_BUDGET_BYTES = SQL_VISIBILITY_KEYWORD_CHARS;

/** UTF-8 length of a string (no `TextEncoder` needed: this runs in workflows too). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    // A lone surrogate is written as U+FFFD (3 bytes) by a UTF-8 encoder.
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** The bytes a Keyword value takes as the server measures it: its JSON text, quotes and escapes included. */
export function keywordPayloadBytes(value: string): number {
  return utf8Bytes(JSON.stringify(value));
}

/** The bytes a piece of text adds inside a Keyword's payload (its JSON text without the quotes). */
function encodedBytes(text: string): number {
  return keywordPayloadBytes(text) - 2;
}

/**
 * A Keyword value within `maxBytes` of encoded payload (default: the budget): cut at a character boundary,
 * ending in "…" when cut.
 */
export function keywordValue(text: string, maxBytes = KEYWORD_BUDGET_BYTES): string {
  if (keywordPayloadBytes(text) <= maxBytes) return text;
  let out = '';
  let used = keywordPayloadBytes('…');
  for (const ch of text) {
    const size = encodedBytes(ch);
    if (used + size > maxBytes) break;
    out += ch;
    used += size;
  }
  return `${out}…`;
}

/** 4998 → "4,998" (no locale data needed). */
function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * A list as one value within `maxBytes` of encoded payload (default: a Keyword's budget): as many items as fit,
 * then "… (+4,998 more)". `["alpha", "beta", …5,000 names]` → "alpha, beta, … (+4,998 more)".
 */
export function summarizeList(items: readonly string[], maxBytes = KEYWORD_BUDGET_BYTES): string {
  const all = items.join(', ');
  if (keywordPayloadBytes(all) <= maxBytes) return all;
  let kept = 0;
  let used = keywordPayloadBytes('');
  for (; kept < items.length; kept++) {
    const piece = encodedBytes(items[kept]) + 2; // ", "
    const tail = encodedBytes(`… (+${thousands(items.length - kept - 1)} more)`);
    if (used + piece + tail > maxBytes) break;
    used += piece;
  }
  const head = items.slice(0, kept).join(', ');
  return keywordValue(`${head}${kept > 0 ? ', ' : ''}… (+${thousands(items.length - kept)} more)`, maxBytes);
}

/**
 * Keywords compared for equality (`LonghaulMigrationGuid = '…'`): a cut value would be a false one, so such a
 * value is never cut; one too long for the server is left out instead.
 */
const EXACT_KEYWORDS: ReadonlySet<string> = new Set([LonghaulMigrationGuid.name]);

/** A search attribute as longhaul sets it: one of its Keywords, or `LonghaulProgress`. */
export type LonghaulAttribute = { key: typeof LonghaulProcess; value: string } | { key: typeof LonghaulProgress; value: number };

/** What `fitSearchAttributes` did: the pairs to send, and the Keywords left out because they cannot fit. */
export interface FittedAttributes<P> {
  pairs: P[];
  /** `LonghaulMigrationGuid (3,002 bytes encoded, over the limit of 255)`, one per value left out. */
  leftOut: string[];
}

/**
 * The one size rule for every search attribute value longhaul sets (at a start, on a Schedule, in an upsert):
 * a Keyword is measured as its encoded payload and cut to the budget; an exact-match Keyword that does not
 * fit the server's limit is left out. What is sent therefore never makes the server refuse a start or
 * terminate a run.
 */
export function fitSearchAttributes<P extends { key: { name: string; type: string }; value: unknown }>(pairs: readonly P[]): FittedAttributes<P> {
  const fitted: P[] = [];
  const leftOut: string[] = [];
  for (const pair of pairs) {
    if (pair.key.type !== SearchAttributeType.KEYWORD || typeof pair.value !== 'string') {
      fitted.push(pair);
      continue;
    }
    const value = EXACT_KEYWORDS.has(pair.key.name) ? pair.value : keywordValue(pair.value);
    const bytes = keywordPayloadBytes(value);
    if (bytes > KEYWORD_BUDGET_BYTES) leftOut.push(`${pair.key.name} (${thousands(bytes)} bytes encoded, over the limit of ${thousands(KEYWORD_BUDGET_BYTES)})`);
    else fitted.push(value === pair.value ? pair : { ...pair, value });
  }
  return { pairs: fitted, leftOut };
}

/** The search attributes a process shows, as its model file's `describe` computes them. */
export interface StatusAttributes {
  process?: string;
  org?: string;
  target?: string;
  state?: string;
  progress?: number;
}

/** What a process's `describe` returns for one status: one line (UI current details, CLI) and its attributes. */
export interface StatusView {
  line: string;
  attributes: StatusAttributes;
}

/** The upserts that take the attributes from `before` to `after` (only changed ones; `fitSearchAttributes` fits them). */
export function searchAttributeUpdates(before: StatusAttributes, after: StatusAttributes): LonghaulAttribute[] {
  const keywords = [
    [LonghaulProcess, 'process'],
    [LonghaulOrg, 'org'],
    [LonghaulTarget, 'target'],
    [LonghaulState, 'state'],
  ] as const;
  const updates: LonghaulAttribute[] = [];
  for (const [key, field] of keywords) {
    const value = after[field];
    if (value !== undefined && value !== before[field]) updates.push({ key, value });
  }
  if (after.progress !== undefined && after.progress !== before.progress) updates.push({ key: LonghaulProgress, value: Math.round(after.progress) });
  return updates;
}
