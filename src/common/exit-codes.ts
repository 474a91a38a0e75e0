/**
 * The CLI's exit codes: one per way a command can end, so scripts can tell a failed migration from a
 * cancelled one, a typo or an unreachable server. `--help` prints `EXIT_CODES_HELP`.
 */
export const ExitCode = {
  Success: 0,
  /** The workflow failed, or the request was refused (not found, already running, update rejected). */
  Failed: 1,
  /** Usage error or invalid input: nothing was started or sent. */
  Usage: 2,
  Cancelled: 3,
  /** The workflow timed out, was terminated or continued as new past what we follow. */
  TimedOut: 4,
  /** Temporal could not be reached, or an internal error. */
  Unavailable: 5,
  /**
   * The namespace lacks what this release needs (a search attribute, or the namespace itself): a worker refused
   * to poll, `doctor` found it, or `setup-namespace` could not fix it (an attribute of another type).
   */
  NamespaceNotReady: 6,
} as const;

/** The exit code for a closed workflow's status name (`COMPLETED`, `FAILED`, …). */
export function exitCodeForStatus(status: string): number {
  switch (status) {
    case 'COMPLETED':
    case 'RUNNING':
      return ExitCode.Success;
    case 'CANCELLED':
      return ExitCode.Cancelled;
    case 'TIMED_OUT':
    case 'TERMINATED':
      return ExitCode.TimedOut;
    default:
      return ExitCode.Failed;
  }
}

export const EXIT_CODES_HELP = `
Exit codes:
  0  success (the workflow completed, or was started when not waiting)
  1  the workflow failed, or the request was refused (not found, already running, update rejected)
  2  usage error or invalid input (nothing was started)
  3  the workflow was cancelled
  4  the workflow timed out or was terminated
  5  Temporal could not be reached, or an internal error
  6  the namespace lacks what this release needs (search attributes): the worker did not poll;
     run \`longhaul setup-namespace\` (\`longhaul doctor\` says what is missing)

Output: stdout carries only the result; --json prints exactly one JSON object (errors too);
progress and logs go to stderr.`;
