/**
 * The flags every start command shares — poll bounds, outage budget, credential — and what they become in the
 * workflow input. One place, so `--poll-max 30` means the same thing to a migration, an import and a Google
 * operation, and each command's help shows its own process's defaults.
 *
 * `--poll-fraction` is the trade-off between detection delay and requests made explicit: the interval grows to
 * that share of the time waited, so a finished process is seen at most that share of its wait late (or one
 * first interval, when larger), and a higher share makes fewer polls (docs/benchmarks.md "Poll cost per wait").
 */
import type { Command } from 'commander';
import type { PollBounds, ResolvedPollBounds } from '../../common/poll-schedule';
import { CREDENTIAL_OPTION_HELP, credentialName, percentOfWait, positiveSeconds } from './arguments';

export interface PollFlags {
  pollInitial?: number;
  pollMax?: number;
  /** The share of the time waited the interval grows to (0–1; the flag takes percent). */
  pollFraction?: number;
  pollTimeout?: number;
  outageBudget?: number;
  credential?: string;
}

export interface PollOptionsHelp {
  /** The process's own defaults, shown in `--help`. */
  defaults: ResolvedPollBounds;
  /** Offer `--poll-timeout` (processes whose polling may give up while the work continues on the server). */
  timeout?: boolean;
}

const seconds = (ms: number) => `${ms / 1000}`;
const percent = (fraction: number | undefined) => `${Math.round((fraction ?? 0) * 1000) / 10}`;
const hours = (ms: number) => `${ms / 3_600_000} h`;

/**
 * Adds `--poll-initial`, `--poll-max`, `--poll-fraction`, [`--poll-timeout`], `--outage-budget` and
 * `--credential` to a command.
 */
export function withPollOptions(command: Command, help: PollOptionsHelp): Command {
  const { defaults } = help;
  command
    .option('--poll-initial <seconds>', `first poll interval (default ${seconds(defaults.initialIntervalMs)})`, positiveSeconds)
    .option('--poll-max <seconds>', `largest poll interval (default ${seconds(defaults.maxIntervalMs)})`, positiveSeconds)
    .option(
      '--poll-fraction <percent>',
      `let the interval grow to this share of the time waited: the end is seen at most that share of the wait ` +
        `late (or one first interval); higher = fewer requests (default ${percent(defaults.elapsedFraction)})`,
      percentOfWait,
    );
  if (help.timeout) {
    command.option(
      '--poll-timeout <seconds>',
      `give up polling after this long (default ${hours(defaults.timeoutMs)}); the work continues on the server`,
      positiveSeconds,
    );
  }
  return command
    .option('--outage-budget <seconds>', 'how long failing API calls are waited out in a row (default 6 hours)', positiveSeconds)
    .option('--credential <name>', CREDENTIAL_OPTION_HELP, credentialName);
}

/** The input fields those flags set; a flag not given leaves its field out (the workflow's default applies). */
export function pollOptionsFrom(flags: PollFlags): { poll?: PollBounds; outage?: { budgetMs: number }; credential?: string } {
  const poll: PollBounds = {
    ...(flags.pollInitial ? { initialIntervalMs: flags.pollInitial * 1000 } : {}),
    ...(flags.pollMax ? { maxIntervalMs: flags.pollMax * 1000 } : {}),
    ...(flags.pollFraction ? { elapsedFraction: flags.pollFraction } : {}),
    ...(flags.pollTimeout ? { timeoutMs: flags.pollTimeout * 1000 } : {}),
  };
  return {
    ...(Object.keys(poll).length > 0 ? { poll } : {}),
    ...(flags.outageBudget ? { outage: { budgetMs: flags.outageBudget * 1000 } } : {}),
    ...(flags.credential ? { credential: flags.credential } : {}),
  };
}
