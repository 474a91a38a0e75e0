/**
 * Google long-running operations from the starter:
 *
 *   npm run starter -- apikey-delete --name projects/demo-project/locations/global/keys/demo-key-1 --wait
 *   npm run starter -- bucket-create --parent projects/demo-project/locations/global --bucket-id audit --retention-days 90 --follow
 *   npm run starter -- bucket-update --name projects/demo-project/locations/global/buckets/audit --update-mask retentionDays --retention-days 120 --wait
 *   npm run starter -- dns-change --project demo-project --zone demo-zone --add 'api.demo.example.com. A 300 192.0.2.20' --wait --json
 *
 * Input is validated here too (the workflow would reject it before any call, but a CLI user wants it now).
 */
import { type Command, InvalidArgumentError } from 'commander';
import {
  apiKeyDeleteProblems,
  bucketCreateProblems,
  bucketUpdateProblems,
  dnsChangeProblems,
  parseRrset,
  type ApiKeyDeleteInput,
  type DnsChangeInput,
  type LogBucketCreateInput,
  type LogBucketUpdateInput,
  type ResourceRecordSet,
} from './input';
import { DEFAULT_OPERATION_POLL, describeOperationStatus, type OperationStatus } from './model';
import { LonghaulProcess, LonghaulTarget } from '../../common/search-attributes';
import { CliError, type CliContext } from '../../cli/kit/context';
import { readableWorkflowId, runWorkflowCommand, withRunOutputOptions, type OutputFlags } from '../../cli/kit/run-workflow';
import { apiKeyDelete } from './apikey-delete';
import { dnsChange } from './dns-change';
import { logBucketCreate, logBucketUpdate } from './log-bucket';
import { wholeNumber } from '../../cli/kit/arguments';
import { pollOptionsFrom, withPollOptions, type PollFlags } from '../../cli/kit/poll-options';
import { Process } from './names';

interface RunFlags extends OutputFlags, PollFlags {
  workflowId?: string;
}

function bool(value: string): boolean {
  if (value !== 'true' && value !== 'false') throw new InvalidArgumentError('must be true or false');
  return value === 'true';
}

function rrset(value: string, previous: ResourceRecordSet[]): ResourceRecordSet[] {
  try {
    return [...previous, parseRrset(value)];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/** The options every Google command shares: poll bounds, outage budget, credential, workflow id, output. */
function withRunOptions(command: Command): Command {
  return withRunOutputOptions(withPollOptions(command, { defaults: DEFAULT_OPERATION_POLL, timeout: true }));
}

async function run<Input, Result>(
  ctx: () => CliContext,
  flags: RunFlags,
  spec: {
    workflow: (input: Input) => Promise<Result>;
    process: OperationStatus['process'];
    summary: string;
    target: string;
    input: Input;
    problems: string[];
    describeResult: (r: Result) => string[];
  },
): Promise<void> {
  if (spec.problems.length) throw new CliError(`invalid input: ${spec.problems.join('; ')}`, 2);
  process.exitCode = await runWorkflowCommand<[Input], Result, OperationStatus>({
    ctx: ctx(),
    workflow: spec.workflow,
    summary: spec.summary,
    workflowId: flags.workflowId ?? readableWorkflowId(spec.process, [spec.target.split('/').slice(-1)[0] ?? spec.target]),
    args: [spec.input],
    searchAttributes: [
      { key: LonghaulProcess, value: spec.process },
      { key: LonghaulTarget, value: spec.target },
    ],
    flags,
    describeResult: spec.describeResult,
    describeStatus: describeOperationStatus,
  });
}

export function describeApiKeyDeleteResult(r: { operation?: string; note: string }): string[] {
  return [r.note, ...(r.operation ? [`operation: ${r.operation}`] : [])];
}

export function describeBucketResult(r: { bucket: string; operation: string; state: string; response?: Record<string, unknown>; cancel?: { message: string } }): string[] {
  return [
    `log bucket ${r.bucket}: operation ${r.operation} ${r.state}`,
    ...(r.response?.retentionDays !== undefined ? [`retention: ${String(r.response.retentionDays)} days`] : []),
    ...(r.cancel ? [r.cancel.message] : []),
  ];
}

export function describeDnsChangeResult(r: { changeId: string; status: string; zone?: string; additions: ResourceRecordSet[]; deletions: ResourceRecordSet[] }): string[] {
  return [
    `change ${r.changeId}${r.zone ? ` to zone ${r.zone}` : ''}: ${r.status}`,
    ...r.additions.map((s) => `+ ${s.name} ${s.type} ${s.ttl} ${s.rrdatas.join(' ')}`),
    ...r.deletions.map((s) => `- ${s.name} ${s.type} ${s.ttl} ${s.rrdatas.join(' ')}`),
  ];
}

export function registerGoogleCommands(program: Command, ctx: () => CliContext): void {
  withRunOptions(
    program
      .command(Process.ApiKeyDelete)
      .description('Delete a Google API key and wait for its operation (the key stays retrievable for 30 days)')
      .requiredOption('--name <name>', 'projects/PROJECT/locations/global/keys/KEY')
      .option('--etag <etag>', 'the etag you read; refuse the deletion if the key changed since'),
  ).action(async (flags: RunFlags & { name: string; etag?: string }) => {
    const input: ApiKeyDeleteInput = { name: flags.name, etag: flags.etag, ...pollOptionsFrom(flags) };
    await run<ApiKeyDeleteInput, { operation?: string; retrievableUntil?: string; note: string }>(ctx, flags, {
      workflow: apiKeyDelete as never,
      summary: `Delete API key ${flags.name.split('/').pop() ?? flags.name}`,
      process: Process.ApiKeyDelete,
      target: flags.name,
      input,
      problems: apiKeyDeleteProblems(input),
      describeResult: describeApiKeyDeleteResult,
    });
  });

  withRunOptions(
    program
      .command('bucket-create')
      .description('Create a Cloud Logging bucket (buckets:createAsync) and follow its operation; cancelling the workflow cancels the operation')
      .requiredOption('--parent <parent>', '{projects|organizations|folders|billingAccounts}/ID/locations/LOCATION')
      .requiredOption('--bucket-id <id>', 'bucket id')
      .option('--retention-days <n>', 'retention in days (1-3650)', wholeNumber)
      .option('--description <text>', 'description'),
  ).action(async (flags: RunFlags & { parent: string; bucketId: string; retentionDays?: number; description?: string }) => {
    const input: LogBucketCreateInput = { parent: flags.parent, bucketId: flags.bucketId, retentionDays: flags.retentionDays, description: flags.description, ...pollOptionsFrom(flags) };
    await run(ctx, flags, {
      workflow: logBucketCreate,
      summary: `Create log bucket ${flags.bucketId} in ${flags.parent}`,
      process: Process.LogBucketCreate,
      target: `${flags.parent}/buckets/${flags.bucketId}`,
      input,
      problems: bucketCreateProblems(input),
      describeResult: describeBucketResult,
    });
  });

  withRunOptions(
    program
      .command('bucket-update')
      .description('Update a Cloud Logging bucket ({bucket}:updateAsync) and follow its operation')
      .requiredOption('--name <name>', 'PARENT/buckets/BUCKET_ID')
      .requiredOption('--update-mask <fields>', 'comma-separated fields to update: retentionDays, description, locked, analyticsEnabled')
      .option('--retention-days <n>', 'retention in days (1-3650)', wholeNumber)
      .option('--description <text>', 'description')
      .option('--locked <true|false>', 'lock the bucket (irreversible on Google Cloud)', bool)
      .option('--analytics-enabled <true|false>', 'enable Log Analytics', bool),
  ).action(async (flags: RunFlags & { name: string; updateMask: string; retentionDays?: number; description?: string; locked?: boolean; analyticsEnabled?: boolean }) => {
    const input: LogBucketUpdateInput = {
      name: flags.name,
      updateMask: flags.updateMask.split(',').map((f) => f.trim()).filter(Boolean),
      retentionDays: flags.retentionDays,
      description: flags.description,
      locked: flags.locked,
      analyticsEnabled: flags.analyticsEnabled,
      ...pollOptionsFrom(flags),
    };
    await run(ctx, flags, {
      workflow: logBucketUpdate,
      summary: `Update log bucket ${flags.name.split('/').pop() ?? flags.name}: ${flags.updateMask}`,
      process: Process.LogBucketUpdate,
      target: flags.name,
      input,
      problems: bucketUpdateProblems(input),
      describeResult: describeBucketResult,
    });
  });

  withRunOptions(
    program
      .command(Process.DnsChange)
      .description('Apply a Cloud DNS change (additions and deletions, atomically) and wait until it is done')
      .requiredOption('--project <project>', 'project id')
      .requiredOption('--zone <zone>', 'managed zone name')
      .option('--add <rrset>', 'record set to add: "NAME TYPE TTL RRDATA…" (repeat for several)', rrset, [] as ResourceRecordSet[])
      .option('--delete <rrset>', 'record set to delete, exactly as it is now: "NAME TYPE TTL RRDATA…" (repeat)', rrset, [] as ResourceRecordSet[]),
  ).action(async (flags: RunFlags & { project: string; zone: string; add: ResourceRecordSet[]; delete: ResourceRecordSet[] }) => {
    const input: DnsChangeInput = { project: flags.project, zone: flags.zone, additions: flags.add, deletions: flags.delete, ...pollOptionsFrom(flags) };
    await run<DnsChangeInput, { changeId: string; status: string; additions: ResourceRecordSet[]; deletions: ResourceRecordSet[] }>(ctx, flags, {
      workflow: dnsChange as never,
      summary: `DNS change in ${flags.zone}: +${flags.add.length} −${flags.delete.length} record sets`,
      process: Process.DnsChange,
      target: `projects/${flags.project}/managedZones/${flags.zone}`,
      input,
      problems: dnsChangeProblems(input),
      describeResult: describeDnsChangeResult,
    });
  });
}
