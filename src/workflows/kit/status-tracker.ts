/**
 * The status tracker: one `describe(status)` per process (in the process's model file under `src/common/`,
 * shared with the CLI) feeds the `status` query, the UI's current details and the search attributes, so
 * the three never disagree. Search attributes are upserted only when they change (each upsert is a history
 * event), each through the one size rule (`upsertAttributes`).
 */
// The one place that upserts: everything else goes through upsertAttributes below.
// eslint-disable-next-line no-restricted-imports
import { defineQuery, log, setCurrentDetails, setHandler, upsertSearchAttributes, type QueryDefinition } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { fitSearchAttributes, searchAttributeUpdates, type StatusAttributes, type StatusView } from '../../common/search-attributes';

export type { StatusView } from '../../common/search-attributes';

export interface StatusTracker {
  /** Re-describes the status after the workflow changed it. */
  update(): void;
}

/**
 * The `status` query, which every longhaul workflow answers with its own status type: one name for all, so the
 * CLI's `status`, `wait --follow` and `watch` ask any process the same way (`statusQuery()` there, whose answer
 * is `unknown` until the process kind is known).
 */
export function statusQuery<S = unknown>(): QueryDefinition<S> {
  return defineQuery<S>('status');
}

export function trackStatus<S>(query: QueryDefinition<S>, status: S, describe: (status: S) => StatusView): StatusTracker {
  setHandler(query, () => status);
  let shown: StatusAttributes = {};
  const update = () => {
    const view = describe(status);
    // The SDK's typed pairs are a union per key type; ours are built from the same keys.
    upsertAttributes(searchAttributeUpdates(shown, view.attributes) as SearchAttributeUpdatePair[]);
    shown = { ...shown, ...view.attributes };
    setCurrentDetails(view.line);
  };
  update();
  return { update };
}

/**
 * Every search attribute upsert of a workflow: the values are fitted first (`fitSearchAttributes`), so a value
 * the server would refuse never reaches it (a refused upsert terminates the run). A Keyword that cannot fit
 * is left out with a warning; nothing is sent when nothing is left.
 */
export function upsertAttributes(pairs: SearchAttributeUpdatePair[]): void {
  const { pairs: fitted, leftOut } = fitSearchAttributes(pairs);
  if (leftOut.length > 0) log.warn(`search attributes left out, too long for the server: ${leftOut.join('; ')}`, { event: 'search-attribute-left-out', leftOut: leftOut.join('; ') });
  if (fitted.length > 0) upsertSearchAttributes(fitted);
}
