/**
 * `limits`: the fleet's shared rate budgets, read from each credential's `rate-governor:<name>` workflow
 * (a Query: nothing is written).
 *
 *   npm run starter -- limits                  # every credential with a running governor
 *   npm run starter -- limits --credential github [--json]
 */
import type { Command } from 'commander';
import type { Client } from '@temporalio/client';
import { describeGovernor, governorWorkflowId, limitsQuery, type GovernorSnapshot } from './model';
import { CliError, printJson, type CliContext } from '../../cli/kit/context';
import { rateGovernor } from './workflow';

async function runningGovernors(client: Client): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = '${rateGovernor.name}' AND ExecutionStatus = 'Running'` })) ids.push(wf.workflowId);
  const prefix = governorWorkflowId('');
  return ids.map((id) => (id.startsWith(prefix) ? id.slice(prefix.length) : id)).sort();
}

async function readLimits(client: Client, credential: string): Promise<GovernorSnapshot> {
  try {
    return await client.workflow.getHandle(governorWorkflowId(credential)).query(limitsQuery);
  } catch (err) {
    throw new CliError(`no rate governor for credential ${JSON.stringify(credential)} (it starts with the first request a worker sends on it): ${(err as Error).message}`);
  }
}

function lines(s: GovernorSnapshot): string[] {
  const time = (ms?: number) => (ms ? new Date(ms).toISOString() : '-');
  return [
    `${s.credential}`,
    `  gate             ${s.gate}${s.gate === 'closed' ? ` until ${time(s.blockedUntil)} (${s.reason ?? 'limited'})` : ''}`,
    `  remaining        ${s.budget ?? '?'} of ${s.limit ?? '?'} this window (reserve ${s.reserve}); resets ${time(s.windowResetAt)}`,
    `  content          ${s.contentLastMinute} in the last minute, ${s.contentLastHour} in the last hour${s.contentBlockedUntil ? `; closed until ${time(s.contentBlockedUntil)} after "spammed"` : ''}`,
    `  queued work      ${s.queued} request(s)${s.queuedUntil ? ` waiting until ${time(s.queuedUntil)}` : ''}`,
    `  workers          ${s.workers} (${s.concurrencyPerWorker} concurrent requests each)`,
    `  since start      ${s.totals.granted} granted, ${s.totals.refused} refused, ${s.totals.limitedReports} limited answers reported`,
  ];
}

export function registerLimitsCommands(program: Command, ctx: () => CliContext): void {
  program
    .command('limits')
    .description("Show the fleet's shared rate budget per credential: remaining, reset, gate state, queued work")
    .option('--credential <name>', 'one credential (default: every credential with a running governor)')
    .option('--json', 'print one JSON object')
    .action(async (flags: { credential?: string; json?: boolean }) => {
      const client = await ctx().client();
      const names = flags.credential ? [flags.credential] : await runningGovernors(client);
      const snapshots = await Promise.all(names.map((n) => readLimits(client, n)));
      if (flags.json) return printJson({ credentials: snapshots, summary: snapshots.map(describeGovernor) });
      if (snapshots.length === 0) console.log('no rate governor is running (none of the workers has sent a request yet)');
      for (const s of snapshots) console.log(lines(s).join('\n'));
    });
}
