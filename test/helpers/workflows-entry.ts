/**
 * The workflow bundle's entry as the worker bundles it (written from the list of processes by `workflowsEntry`),
 * loaded in Node: every workflow function and every Update, Signal and Query definition it exports, by name. What
 * the tests read instead of a hand-kept list.
 */
import { workflowsEntry } from '../../src/processes';
import { workflowsEntryFile } from '../../src/temporal/workflow-bundle';

export async function bundleEntry(): Promise<Readonly<Record<string, unknown>>> {
  return (await import(workflowsEntryFile(workflowsEntry()))) as Record<string, unknown>;
}
