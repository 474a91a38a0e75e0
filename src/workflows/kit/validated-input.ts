/**
 * The one entry of every workflow: `validatedWorkflow(check, body)` checks the input before the body reads any
 * field of it. Whoever can start a workflow chooses its input (a teammate, a CI job, the UI's "start workflow"),
 * so null, a string, an array, `{}`, a 10,000-deep or a huge object must end the run at once, FAILED with the
 * process's typed, non-retryable `Invalid…Input`, in the first workflow task and before any activity: never a
 * TypeError that fails every workflow task for ever (RUNNING, nothing typed).
 *
 * The checks, in order, each one message listing the problems:
 * 1. the input is a plain object, nested at most `MAX_INPUT_DEPTH` levels (walked without recursion, so a deep
 *    input cannot overflow the stack of the check itself);
 * 2. the process's own first check, where it has one with a type of its own (a migration's `archiveTo`, what an
 *    input may no longer carry: `trusted-inputs.ts`); it may hand on a replacement input, for a run of an earlier
 *    release carrying what is now refused (an import's `env:` reference, dropped, never resolved);
 * 3. the process's valibot schema (the one the CLI runs too).
 * A valid input reaches the body unchanged (the schema's output is not used): the commands it produces are the
 * ones it produced before, and every recorded history replays. The bundle's entry exports only functions
 * made here (test/unit/validated-workflows.test.ts holds it so).
 *
 * Workflow code: deterministic, no I/O.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { FailureSpec } from '../../common/failures';
import { problemsOf, type Schema } from '../../common/schema';

/** A group of the failure registry with an `InvalidInput` type: a process whose workflows take input (its `failures.ts`). */
export interface InputFailureGroup {
  readonly InvalidInput: FailureSpec;
}

/**
 * Levels of nesting an input may have. Longhaul's deepest input (a migration's carried status, a feed cursor's
 * outcome with its counters) nests 6 levels; 32 leaves room for growth and refuses the 10,000-deep object that
 * would otherwise reach JSON encoders and status code as it is.
 */
export const MAX_INPUT_DEPTH = 32;

/** How a workflow's input is checked. */
export interface InputCheck {
  /** What the input is, in the refusal's message: `invalid ${what}: …`. */
  what: string;
  /** The registry group whose `InvalidInput` type the refusal carries (`MIGRATION_FAILURES` → `InvalidMigrationInput`). */
  failures: InputFailureGroup;
  /** The input's schema: every field the body reads is checked by it. */
  schema: Schema;
  /**
   * A check made before the schema's, for problems that carry a type of their own (it throws its own
   * `ApplicationFailure`); it sees a plain object of bounded depth. What it returns, if anything, replaces the
   * input for the schema and the body.
   */
  first?: (input: Readonly<Record<string, unknown>>) => Record<string, unknown> | void;
}

/** Marks a function made by `validatedWorkflow`; the check it makes is the value. */
export const INPUT_CHECK: unique symbol = Symbol.for('longhaul.inputCheck');

/** A workflow function whose input is checked first. */
export type ValidatedWorkflow<I, R> = ((input: I) => Promise<R>) & { readonly [INPUT_CHECK]: InputCheck };

/** Why `input` is not a plain object of bounded depth, or undefined when it is one. */
export function inputShapeProblem(input: unknown, maxDepth = MAX_INPUT_DEPTH): string | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return `input must be an object (got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input})`;
  }
  // Breadth first, one level at a time: no recursion, and every value is visited once.
  let level: object[] = [input];
  for (let depth = 1; level.length > 0; depth++) {
    if (depth > maxDepth) return `input must nest at most ${maxDepth} levels of objects and arrays`;
    const next: object[] = [];
    for (const value of level) {
      for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) next.push(child);
    }
    level = next;
  }
  return undefined;
}

/** The refusal: the process's `InvalidInput`, non-retryable, with the problems as details. */
function refusal(check: InputCheck, problems: string[]): ApplicationFailure {
  const type = check.failures.InvalidInput.type;
  return ApplicationFailure.nonRetryable(`invalid ${check.what}: ${problems.join('; ')}`, type, { problems });
}

/**
 * The workflow `body` behind its input check (see the module's comment). `type` is the workflow type, the name it
 * is exported under (clients that start a workflow by its function read the function's `name`, which is `type`).
 */
export function validatedWorkflow<I, R>(type: string, check: InputCheck, body: (input: I) => Promise<R>): ValidatedWorkflow<I, R> {
  const entry = async (input: I): Promise<R> => {
    const shape = inputShapeProblem(input);
    if (shape !== undefined) throw refusal(check, [shape]);
    const admitted = (check.first?.(input as Record<string, unknown>) ?? input) as I;
    const problems = problemsOf(check.schema, admitted);
    if (problems.length > 0) throw refusal(check, problems);
    return body(admitted);
  };
  Object.defineProperty(entry, 'name', { value: type });
  Object.defineProperty(entry, INPUT_CHECK, { value: check });
  return entry as ValidatedWorkflow<I, R>;
}
