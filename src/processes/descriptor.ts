/**
 * What a process is to the rest of longhaul: each `src/processes/<name>/process.ts` exports one descriptor, and
 * `src/processes/index.ts` lists them. The worker takes its activities from the descriptors, the `longhaul` program
 * its commands and the lifecycle commands' texts, the docs' tables and their unit tests the rest; nothing below the
 * processes names one (the import-boundary lint, `npm run lint:layers`, holds that).
 *
 * Why a descriptor of our own and not a Temporal plugin (`SimplePlugin` of `@temporalio/plugin`): see
 * docs/architecture.md, "A process is a plugin".
 */
import type { Command } from 'commander';
import type { Workflow } from '@temporalio/common';
import type { ActivityDeps } from '../activities/context';
import type { CliContext } from '../cli/kit/context';
import type { StatusLine } from '../cli/kit/run-workflow';
import type { FailureGroup } from '../common/failures';
import type { ProcessName } from '../common/processes';
import type { ALL_SEARCH_ATTRIBUTES } from '../common/search-attributes';
import type { Summaries } from '../workflows/kit/activity-summaries';

/** A process's activities: functions by activity name (the name is what histories record). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ActivityFunctions = Record<string, (...args: any[]) => Promise<unknown>>;

/** What the lifecycle commands (status, wait, cancel, list, watch) print of one workflow type. */
export interface ProcessKind {
  /** The `LonghaulProcess` search attribute value of this kind. */
  process: string;
  /** One status line from the `status` query (and a running activity's heartbeat). */
  describeStatus?(status: unknown, heartbeat: unknown, workflowId: string): StatusLine;
  describeResult(result: unknown): string[];
  /** After a cancellation: what the cleanup did (e.g. "unlocked alpha, beta"), from the final status. */
  describeCleanup?(status: unknown): string;
}

/** One kind of Schedule a process creates: its id prefix and the workflow type each run starts. */
export interface ProcessSchedule {
  readonly idPrefix: string;
  readonly workflowType: string;
}

/** Where a process's commands go in `longhaul --help`: the start commands before the lifecycle commands, the rest after. */
export type CommandGroup = 'start' | 'inspect';

export interface ProcessDescriptor<A extends ActivityFunctions = ActivityFunctions> {
  /** The folder's name (`src/processes/<name>/`): what errors and the docs call the process. */
  readonly name: string;
  /** The `LonghaulProcess` values its workflows set (names of `Process`, src/common/processes.ts). */
  readonly processNames: readonly ProcessName[];
  /** Its workflow functions; a function's name is its workflow type. */
  readonly workflows: readonly Workflow[];
  /**
   * Loads the factory of its activities, which builds them from the worker's injected clients (absent: a process
   * without activities). Loaded by the worker only: the `longhaul` program reads the rest of the descriptor and
   * never loads what activities need (the storage SDKs, the worker runtime): 1.5 s of CPU of each command's 3.2 s.
   */
  readonly activities?: () => Promise<(deps: ActivityDeps) => A>;
  /** The UI's one-line summary of each activity: the table its workflows pass to `summarized`. */
  readonly summaries?: Summaries<A>;
  /** Its groups of the failure registry (its `failures.ts`, made with `failureGroup`): what docs/failures.md lists of it. */
  readonly failures?: readonly FailureGroup[];
  /** What the lifecycle commands print of its workflows, by workflow type. */
  readonly kinds?: Readonly<Record<string, ProcessKind>>;
  /** Registers its `longhaul` commands. */
  readonly commands?: { readonly group: CommandGroup; readonly register: (program: Command, ctx: () => CliContext) => void };
  /** The search attributes its workflows set or its commands filter on. */
  readonly searchAttributes?: readonly (typeof ALL_SEARCH_ATTRIBUTES)[number][];
  /** The Schedules it creates. */
  readonly schedules?: readonly ProcessSchedule[];
}

/** A descriptor whatever its activities (what lists of processes hold). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyProcess = ProcessDescriptor<any>;

/** A descriptor, its activities' type checked against its summaries. */
export function defineProcess<A extends ActivityFunctions>(descriptor: ProcessDescriptor<A>): ProcessDescriptor<A> {
  return descriptor;
}
