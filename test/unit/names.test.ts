/**
 * Names that running work and dashboards hold: message names, workflow types and process names are each defined
 * once (each process's workflow.ts and names.ts) and used through that definition. The replay test checks the
 * names recorded runs used; this one the rest, and the CLI's use of the process registry.
 */
import { describe, expect, it } from 'vitest';
import { CommanderError } from 'commander';
import { bundleEntry } from '../helpers/workflows-entry';
import { buildProgram } from '../../src/cli/program';
import { PROCESS_NAMES } from '../../src/processes';
import { governorWorkflowId, RATE_GOVERNOR_WORKFLOW } from '../../src/processes/rate-governor/model';
import { feedCursorWorkflowId, FEED_CURSOR_WORKFLOW } from '../../src/processes/feed-poll/model';
import { hookRepairScheduleId } from '../../src/processes/hook-repair/model';
import type { CliContext } from '../../src/cli/kit/context';


describe('names', () => {
  it('keeps every Update, Signal and Query name a running workflow answers to, each defined once per workflow', async () => {
    const messages = Object.entries(await bundleEntry()).flatMap(([exported, v]) =>
      typeof v === 'object' && v !== null && 'type' in v && 'name' in v ? [[exported, `${String(v.type)} ${String(v.name)}`]] : [],
    );
    // Running workflows (the rate governor and feed cursors never end) and every worker's activities call these
    // names: a change here breaks them, so it must be a deliberate one.
    expect(Object.fromEntries(messages)).toEqual({
      migrationStatusQuery: 'query status',
      importStatusQuery: 'query status',
      importCredentialsUpdate: 'update import-credentials',
      importChooseUpdate: 'update import-choose',
      importMapAuthorUpdate: 'update import-map-author',
      pollFeedUpdate: 'update pollFeed',
      stopFeedCursorSignal: 'signal stopFeedCursor',
      feedCursorStatusQuery: 'query status',
      hookRepairStatusQuery: 'query status',
      acquireUpdate: 'update acquire',
      reportSignal: 'signal report',
      limitsQuery: 'query limits',
      backupStatusQuery: 'query status',
    });
  });

  it('names the entity workflows after their process, as the ids of running ones are', () => {
    expect(governorWorkflowId('github')).toBe('rate-governor:github');
    expect(feedCursorWorkflowId('/repos/octo-org/alpha/events')).toBe('feed-cursor:/repos/octo-org/alpha/events');
    expect(hookRepairScheduleId({ org: 'Octo-Org' }, 7)).toBe('hook-repair:orgs/octo-org/hooks/7');
  });

  it('starts the workflows that activities start by name under the names of their functions', async () => {
    const workflows = (await bundleEntry()) as Record<string, { name: string }>;
    expect(RATE_GOVERNOR_WORKFLOW).toBe(workflows.rateGovernor.name);
    expect(FEED_CURSOR_WORKFLOW).toBe(workflows.feedCursor.name);
  });

  it('refuses a `list --process` that is no process, naming the ones there are, before connecting', async () => {
    const program = buildProgram((): CliContext => {
      throw new Error('connected to Temporal');
    });
    let said = '';
    for (const command of program.commands) command.configureOutput({ writeErr: (s) => (said += s), writeOut: () => undefined });
    const refused = await program.parseAsync(['node', 'longhaul', 'list', '--process', 'org-migrations']).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(CommanderError);
    expect((refused as CommanderError).code).toBe('commander.invalidArgument');
    for (const name of PROCESS_NAMES) expect(said).toContain(name);
  });
});
