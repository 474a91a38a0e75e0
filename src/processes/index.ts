/**
 * The processes longhaul runs: the one list. Adding a process is its folder (with its `process.ts` descriptor)
 * and one line here (docs/architecture.md, "Adding a process"); the worker's activities, the workflow bundle's
 * entry, the `longhaul` program's commands, the lifecycle commands' texts, the process names and the failure
 * registry's table in docs/failures.md are built from this list, and the unit tests check the search attributes
 * against it.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import type { Workflow } from '@temporalio/common';
import type { ActivityDeps } from '../activities/context';
import type { CliContext } from '../cli/kit/context';
import type { ActivityFunctions, AnyProcess, CommandGroup, ProcessKind } from './descriptor';
import { orgMigrationProcess } from './org-migration/process';
import { sourceImportProcess } from './source-import/process';
import { googleOperationProcess } from './google-operation/process';
import { feedPollProcess } from './feed-poll/process';
import { hookRepairProcess } from './hook-repair/process';
import { rateGovernorProcess } from './rate-governor/process';
import { scheduledRunProcess } from './scheduled-run/process';
import { backupProcess } from './org-backup/process';

/** Every process, in the order its commands appear in `longhaul --help`. */
export const PROCESSES = [
  orgMigrationProcess,
  sourceImportProcess,
  googleOperationProcess,
  feedPollProcess,
  hookRepairProcess,
  rateGovernorProcess,
  scheduledRunProcess,
  backupProcess,
] as const satisfies readonly AnyProcess[];

/** Two processes define an activity of the same name: the worker would run one in place of the other. */
export class ActivityNameClash extends Error {
  override readonly name = 'ActivityNameClash';
  constructor(
    readonly activity: string,
    readonly processes: readonly [string, string],
  ) {
    super(`activity ${JSON.stringify(activity)} is defined by both ${processes[0]} and ${processes[1]}: rename one (histories record activity names, so rename the new one)`);
  }
}

/**
 * The activities of `processes` in one namespace, as the worker registers them. An activity name two processes
 * define is refused (`ActivityNameClash`) when the worker starts, before it polls.
 */
export async function processActivities(deps: ActivityDeps, processes: readonly AnyProcess[] = PROCESSES): Promise<Record<string, ActivityFunctions[string]>> {
  const merged: Record<string, ActivityFunctions[string]> = {};
  const owner = new Map<string, string>();
  for (const process of processes as readonly AnyProcess[]) {
    const create = await process.activities?.();
    for (const [name, fn] of Object.entries<ActivityFunctions[string]>(create?.(deps) ?? {})) {
      const first = owner.get(name);
      if (first !== undefined) throw new ActivityNameClash(name, [first, process.name]);
      owner.set(name, process.name);
      merged[name] = fn;
    }
  }
  return merged;
}

/**
 * The workflow bundle's entry, written from the list (the worker bundles it: `workflowBundleOptions` in
 * src/worker.ts): for each process, its `failures.ts` (its groups of the failure registry: loading them completes
 * the registry the workflow kit judges with, before any workflow runs) and its `workflow.ts` (`export *`: its
 * workflows, a function's name its workflow type, and their Update, Signal and Query definitions). Only these two
 * deterministic files of a folder, never its descriptor: workflow code must not load activities or commands
 * (`undici`, `node:fs`, `commander`). Imports are absolute paths, so the entry may be bundled from anywhere.
 */
export function workflowsEntry(processes: readonly AnyProcess[] = PROCESSES): string {
  const module = (p: AnyProcess, file: string) => JSON.stringify(join(__dirname, p.name, file));
  return [
    '// The workflow bundle\'s entry, written from PROCESSES by workflowsEntry (src/processes/index.ts).',
    ...processes.filter((p) => (p.failures ?? []).length > 0).map((p) => `import ${module(p, 'failures')};`),
    ...processes.filter((p) => p.workflows.length > 0).map((p) => `export * from ${module(p, 'workflow')};`),
    '',
  ].join('\n');
}

/** Every workflow function of every process (a function's name is its workflow type). */
export function processWorkflows(): Workflow[] {
  return PROCESSES.flatMap((p): readonly Workflow[] => p.workflows);
}

/** Every process name (the `LonghaulProcess` values), in the list's order: the `list --process` choices. */
export const PROCESS_NAMES: readonly string[] = PROCESSES.flatMap((p: AnyProcess) => p.processNames);

/** What the lifecycle commands print of each workflow type. */
export const PROCESS_KINDS: Readonly<Record<string, ProcessKind>> = Object.assign({}, ...PROCESSES.map((p: AnyProcess) => p.kinds ?? {}));

/** Registers the commands of every process in `group`, in the list's order. */
export function registerProcessCommands(program: Command, ctx: () => CliContext, group: CommandGroup): void {
  for (const p of PROCESSES as readonly AnyProcess[]) if (p.commands?.group === group) p.commands.register(program, ctx);
}
