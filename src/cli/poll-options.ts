/**
 * The flags every start command shares — poll bounds, outage budget, credential — and what they become in the
 * workflow input. One place, so `--poll-max 30` means the same thing to a migration, an import and a Google
 * operation, and each command's help shows its own process's defaults.
 */
import type { Command } from 'commander';
import type { PollBounds, ResolvedPollBounds } from '../workflows/kit/poll-schedule';
import { CREDENTIAL_OPTION_HELP, credentialName, positiveSeconds } from './arguments';

export interface PollFlags {
  pollInitial?: number;
  pollMax?: number;
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
const hours = (ms: number) => `${ms / 3_600_000} h`;

/** Adds `--poll-initial`, `--poll-max`, [`--poll-timeout`], `--outage-budget` and `--credential` to a command. */
export function withPollOptions(command: Command, help: PollOptionsHelp): Command {
  const { defaults } = help;
  command
    .option('--poll-initial <seconds>', `first poll interval (default ${seconds(defaults.initialIntervalMs)})`, positiveSeconds)
    .option('--poll-max <seconds>', `largest poll interval (default ${seconds(defaults.maxIntervalMs)})`, positiveSeconds);
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
    ...(flags.pollTimeout ? { timeoutMs: flags.pollTimeout * 1000 } : {}),
  };
  return {
    ...(Object.keys(poll).length > 0 ? { poll } : {}),
    ...(flags.outageBudget ? { outage: { budgetMs: flags.outageBudget * 1000 } } : {}),
    ...(flags.credential ? { credential: flags.credential } : {}),
  };
}
