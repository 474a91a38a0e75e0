import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { pollOptionsFrom, withPollOptions, type PollFlags } from '../../src/cli/kit/poll-options';
import { DEFAULT_IMPORT_POLL } from '../../src/processes/source-import/model';
import { pollsToObserve, resolvePollBounds } from '../../src/common/poll-schedule';

/** Parses `args` with the shared poll flags of a command whose defaults are the import's. */
function parse(args: string[]): { flags?: PollFlags; error?: string } {
  let error: string | undefined;
  const command = withPollOptions(new Command('import'), { defaults: DEFAULT_IMPORT_POLL })
    .exitOverride()
    .configureOutput({ writeErr: (text) => (error = text.trim()), writeOut: () => {} });
  try {
    command.parse(args, { from: 'user' });
    return { flags: command.opts<PollFlags>() };
  } catch {
    return { error };
  }
}

describe('poll flags', () => {
  it('--poll-fraction sets the share of the wait the interval grows to, in the workflow input', () => {
    expect(pollOptionsFrom(parse(['--poll-fraction', '15']).flags!)).toEqual({ poll: { elapsedFraction: 0.15 } });
    expect(pollOptionsFrom(parse(['--poll-fraction', '25%', '--poll-initial', '60']).flags!)).toEqual({
      poll: { initialIntervalMs: 60_000, elapsedFraction: 0.25 },
    });
    // Without the flag the field stays out, so the process's own default applies.
    expect(pollOptionsFrom(parse(['--poll-max', '300']).flags!)).toEqual({ poll: { maxIntervalMs: 300_000 } });
  });

  it('trades detection delay for requests: a 60-minute import polls 37 times at the default 10 %, 28 at 15 %', () => {
    const at = (args: string[]) => resolvePollBounds(DEFAULT_IMPORT_POLL, pollOptionsFrom(parse(args).flags!).poll);
    expect(at([]).elapsedFraction).toBe(0.1);
    expect(pollsToObserve(60 * 60_000, at([]))).toBe(37);
    expect(pollsToObserve(60 * 60_000, at(['--poll-fraction', '15']))).toBe(28);
    expect(pollsToObserve(60 * 60_000, at(['--poll-fraction', '20']))).toBe(23);
  });

  it('refuses a share that is not a percentage above 0 and at most 100, naming the flag', () => {
    for (const bad of ['0', '-5', '101', 'ten', '']) {
      const { flags, error } = parse(['--poll-fraction', bad]);
      expect(flags).toBeUndefined();
      expect(error).toContain("option '--poll-fraction <percent>' argument");
      expect(error).toContain('must be a percentage above 0 and at most 100');
    }
  });

  it("shows the process's default share in the help", () => {
    const help = withPollOptions(new Command('import'), { defaults: DEFAULT_IMPORT_POLL }).helpInformation();
    expect(help.replace(/\s+/g, ' ')).toContain('higher = fewer requests (default 10)');
  });
});
