/**
 * The runs whose histories the replay test checks: every workflow type's happy path, a cancelled run where the
 * type can be cancelled midway, and a continued-as-new chain where the type continues as new. Each scenario gets
 * its own emulator (options below) and worker; `run` returns the workflow ids to save (every run of each id is
 * saved, so a continue-as-new chain gives one file per run).
 *
 * Add a scenario here when a workflow gains a path (a new phase, a new handler) and re-record:
 * `npm run record:replay`.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Emulator, EmulatorOptions } from '@longhaul/emulator';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { newMigrationStatus } from '../../src/processes/org-migration/model';
import { sourceImport } from '../../src/processes/source-import/workflow';
import { apiKeyDelete } from '../../src/processes/google-operation/apikey-delete';
import { logBucketCreate, logBucketUpdate } from '../../src/processes/google-operation/log-bucket';
import { dnsChange } from '../../src/processes/google-operation/dns-change';
import { feedCursor, feedPollRun, stopFeedCursorSignal } from '../../src/processes/feed-poll/workflow';
import { hookPing, hookRepair } from '../../src/processes/hook-repair/workflow';
import { feedCursorWorkflowId } from '../../src/processes/feed-poll/model';
import { defaultGithubFixture, type GithubFixture } from '../../packages/emulator/src/github/fixture';
import { orgBackup } from '../../src/processes/org-backup/workflow';
import { startVersitygw } from '../../src/cli/demo-s3-server';
import { s3Client } from '../../src/archive/object-store/stores/s3';
import { CreateBucketCommand } from '@aws-sdk/client-s3';

export interface ScenarioContext {
  client: Client;
  taskQueue: string;
  emulator: Emulator;
  /** A workflow id unique to this recording. */
  id(suffix: string): string;
}

export interface Scenario {
  /** File-name part: `<name>--run<N>.json`. Types first, so a listing groups by workflow type. */
  name: string;
  emulator?: EmulatorOptions;
  run(ctx: ScenarioContext): Promise<string[]>;
}

// 1 s: the floor the workflow kit's poll-bounds validator accepts.
// A 5-minute bound keeps 1 s polls inside one run's event budget (Google inputs are refused otherwise).
const FAST_POLL = { initialIntervalMs: 1_000, maxIntervalMs: 1_000, timeoutMs: 300_000 };
const SVN = 'https://svn.example.test/repos';
/** The default fixture plus two empty repositories to import into (the test helper imports vitest, which a script cannot). */
function fixtureWithImportTargets(): GithubFixture {
  const fixture = defaultGithubFixture();
  for (const [i, name] of ['replay-1', 'replay-2'].entries()) fixture.repositories.push({ id: 6000 + i, name, owner: 'octo-org', private: false, workflowsEnabled: false });
  return fixture;
}
const keyName = (id: string) => `projects/demo-project/locations/global/keys/${id}`;

/** Waits until the run has started `count` timers (it is in its poll wait), so a cancel lands mid-wait. */
async function untilTimers(handle: WorkflowHandle, count: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const events = (await handle.fetchHistory()).events ?? [];
    if (events.filter((e) => e.timerStartedEventAttributes).length >= count) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${handle.workflowId} did not start ${count} timer(s) within ${timeoutMs / 1000} s`);
}

/** Cancels the run mid-wait and waits for it to end (cancelled, or failed by its cleanup). */
async function cancelMidWait(handle: WorkflowHandle): Promise<string[]> {
  await untilTimers(handle, 2);
  return cancelAndAwaitEnd(handle);
}

/** Cancels the run and waits for it to end (cancelled, or failed by its cleanup). */
async function cancelAndAwaitEnd(handle: WorkflowHandle): Promise<string[]> {
  await handle.cancel();
  const outcome = await handle.result().then(
    () => 'completed',
    (err: Error) => `ended: ${err.message}`,
  );
  if (outcome === 'completed') throw new Error(`${handle.workflowId} completed before the cancel took effect`);
  return [handle.workflowId];
}

/** A migration whose start's connection is reset before an answer (the outcome unknown), then re-sent. */
const startUnknown: Omit<Scenario, 'name'> = {
  emulator: { migrations: { exportMs: 1_000, archiveBytes: 4_096 }, faults: [{ method: 'POST', path: '/orgs/:org/migrations', kind: 'reset', times: 1 }] },
  async run({ client, taskQueue, id }) {
    const workflowId = id('migration');
    await client.workflow.execute(orgMigration, { taskQueue, workflowId, args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, startGraceMs: 6_000, poll: FAST_POLL }] });
    return [workflowId];
  },
};

/** A migration of two repositories, locked, exported in a second, downloaded and unlocked. */
const happyMigration: Omit<Scenario, 'name'> = {
  emulator: { migrations: { exportMs: 1_000, archiveBytes: 4_096 } },
  async run({ client, taskQueue, id }) {
    const workflowId = id('migration');
    await client.workflow.execute(orgMigration, { taskQueue, workflowId, args: [{ org: 'octo-org', repositories: ['alpha', 'beta'], lockRepositories: true, poll: FAST_POLL }] });
    return [workflowId];
  },
};

export const scenarios: Scenario[] = [
  { ...happyMigration, name: 'orgMigration--happy' },
  {
    // The happy path on the current code: the archive's destination is checked before the export is started
    // (patched 'archive-destination-checked'; here the worker's data directory, so the check calls no store).
    ...happyMigration,
    name: 'orgMigration--destination-checked',
  },
  {
    // patched('archive-memo'): the stored archive recorded in the memo (upsertMemo) as the download returns.
    name: 'orgMigration--archive-memo',
    emulator: { migrations: { exportMs: 1_000, archiveBytes: 4_096 } },
    async run({ client, taskQueue, id }) {
      const workflowId = id('migration');
      await client.workflow.execute(orgMigration, { taskQueue, workflowId, args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL }] });
      return [workflowId];
    },
  },
  {
    // patched('archive-memo') in a run resumed after the download (its memo recorded again before the result).
    name: 'orgMigration--archive-memo-resumed',
    async run({ client, taskQueue, id }) {
      const workflowId = id('migration');
      const base = { org: 'octo-org', repositories: ['alpha'] };
      const archive = { path: '/data/archives/octo-org-migration-4242.tar.gz', bytes: 4_096, sha256: 'ab'.repeat(32) };
      const resume = { migrationId: 4242, locked: [], status: { ...newMigrationStatus(base), migrationId: 4242 }, ending: { kind: 'exported' as const, archive } };
      await client.workflow.execute(orgMigration, { taskQueue, workflowId, args: [{ ...base, resume }] });
      return [workflowId];
    },
  },
  {
    // A tiny per-run event budget: the wait continues as new every few polls, carrying the migration with it.
    name: 'orgMigration--continued-as-new',
    emulator: { migrations: { exportMs: 9_000, archiveBytes: 4_096 } },
    async run({ client, taskQueue, id }) {
      const workflowId = id('migration');
      await client.workflow.execute(orgMigration, {
        taskQueue,
        workflowId,
        args: [{ org: 'octo-org', repositories: ['gamma'], lockRepositories: true, poll: FAST_POLL, eventsPerRun: 50 }],
      });
      return [workflowId];
    },
  },
  {
    // The start's connection is reset before an answer: its outcome is unknown, so lookups follow over the grace
    // period (recorded before the lookups were bounded: 1 s doubling to 15 s apart), then the start is sent again.
    ...startUnknown,
    name: 'orgMigration--start-unknown',
  },
  {
    // The same reset on the current code: one lookup at once, one when the grace period is spent, then the
    // re-send (patched 'send-once-bounded-lookups'). With the history above, both sides of the patch replay.
    ...startUnknown,
    name: 'orgMigration--start-unknown-bounded',
  },
  {
    // Cancelled mid-download (storage throttled): after the unlock, the workflow aborts the archive's upload
    // (patched 'archive-upload-aborted'; here the worker's data directory, so the activity has nothing to drop).
    name: 'orgMigration--cancelled-downloading',
    emulator: { migrations: { exportMs: 500, archiveBytes: 8 * 1024 * 1024 }, storageBytesPerSecond: 1024 * 1024 },
    async run({ client, taskQueue, id }) {
      const handle = await client.workflow.start(orgMigration, { taskQueue, workflowId: id('migration'), args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL }] });
      const deadline = Date.now() + 60_000;
      const downloading = async () => ((await handle.describe()).raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'downloadArchive' && (a.heartbeatDetails?.payloads?.length ?? 0) > 0);
      while (!(await downloading())) {
        if (Date.now() > deadline) throw new Error(`${handle.workflowId} did not start its download within 60 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return cancelAndAwaitEnd(handle);
    },
  },
  {
    name: 'orgMigration--cancelled',
    emulator: { migrations: { exportMs: 600_000 } },
    async run({ client, taskQueue, id }) {
      const handle = await client.workflow.start(orgMigration, { taskQueue, workflowId: id('migration'), args: [{ org: 'octo-org', repositories: ['alpha'], lockRepositories: true, poll: FAST_POLL }] });
      return cancelMidWait(handle);
    },
  },
  {
    name: 'sourceImport--happy',
    emulator: { fixture: fixtureWithImportTargets(), imports: { timeScale: 0.02 } },
    async run({ client, taskQueue, id }) {
      const workflowId = id('import');
      await client.workflow.execute(sourceImport, { taskQueue, workflowId, args: [{ owner: 'octo-org', repo: 'replay-1', vcsUrl: `${SVN}/happy`, poll: FAST_POLL }] });
      return [workflowId];
    },
  },
  {
    name: 'sourceImport--cancelled',
    emulator: { fixture: fixtureWithImportTargets(), imports: { timeScale: 1 } },
    async run({ client, taskQueue, id }) {
      const handle = await client.workflow.start(sourceImport, { taskQueue, workflowId: id('import'), args: [{ owner: 'octo-org', repo: 'replay-2', vcsUrl: `${SVN}/happy`, poll: FAST_POLL }] });
      return cancelMidWait(handle);
    },
  },
  {
    name: 'apiKeyDelete--happy',
    emulator: { google: { apikeys: { deleteOperationMs: 700 } } },
    async run({ client, taskQueue, id, emulator }) {
      const name = keyName('demo-key-1');
      const workflowId = id('apikey');
      await client.workflow.execute(apiKeyDelete, { taskQueue, workflowId, args: [{ name, etag: emulator.google.apikeys.etag(name), poll: FAST_POLL }] });
      return [workflowId];
    },
  },
  {
    name: 'apiKeyDelete--cancelled',
    emulator: { google: { apikeys: { deleteOperationMs: 600_000 } } },
    async run({ client, taskQueue, id }) {
      const handle = await client.workflow.start(apiKeyDelete, { taskQueue, workflowId: id('apikey'), args: [{ name: keyName('demo-key-2'), poll: FAST_POLL }] });
      return cancelMidWait(handle);
    },
  },
  {
    name: 'logBucketCreate--happy',
    emulator: { google: { buckets: { scheduledMs: 200, waitingForPermissionsMs: 200, runningMs: 400 } } },
    async run({ client, taskQueue, id }) {
      const workflowId = id('bucket');
      await client.workflow.execute(logBucketCreate, {
        taskQueue,
        workflowId,
        args: [{ parent: 'projects/demo-project/locations/global', bucketId: 'replay-audit', retentionDays: 90, description: 'audit logs', poll: FAST_POLL }],
      });
      return [workflowId];
    },
  },
  {
    name: 'logBucketCreate--cancelled',
    emulator: { google: { buckets: { runningMs: 600_000, cancel: 'takes-effect', cancelEffectMs: 300 } } },
    async run({ client, taskQueue, id }) {
      const handle = await client.workflow.start(logBucketCreate, {
        taskQueue,
        workflowId: id('bucket'),
        args: [{ parent: 'organizations/demo-org/locations/global', bucketId: 'replay-cancel', poll: FAST_POLL }],
      });
      return cancelMidWait(handle);
    },
  },
  {
    name: 'logBucketUpdate--happy',
    emulator: { google: { buckets: { scheduledMs: 100, waitingForPermissionsMs: 100, runningMs: 400 } } },
    async run({ client, taskQueue, id }) {
      const parent = 'projects/demo-project/locations/global';
      await client.workflow.execute(logBucketCreate, { taskQueue, workflowId: id('bucket-for-update'), args: [{ parent, bucketId: 'replay-update', poll: FAST_POLL }] });
      const workflowId = id('bucket-update');
      await client.workflow.execute(logBucketUpdate, {
        taskQueue,
        workflowId,
        args: [{ name: `${parent}/buckets/replay-update`, updateMask: ['retentionDays', 'description'], retentionDays: 400, description: 'kept longer', poll: FAST_POLL }],
      });
      return [workflowId];
    },
  },
  {
    name: 'dnsChange--happy',
    emulator: { google: { dns: { changeMs: 800 } } },
    async run({ client, taskQueue, id }) {
      const workflowId = id('dns');
      const additions = [{ name: 'replay.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.30'] }];
      await client.workflow.execute(dnsChange, { taskQueue, workflowId, args: [{ project: 'demo-project', zone: 'demo-zone', additions, poll: FAST_POLL }] });
      return [workflowId];
    },
  },
  {
    name: 'dnsChange--cancelled',
    emulator: { google: { dns: { changeMs: 600_000 } } },
    async run({ client, taskQueue, id }) {
      const additions = [{ name: 'replay-cancel.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.31'] }];
      const handle = await client.workflow.start(dnsChange, { taskQueue, workflowId: id('dns'), args: [{ project: 'demo-project', zone: 'demo-zone', additions, poll: FAST_POLL }] });
      return cancelMidWait(handle);
    },
  },
  {
    // The cursor entity continues as new every 2 polls here: 3 polls give a run that continued as new and one
    // that a stop signal ends. The scheduled-run workflow (feedPollRun) is recorded alongside.
    name: 'feedCursor--continued-as-new',
    emulator: { feeds: { eventsPerMinute: 120, initialEvents: 5, pollIntervalSeconds: 1 } },
    async run({ client, taskQueue, id, emulator }) {
      const feed = '/repos/octo-org/alpha/events';
      emulator.feeds.ensure(feed);
      const cursor = await client.workflow.start(feedCursor, { taskQueue, workflowId: feedCursorWorkflowId(feed), args: [{ feed, pollsPerRun: 2 }] });
      const polls: string[] = [];
      for (let i = 0; i < 3; i++) {
        const workflowId = id(`feed-poll-${i}`);
        await client.workflow.execute(feedPollRun, { taskQueue, workflowId, args: [{ feed, sink: { kind: 'file' }, origin: 'manual' }] });
        polls.push(workflowId);
      }
      await client.workflow.getHandle(cursor.workflowId).signal(stopFeedCursorSignal);
      await client.workflow.getHandle(cursor.workflowId).result();
      return [cursor.workflowId, polls[0]];
    },
  },
  {
    // A poll of two pages since the poll's later steps go to the worker that fetched page 1 (`patched('feed-poll-same-worker')`):
    // page 2 and the delivery are scheduled on the recording worker's own task queue.
    name: 'feedCursor--same-worker',
    emulator: { feeds: { eventsPerMinute: 0, initialEvents: 0, pollIntervalSeconds: 1 } },
    async run({ client, taskQueue, id, emulator }) {
      const feed = '/repos/octo-org/beta/events';
      emulator.feeds.ensure(feed);
      emulator.feeds.burst(feed, 150);
      const cursor = await client.workflow.start(feedCursor, { taskQueue, workflowId: feedCursorWorkflowId(feed), args: [{ feed }] });
      const poll = id('feed-poll-same-worker');
      await client.workflow.execute(feedPollRun, { taskQueue, workflowId: poll, args: [{ feed, sink: { kind: 'file' }, origin: 'manual' }] });
      await client.workflow.getHandle(cursor.workflowId).signal(stopFeedCursorSignal);
      await client.workflow.getHandle(cursor.workflowId).result();
      return [cursor.workflowId, poll];
    },
  },
  {
    name: 'hookRepair--happy',
    async run({ client, taskQueue, id, emulator }) {
      const { id: hookId } = emulator.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook', secret: 'x' });
      const now = Date.now();
      for (let i = 0; i < 3; i++) emulator.hooks.addDelivery(hookId, { at: now - 3_600_000 + i * 1000, statusCode: 200 });
      for (let i = 0; i < 2; i++) emulator.hooks.addDelivery(hookId, { at: now - 1_800_000 + i * 1000, statusCode: 502 });
      const workflowId = id('hook-repair');
      await client.workflow.execute(hookRepair, { taskQueue, workflowId, args: [{ target: { org: 'octo-org' }, hookId, pacing: { minuteMs: 500, hourMs: 2_000 } }] });
      return [workflowId];
    },
  },
  {
    // The deliveries list redirects in a loop once (six hops): recorded on the code before a redirect loop had its
    // own permanent type, when it was an UnexpectedResponseError that OutageWatch waited out (one outage wait, then
    // the list again). Today's code fails such a run at once (TooManyRedirectsError); this history's run goes on
    // waiting it out (patched 'unexpected-response-permanent').
    name: 'hookRepair--redirect-loop-waited-out',
    emulator: { faults: [{ method: 'GET', path: '/hooks/:hook_id/deliveries', kind: 'redirect', status: 307, times: 6 }] },
    async run({ client, taskQueue, id, emulator }) {
      const { id: hookId } = emulator.hooks.create({ org: 'octo-org' }, { url: 'https://receiver.example.test/hook', secret: 'x' });
      emulator.hooks.addDelivery(hookId, { at: Date.now() - 1_800_000, statusCode: 502 });
      const workflowId = id('hook-repair');
      const input = { target: { org: 'octo-org' }, hookId, pacing: { minuteMs: 500, hourMs: 2_000 }, outage: { initialBackoffMs: 1_000, maxBackoffMs: 1_000, budgetMs: 60_000 } };
      await client.workflow.execute(hookRepair, { taskQueue, workflowId, args: [input] }).catch(() => undefined);
      return [workflowId];
    },
  },
  {
    name: 'hookPing--happy',
    async run({ client, taskQueue, id, emulator }) {
      const { id: hookId } = emulator.hooks.create({ owner: 'octo-org', repo: 'beta' }, { url: 'https://receiver.example.test/hook' });
      const workflowId = id('hook-ping');
      await client.workflow.execute(hookPing, { taskQueue, workflowId, args: [{ target: { owner: 'octo-org', repo: 'beta' }, hookId }] });
      return [workflowId];
    },
  },
  {
    // Listing, plan, exports as children with one halved down to its failing repository, manifest, retention and
    // GitHub's copies deleted. The worker in this process reaches the S3 server through the SDK's variables.
    name: 'orgBackup--halved',
    emulator: { organizations: { 'backup-org': { repositories: 12 } }, migrations: { exportMs: 300, archiveBytes: 1_024, failRepositories: ['repo-00005'] } },
    async run({ client, taskQueue, id }) {
      const s3 = await startVersitygw();
      const saved = { ...process.env };
      Object.assign(process.env, s3.env);
      try {
        await s3Client(s3.env).send(new CreateBucketCommand({ Bucket: 'replay-backups' }));
        const workflowId = id('backup');
        await client.workflow.execute(orgBackup, { taskQueue, workflowId, args: [{ org: 'backup-org', archiveTo: 's3://replay-backups/nightly', reposPerExport: 5, keepMs: 60_000, exportPoll: FAST_POLL }] });
        return [workflowId];
      } finally {
        for (const k of Object.keys(s3.env)) if (saved[k] === undefined) delete process.env[k];
        Object.assign(process.env, saved);
        await s3.destroy();
      }
    },
  },
];
