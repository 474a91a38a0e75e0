/**
 * The status tracker: one `describe(status)` per process (in the process's model file under `src/common/`,
 * shared with the CLI) feeds the `status` query, the UI's current details and the search attributes, so
 * the three never disagree. Search attributes are upserted only when they change (each upsert is a history
 * event) and kept within Temporal's Keyword limit.
 */
import { setCurrentDetails, setHandler, upsertSearchAttributes, type QueryDefinition } from '@temporalio/workflow';
import { searchAttributeUpdates, type StatusAttributes, type StatusView } from '../../common/search-attributes';

export type { StatusView } from '../../common/search-attributes';

export interface StatusTracker {
  /** Re-describes the status after the workflow changed it. */
  update(): void;
}

export function trackStatus<S>(query: QueryDefinition<S>, status: S, describe: (status: S) => StatusView): StatusTracker {
  setHandler(query, () => status);
  let shown: StatusAttributes = {};
  const update = () => {
    const view = describe(status);
    const updates = searchAttributeUpdates(shown, view.attributes);
    // The SDK's typed pairs are a union per key type; ours are built from the same keys.
    if (updates.length > 0) upsertSearchAttributes(updates as Parameters<typeof upsertSearchAttributes>[0]);
    shown = { ...shown, ...view.attributes };
    setCurrentDetails(view.line);
  };
  update();
  return { update };
}
