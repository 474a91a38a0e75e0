/**
 * A fleet of worker "hosts" for multi-host tests: N worker PROCESSES (the `longhaul worker` process, as
 * `worker-process.ts` starts it) on one task queue, each with a data directory of its own (nothing shared on
 * disk, as on machines or containers without a common volume) and an environment of its own. A host can be
 * SIGKILLed (a crash: no shutdown, nothing reported) and started again on its data directory, as a restarted
 * machine would be. Used with `useFleetTeardown` (the processes are killed after each test; the data
 * directories are removed).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { FleetTest } from './fleet';
import { startWorkerProcess, type WorkerProcess } from './worker-process';
import { TEST_TOKEN } from './emulator';
import { waitFor } from './wait';
import type { UploadProgress } from '../../src/archive/to-store';

export interface Host {
  /** `host-a`, `host-b`, … */
  readonly name: string;
  /** This host's own data directory (`LONGHAUL_DATA_DIR`), kept across restarts. */
  readonly dataDir: string;
  /** The process running now (replaced by `restart`). */
  readonly worker: WorkerProcess;
  /** Whether a Temporal worker identity (`pid@host`) is one of this host's processes, past or present. */
  owns(identity: string | undefined): boolean;
  /** SIGKILL: the process dies where it stands. */
  kill(): Promise<void>;
  /** Starts the worker again, same data directory and environment (a new process, so a new own task queue). */
  restart(): Promise<void>;
  /** Whether its current process is running. */
  alive(): boolean;
}

export interface HostsOptions {
  taskQueue: string;
  /** The environment every host gets (API URLs, credentials, secrets…), on top of the test's. */
  env: Record<string, string>;
  /** A host's own additions (e.g. a different object-store prefix), by index. */
  hostEnv?: (index: number) => Record<string, string>;
}

/**
 * What every host of a fleet test needs to reach the emulator's GitHub API, with a credential name of the test's
 * own, so that no other test's fleet shares its rate governor.
 */
export function githubHostEnv(apiUrl: string, credentialPrefix: string): Record<string, string> {
  return { GITHUB_API_URL: apiUrl, GITHUB_TOKEN: TEST_TOKEN, LONGHAUL_GITHUB_CREDENTIAL: `${credentialPrefix}-${randomUUID().slice(0, 8)}` };
}

/** Starts `count` hosts in parallel; resolves once every one polls the task queue. */
export async function startHosts(fleet: FleetTest, count: number, options: HostsOptions): Promise<Host[]> {
  const root = await mkdtemp(join(tmpdir(), `longhaul-hosts-${randomUUID().slice(0, 8)}-`));
  fleet.closeLater(() => rm(root, { recursive: true, force: true }));
  return Promise.all(Array.from({ length: count }, (_, i) => startHost(root, i, options)));
}

async function startHost(root: string, index: number, options: HostsOptions): Promise<Host> {
  const name = `host-${String.fromCharCode(97 + index)}`;
  const dataDir = join(root, name);
  const env = { ...options.env, ...options.hostEnv?.(index), LONGHAUL_TASK_QUEUE: options.taskQueue, LONGHAUL_DATA_DIR: dataDir };
  const pids = new Set<number>();
  const spawn = async () => {
    const w = await startWorkerProcess(env);
    pids.add(w.pid);
    return w;
  };
  let worker = await spawn();
  const alive = () => worker.child.exitCode === null && worker.child.signalCode === null;
  return {
    name,
    dataDir,
    get worker() {
      return worker;
    },
    owns: (identity) => identity !== undefined && pids.has(Number(identity.split('@')[0])),
    kill: () => worker.stop('SIGKILL'),
    async restart() {
      if (alive()) throw new Error(`${name} is still running (pid ${worker.pid}): kill it first`);
      worker = await spawn();
    },
    alive,
  };
}

/** The host one of whose processes has (or had) this identity. */
export function hostOf(hosts: readonly Host[], identity: string | undefined): Host | undefined {
  return hosts.find((h) => h.owns(identity));
}

/** The identities of the workers that completed each activity of a workflow run, with the activity's type, in order. */
export async function activityWorkers(handle: WorkflowHandle): Promise<{ activity: string; identity: string }[]> {
  const { events } = await handle.fetchHistory();
  const typeBySchedule = new Map<string, string>();
  const out: { activity: string; identity: string }[] = [];
  for (const e of events ?? []) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) typeBySchedule.set(String(e.eventId), scheduled.activityType?.name ?? '?');
    const started = e.activityTaskStartedEventAttributes;
    if (started?.identity) out.push({ activity: typeBySchedule.get(String(started.scheduledEventId)) ?? '?', identity: started.identity });
  }
  return out;
}

/** A JSON payload's value (the default converter's `json/plain`; the test workers encrypt nothing). */
function decoded(payload: { data?: Uint8Array | null } | undefined): unknown {
  return payload?.data ? (JSON.parse(Buffer.from(payload.data).toString()) as unknown) : undefined;
}

/**
 * The workflow's pending activities now (started, not yet closed), by type: the identity of the worker running
 * each, its attempt, and the last heartbeat details the server holds (what another host would resume from).
 */
export async function runningActivities(handle: WorkflowHandle): Promise<{ activity: string; identity?: string; attempt: number; heartbeat?: unknown }[]> {
  const { raw } = await handle.describe();
  return (raw.pendingActivities ?? []).map((a) => ({
    activity: a.activityType?.name ?? '?',
    identity: a.lastWorkerIdentity || undefined,
    attempt: a.attempt ?? 1,
    heartbeat: decoded(a.heartbeatDetails?.payloads?.[0]),
  }));
}

/** The download's heartbeat details once its second attempt reports how it resumed (`resume`, issue 40). */
export async function secondAttemptResume(handle: WorkflowHandle): Promise<UploadProgress> {
  const running = await waitFor(
    'the second attempt to report its resume',
    async () => (await runningActivities(handle)).find((a) => a.activity === 'downloadArchive'),
    (a) => a !== undefined && a.attempt === 2 && (a.heartbeat as UploadProgress | undefined)?.resume !== undefined,
    60_000,
    50,
  );
  return running!.heartbeat as UploadProgress;
}

/** What each completed activity of this type returned, with the attempt that completed it, in order. */
export async function activityResults(handle: WorkflowHandle, activity: string): Promise<{ attempt: number; identity?: string; result: unknown }[]> {
  const { events } = await handle.fetchHistory();
  const scheduled = new Set<string>();
  const started = new Map<string, { attempt: number; identity?: string }>();
  const out: { attempt: number; identity?: string; result: unknown }[] = [];
  for (const e of events ?? []) {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === activity) scheduled.add(String(e.eventId));
    const s = e.activityTaskStartedEventAttributes;
    if (s && scheduled.has(String(s.scheduledEventId))) started.set(String(e.eventId), { attempt: s.attempt ?? 1, identity: s.identity || undefined });
    const c = e.activityTaskCompletedEventAttributes;
    const run = c && started.get(String(c.startedEventId));
    if (c && run) out.push({ ...run, result: decoded(c.result?.payloads?.[0]) });
  }
  return out;
}
