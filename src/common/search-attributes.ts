/**
 * longhaul's custom search attributes: what a user filters and reads in the Temporal UI.
 * Registered on the embedded dev server at start; on another server, register them once with
 * `npx longhaul setup-namespace` or `temporal operator search-attribute create` (see docs/operations.md,
 * "Production stack").
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

/** Temporal's limit on one Keyword value. */
export const KEYWORD_MAX_BYTES = 2_048;

/** UTF-8 length of a string (no `TextEncoder` needed: this runs in workflows too). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** A Keyword value within Temporal's limit: cut at a character boundary, ending in "…" when cut. */
export function keywordValue(text: string, maxBytes = KEYWORD_MAX_BYTES): string {
  if (utf8Bytes(text) <= maxBytes) return text;
  let out = '';
  let used = utf8Bytes('…');
  for (const ch of text) {
    const size = utf8Bytes(ch);
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
 * A list as one Keyword value within the limit: as many items as fit, then "… (+4,998 more)".
 * `["alpha", "beta", …5,000 names]` → "alpha, beta, … (+4,998 more)".
 */
export function summarizeList(items: readonly string[], maxBytes = KEYWORD_MAX_BYTES): string {
  const all = items.join(', ');
  if (utf8Bytes(all) <= maxBytes) return all;
  let kept = 0;
  let used = 0;
  for (; kept < items.length; kept++) {
    const piece = utf8Bytes(items[kept]) + 2; // ", "
    const tail = utf8Bytes(`… (+${thousands(items.length - kept - 1)} more)`);
    if (used + piece + tail > maxBytes) break;
    used += piece;
  }
  const head = items.slice(0, kept).join(', ');
  return keywordValue(`${head}${kept > 0 ? ', ' : ''}… (+${thousands(items.length - kept)} more)`, maxBytes);
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

/** The upserts that take the attributes from `before` to `after` (only changed ones, Keywords within limits). */
export function searchAttributeUpdates(before: StatusAttributes, after: StatusAttributes) {
  const keywords = [
    [LonghaulProcess, 'process'],
    [LonghaulOrg, 'org'],
    [LonghaulTarget, 'target'],
    [LonghaulState, 'state'],
  ] as const;
  const updates: ({ key: typeof LonghaulProcess; value: string } | { key: typeof LonghaulProgress; value: number })[] = [];
  for (const [key, field] of keywords) {
    const value = after[field];
    if (value !== undefined && value !== before[field]) updates.push({ key, value: keywordValue(value) });
  }
  if (after.progress !== undefined && after.progress !== before.progress) updates.push({ key: LonghaulProgress, value: Math.round(after.progress) });
  return updates;
}
