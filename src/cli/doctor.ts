/**
 * `longhaul doctor`: what an operator checks first, in one report. The connection (address, TLS, API key), the
 * namespace and this release's search attributes (present, missing, of the wrong type: the same check the worker
 * runs before it polls), the worker versions polling the task queue, and the credentials configured, by name
 * only: never a secret, only where it comes from and whether it is set. Exit code 0 when Temporal answers and
 * the namespace is ready, 6 when the namespace lacks something, 5 when Temporal cannot be reached.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { tsToDate } from '@temporalio/common/lib/time';
import { deploymentVersionName, releaseVersion } from '../release';
import { checkNamespace, namespaceProblem, type NamespaceCheck } from '../temporal/setup-namespace';
import { codecKeysFromEnv } from '../temporal/codec';
import type { LonghaulConfig } from '../config';
import { describeFailure, printJson, type CliContext } from './kit/context';
import { ExitCode } from '../common/exit-codes';
import { formatOutbound, outboundReport, type OutboundReport } from './doctor-outbound';
import { describeUnknown, readVariable, setting, unknownSettings } from '../settings';

const { TaskQueueType, WorkerVersioningMode } = temporal.api.enums.v1;
/** A poller that reported no deployment version: a worker of a release before 0.2.0. */
const UNVERSIONED = 'no deployment version (a release before 0.2.0)';

/** One worker polling the task queue, as the server saw it. */
export interface PollerView {
  /** The task queue type it polls (`workflow` or `activity`). */
  polls: 'workflow' | 'activity';
  identity: string;
  /** `longhaul.0.2.0`, the deployment version it reported; absent for a worker of a release before 0.2.0. */
  version?: string;
  /** Without a deployment version: the build id the SDK derived from the worker's code, if it sent one. */
  sdkBuildId?: string;
  /** Whether the server routes its tasks by version (Worker Versioning on). */
  versioned: boolean;
  lastAccessTime?: string;
}

/** A configured credential: its name and where its secret comes from, never the secret. */
export interface CredentialView {
  kind: 'github' | 'google' | 'temporal' | 'payload-encryption';
  name: string;
  /** Where it points (API URL), if anywhere. */
  target?: string;
  /** GitHub: the REST API version its requests ask for (`X-GitHub-Api-Version`). */
  apiVersion?: string;
  /** Where the secret comes from and whether it is there: `GITHUB_TOKEN (set)`. */
  source: string;
  configured: boolean;
}

export interface DoctorReport {
  version: string;
  deploymentVersion: string;
  connection: { address: string; tls: boolean; reachable: boolean; serverVersion?: string; error?: string };
  namespace?: NamespaceCheck;
  taskQueue: { name: string; pollers: PollerView[] };
  credentials: CredentialView[];
  /** The way out to each configured destination (proxy or direct) and whether it answers that way. */
  outbound?: OutboundReport;
  /** What makes the exit code non-zero. */
  problems: string[];
  /** Worth knowing, not a failure (no worker polling, a secret not set). */
  notes: string[];
}

/** `NAME (set)`, `NAME_FILE=/path (file)` or `NAME (not set)`: where a secret comes from, never its value. */
function secretSource(env: NodeJS.ProcessEnv, name: string): { source: string; configured: boolean } {
  if (readVariable(name, env)) return { source: `${name} (set)`, configured: true };
  const file = readVariable(`${name}_FILE`, env);
  if (file) return existsSync(file) ? { source: `${name}_FILE=${file}`, configured: true } : { source: `${name}_FILE=${file} (no such file)`, configured: false };
  return { source: `${name} (not set)`, configured: false };
}

/** The credentials the worker would use with this environment, by name. */
export function configuredCredentials(config: LonghaulConfig, env: NodeJS.ProcessEnv, temporalOptions: { apiKey?: unknown; tls?: unknown }): CredentialView[] {
  const views: CredentialView[] = config.githubCredentials.map((c) => {
    if (c.auth.kind === 'token') return { kind: 'github', name: c.name, target: c.apiUrl, apiVersion: c.apiVersion, ...secretSource(env, c.auth.env) };
    const keyThere = existsSync(c.auth.privateKeyFile);
    return {
      kind: 'github',
      name: c.name,
      target: c.apiUrl,
      apiVersion: c.apiVersion,
      source: `GitHub App ${c.auth.appId}, installation ${c.auth.installationId}, key file ${c.auth.privateKeyFile}${keyThere ? '' : ' (no such file)'}`,
      configured: keyThere,
    };
  });
  const googleToken = secretSource(env, 'GOOGLE_ACCESS_TOKEN');
  const adc = env.GOOGLE_APPLICATION_CREDENTIALS;
  views.push({
    kind: 'google',
    name: config.googleCredential,
    source: googleToken.configured ? googleToken.source : adc ? `Application Default Credentials, GOOGLE_APPLICATION_CREDENTIALS=${adc}` : 'Application Default Credentials (metadata server or gcloud default; no key file named)',
    configured: googleToken.configured || Boolean(adc),
  });
  const tls = temporalOptions.tls as { clientCertPair?: unknown } | boolean | undefined;
  const clientCert = typeof tls === 'object' && tls !== null && tls.clientCertPair !== undefined;
  views.push({
    kind: 'temporal',
    name: 'temporal',
    source: [temporalOptions.apiKey ? 'API key (TEMPORAL_API_KEY or profile)' : 'no API key', clientCert ? 'TLS client certificate' : 'no client certificate'].join(', '),
    configured: Boolean(temporalOptions.apiKey) || clientCert,
  });
  const keys = codecKeysFromEnv(env);
  if (keys.length > 0) views.push({ kind: 'payload-encryption', name: keys.map((k) => k.id).join(', '), source: setting('LONGHAUL_CODEC_KEYS', env) ? 'LONGHAUL_CODEC_KEYS (set)' : `LONGHAUL_CODEC_KEY_FILE=${setting('LONGHAUL_CODEC_KEY_FILE', env)}`, configured: true });
  return views;
}

/** The workers polling `taskQueue`, workflow and activity pollers both. */
async function pollers(client: Client, taskQueue: string): Promise<PollerView[]> {
  const types = [
    ['workflow', TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW],
    ['activity', TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY],
  ] as const;
  const views: PollerView[] = [];
  for (const [polls, taskQueueType] of types) {
    const answer = await client.workflowService.describeTaskQueue({ namespace: client.options.namespace, taskQueue: { name: taskQueue }, taskQueueType });
    for (const p of answer.pollers ?? []) {
      const { deploymentName, buildId } = p.deploymentOptions ?? {};
      const deployed = buildId ? deploymentVersionName({ deploymentName: deploymentName ?? '', buildId }) : undefined;
      views.push({
        polls,
        identity: p.identity ?? '',
        version: deployed,
        sdkBuildId: deployed ? undefined : (p.workerVersionCapabilities?.buildId ?? undefined),
        versioned: Boolean(p.deploymentOptions?.workerVersioningMode === WorkerVersioningMode.WORKER_VERSIONING_MODE_VERSIONED || p.workerVersionCapabilities?.useVersioning),
        lastAccessTime: p.lastAccessTime ? tsToDate(p.lastAccessTime).toISOString() : undefined,
      });
    }
  }
  return views;
}

export async function doctorReport(ctx: CliContext, env: NodeJS.ProcessEnv = process.env, reach = false): Promise<DoctorReport> {
  const target = ctx.target();
  const { connectionOptions } = target;
  const report: DoctorReport = {
    version: releaseVersion(),
    deploymentVersion: deploymentVersionName(),
    connection: { address: connectionOptions.address ?? '', tls: Boolean(connectionOptions.tls), reachable: false },
    taskQueue: { name: ctx.config.taskQueue, pollers: [] },
    credentials: configuredCredentials(ctx.config, env, connectionOptions),
    problems: [],
    notes: [],
  };
  for (const c of report.credentials) if (!c.configured && c.kind === 'github') report.notes.push(`GitHub credential ${c.name}: ${c.source}`);
  // A typo in a setting's name is otherwise silent: the setting keeps its default.
  for (const unknown of unknownSettings(env)) report.notes.push(describeUnknown(unknown));
  report.outbound = await outboundReport(ctx.config, env, reach);
  for (const d of report.outbound.destinations) if (d.reachable === false) report.notes.push(`${d.name} (${d.url}) does not answer via ${d.via}`);
  let client: Client;
  try {
    client = await ctx.client();
    const info = await client.workflowService.getSystemInfo({});
    report.connection.reachable = true;
    report.connection.serverVersion = info.serverVersion || undefined;
  } catch (err) {
    report.connection.error = describeFailure(err).message;
    report.problems.push(`Temporal at ${report.connection.address} cannot be reached: ${report.connection.error}`);
    return report;
  }
  report.namespace = await checkNamespace(client.connection, target.namespace);
  if (!report.namespace.ready) report.problems.push(namespaceProblem(report.namespace));
  if (report.namespace.exists) {
    report.taskQueue.pollers = await pollers(client, ctx.config.taskQueue);
    if (report.taskQueue.pollers.length === 0) report.notes.push(`no worker polls task queue ${ctx.config.taskQueue} (start one: \`longhaul worker\`)`);
    const old = report.taskQueue.pollers.filter((p) => p.version !== report.deploymentVersion);
    if (old.length > 0) report.notes.push(`${old.length} poller(s) run another version than this CLI's (${report.deploymentVersion}): ${[...new Set(old.map((p) => p.version ?? UNVERSIONED))].join(', ')}`);
  }
  return report;
}

/** The exit code a report stands for. */
export function doctorExitCode(report: DoctorReport): number {
  if (!report.connection.reachable) return ExitCode.Unavailable;
  return report.namespace?.ready ? ExitCode.Success : ExitCode.NamespaceNotReady;
}

/** The report as lines for a terminal. */
export function formatDoctorReport(r: DoctorReport): string[] {
  const c = r.connection;
  const lines = [
    `longhaul ${r.version} (deployment version ${r.deploymentVersion})`,
    `connection: ${c.address}, TLS ${c.tls ? 'on' : 'off'}, ${c.reachable ? `reachable (server ${c.serverVersion ?? 'version unknown'})` : `NOT reachable: ${c.error ?? ''}`}`,
  ];
  const ns = r.namespace;
  if (ns) {
    lines.push(`namespace: ${ns.namespace}, ${ns.exists ? 'exists' : 'does NOT exist'}`);
    if (ns.exists) {
      lines.push('search attributes:');
      const width = Math.max(...ns.searchAttributes.map((a) => a.name.length));
      for (const a of ns.searchAttributes) {
        const state = a.status === 'present' ? 'present' : a.status === 'missing' ? 'MISSING' : `WRONG TYPE (registered as ${a.registeredType})`;
        lines.push(`  ${a.name.padEnd(width)}  ${a.type.padEnd(7)}  ${state}`);
      }
    }
    lines.push(`task queue ${r.taskQueue.name}: ${r.taskQueue.pollers.length === 0 ? 'no worker polls it' : 'worker versions polling'}`);
    const byVersion = new Map<string, PollerView[]>();
    for (const p of r.taskQueue.pollers) {
      const version = p.version ?? `${UNVERSIONED}${p.sdkBuildId ? `, SDK build id ${p.sdkBuildId}` : ''}`;
      byVersion.set(version, [...(byVersion.get(version) ?? []), p]);
    }
    for (const [version, ps] of byVersion) {
      const identities = [...new Set(ps.map((p) => p.identity))];
      lines.push(`  ${version}${ps.some((p) => p.versioned) ? ' (versioned)' : ''}: ${identities.length} worker(s), ${identities.join(', ')}; polls ${[...new Set(ps.map((p) => p.polls))].join(' and ')} tasks`);
    }
  }
  lines.push('credentials (names only):');
  for (const cred of r.credentials) lines.push(`  ${cred.kind} ${cred.name}${cred.target ? ` → ${cred.target}` : ''}${cred.apiVersion ? ` (API version ${cred.apiVersion})` : ''}: ${cred.source}`);
  if (r.outbound) lines.push(...formatOutbound(r.outbound));
  for (const note of r.notes) lines.push(`note: ${note}`);
  for (const problem of r.problems) lines.push(`PROBLEM: ${problem}`);
  lines.push(r.problems.length === 0 ? 'ok' : `${r.problems.length} problem(s)`);
  return lines;
}

export function registerDoctorCommand(program: Command, ctx: () => CliContext): void {
  program
    .command('doctor')
    .description(
      "Check the connection, TLS, namespace and this release's search attributes, the worker versions polling the task queue, and the credentials configured (names only)",
    )
    .option('--json', 'print the report as one JSON object')
    .option('--reach', 'also try each configured destination (GitHub, Google, S3) through the proxy in effect, or directly: one unauthenticated GET each')
    .action(async (opts: { json?: boolean; reach?: boolean }) => {
      const report = await doctorReport(ctx(), process.env, opts.reach);
      if (opts.json) printJson({ ...report, exitCode: doctorExitCode(report) });
      else console.log(formatDoctorReport(report).join('\n'));
      process.exitCode = doctorExitCode(report);
    });
}
