/**
 * longhaul's custom search attributes: what a user filters and reads in the Temporal UI.
 * Registered on the embedded dev server at start; on another server, register them once with
 * `temporal operator search-attribute create` (see README).
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

export const ALL_SEARCH_ATTRIBUTES = [LonghaulProcess, LonghaulOrg, LonghaulState, LonghaulTarget, LonghaulProgress] as const;

/** `KEY=Type` arguments for `temporal server start-dev --search-attribute`. */
export function searchAttributeArgs(): string[] {
  const typeName: Record<string, string> = { KEYWORD: 'Keyword', INT: 'Int', TEXT: 'Text', BOOL: 'Bool', DOUBLE: 'Double', DATETIME: 'Datetime', KEYWORD_LIST: 'KeywordList' };
  return ALL_SEARCH_ATTRIBUTES.flatMap((key) => ['--search-attribute', `${key.name}=${typeName[key.type]}`]);
}
