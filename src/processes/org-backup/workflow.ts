/**
 * An organization's backup run (issue 38): check the destination → list every repository (one page per
 * activity, the pages into the run's folder) → plan exports balanced by size → export them as child org
 * migrations (never locking, archives into the run's folder, GitHub's copy deleted once stored), a bounded number
 * at once; an export GitHub ends `failed` is halved down to the one repository that fails → `manifest.json`, last
 * → retention. Continues as new between exports when the history grows (no child is running then).
 *
 * Each export is an org migration with every guarantee it has (send-once start, quiet polls, the fleet's budget,
 * streaming into the store, resume on another host): the backup only decides what to export and keeps the facts.
 */
import { ApplicationFailure, ChildWorkflowFailure, continueAsNew, executeChild, isCancellation, ParentClosePolicy, proxyActivities, upsertMemo } from '@temporalio/workflow';
import type { BackupActivities } from './activities';
import { READ, CLEANUP, withCallTimeout } from '../../workflows/kit/activity-options';
import { summarized } from '../../workflows/kit/activity-summaries';
import { BACKUP_SUMMARIES } from './summaries';
import { MAX_EVENTS_PER_RUN, runBudgetReached, statusQuery, trackStatus, validatedWorkflow } from '../../workflows/kit';
import { BACKUP_FAILURES } from './failures';
import { FAILURES } from '../../common/failures';
import { halves } from './plan';
import {
  BACKUP_EXCLUDE_FLAGS,
  BackupFailure,
  BackupInputSchema,
  defaultReposPerExport,
  describeBackup,
  exportWorkflowId,
  EXPORT_WORKFLOW_TYPE,
  ExportFailure,
  runFolderUrl,
  type BackupInput,
  type BackupResult,
  type BackupStatus,
  type ExportInput,
  type ExportResult,
  type ExportWork,
  type FailedRepository,
  type StoredExport,
} from './model';

export const backupStatusQuery = statusQuery<BackupStatus>();

/** Exports running at once unless the input says otherwise. */
const DEFAULT_CONCURRENT_EXPORTS = 4;
/** Events one export costs the parent at most (read its names, start and end the child), kept free before a new one starts. */
const EVENTS_PER_EXPORT = 12;

/** The failure types of an export that halving can settle: GitHub failed the export, or refused its start. */
const SPLITTABLE = new Set<string>([ExportFailure.ExportFailed, ExportFailure.StartFailed]);
const GONE = new Set<string>([FAILURES.http.NotFound.type, FAILURES.http.ValidationFailed.type, FAILURES.http.Gone.type]);

export const orgBackup = validatedWorkflow('orgBackup', { what: 'backup input', failures: BACKUP_FAILURES, schema: BackupInputSchema }, backup);

async function backup(input: BackupInput): Promise<BackupResult> {
  // The input's call timeout bounds each call, as for the exports: a call lost with its host is tried again after it.
  const read = summarized(proxyActivities<BackupActivities>(withCallTimeout(READ, input.apiCallTimeoutMs)), BACKUP_SUMMARIES);
  const cleanup = summarized(proxyActivities<BackupActivities>({ ...CLEANUP, heartbeatTimeout: '2 minutes', startToCloseTimeout: '30 minutes' }), BACKUP_SUMMARIES);
  const r = input.resume;
  const startedAtMs = r?.startedAtMs ?? Date.now();
  const folder = runFolderUrl(input.archiveTo, input.org, startedAtMs);
  const status: BackupStatus = r
    ? { ...r.status, continuedAsNew: r.status.continuedAsNew + 1 }
    : {
        phase: 'checking',
        org: input.org,
        destination: input.archiveTo,
        folder,
        startedAt: new Date(startedAtMs).toISOString(),
        listedPages: 0,
        listed: 0,
        plannedExports: 0,
        exportsStarted: 0,
        exportsStored: 0,
        backedUp: 0,
        failed: [],
        halvings: 0,
        runningExports: 0,
        continuedAsNew: 0,
      };
  // Retention reads it: a run in progress is never pruned.
  upsertMemo({ folder });
  const tracker = trackStatus(backupStatusQuery, status, describeBackup);
  const budget = Math.min(input.eventsPerRun ?? MAX_EVENTS_PER_RUN, MAX_EVENTS_PER_RUN);
  const suspendNow = () => runBudgetReached(Math.max(budget - EVENTS_PER_EXPORT * (input.concurrentExports ?? DEFAULT_CONCURRENT_EXPORTS), 50));
  let nextPage = r?.nextPage ?? 1;
  let listingDone = r?.listingDone ?? false;
  let planned = r?.planned;
  let nextPart = r?.nextPart ?? 0;
  const queue: ExportWork[] = [...(r?.queue ?? [])];
  const stored: StoredExport[] = [...(r?.stored ?? [])];
  const carry = () =>
    continueAsNew<typeof orgBackup>({ ...input, resume: { startedAtMs, status: { ...status, runningExports: 0 }, nextPage, listingDone, planned, nextPart, queue, stored } });

  try {
    if (!r) await read.checkBackupDestination({ archiveTo: input.archiveTo });
    status.phase = 'listing';
    tracker.update();
    while (!listingDone) {
      const page = await read.listRepositoriesPage({ org: input.org, page: nextPage, folder });
      status.listedPages = nextPage;
      status.listed += page.count;
      if (page.next === undefined || page.count === 0) listingDone = true;
      else nextPage = page.next;
      tracker.update();
      if (!listingDone && suspendNow()) return carry();
    }
    if (planned === undefined) {
      status.phase = 'planning';
      tracker.update();
      const plan = await read.planBackupExports({ folder, pages: status.listedPages, reposPerExport: defaultReposPerExport(input) });
      planned = plan.exports;
      status.listed = plan.repositories;
      status.plannedExports = plan.exports;
    }
    status.phase = 'exporting';
    tracker.update();

    const total = planned;
    const take = (): ExportWork | undefined => queue.shift() ?? (nextPart < total ? { part: nextPart++, depth: 0 } : undefined);
    const running = new Map<number, Promise<void>>();
    let seq = 0;
    let suspend = false;
    let fatal: unknown;
    for (;;) {
      while (!suspend && fatal === undefined && running.size < (input.concurrentExports ?? DEFAULT_CONCURRENT_EXPORTS)) {
        const work = take();
        if (!work) break;
        const id = seq++;
        running.set(
          id,
          exportOne(work)
            .catch((err) => {
              fatal ??= err;
            })
            .finally(() => {
              running.delete(id);
              status.runningExports = running.size;
              tracker.update();
            }),
        );
        status.runningExports = running.size;
      }
      if (running.size === 0) break;
      await Promise.race(running.values());
      if (suspendNow()) suspend = true;
    }
    if (fatal !== undefined) throw fatal;
    if (suspend && (queue.length > 0 || nextPart < total)) return carry();

    status.phase = 'manifest';
    tracker.update();
    const finishedAt = new Date(Date.now()).toISOString();
    const manifest = await read.writeBackupManifest({ folder, org: input.org, destination: input.archiveTo, startedAt: status.startedAt, finishedAt, listed: status.listed, stored, failed: status.failed });
    let pruned: string[] = [];
    if (input.keepMs !== undefined) {
      status.phase = 'retention';
      tracker.update();
      pruned = await cleanup.pruneBackupRuns({ archiveTo: input.archiveTo, org: input.org, keepMs: input.keepMs, nowMs: Date.now(), currentFolder: folder });
      status.pruned = pruned;
    }
    if (input.keepGithubArchives !== true) {
      status.phase = 'cleanup';
      tracker.update();
      for (const s of stored) await cleanup.deleteGithubArchive({ org: input.org, migrationId: s.migrationId });
    }
    status.phase = 'done';
    tracker.update();
    return { org: input.org, folder, manifest: manifest.url, listed: status.listed, backedUp: status.backedUp, failed: status.failed, exports: status.exportsStored, halvings: status.halvings, pruned };
  } catch (err) {
    if (!isCancellation(err)) {
      status.phase = 'failed';
      tracker.update();
      await read.recordBackupFailure({ org: input.org, destination: input.archiveTo }).catch(() => undefined);
    }
    throw err;
  }

  /** One export as a child org migration; a failed one is halved (queued) or, for one repository, reported. */
  async function exportOne(work: ExportWork): Promise<void> {
    const names = work.names ?? (await read.plannedExport({ folder, part: work.part! }));
    status.exportsStarted++;
    const n = status.exportsStarted;
    tracker.update();
    const flags = Object.fromEntries(BACKUP_EXCLUDE_FLAGS.filter((f) => input[f] !== undefined).map((f) => [f, input[f]]));
    const child: ExportInput = {
      org: input.org,
      repositories: names,
      lockRepositories: false,
      ...flags,
      archiveTo: folder,
      // GitHub's copy is deleted by the run once every archive is stored and the manifest written (an export's own
      // delete would fail it on a 404 after a lost answer, though its archive is stored).
      deleteArchiveAfterDownload: false,
      ...(input.exportPoll ? { poll: input.exportPoll } : {}),
      ...(input.apiCallTimeoutMs !== undefined ? { apiCallTimeoutMs: input.apiCallTimeoutMs } : {}),
      ...(input.credential !== undefined ? { credential: input.credential } : {}),
    };
    try {
      const result = await executeChild<(i: ExportInput) => Promise<ExportResult>>(EXPORT_WORKFLOW_TYPE, {
        workflowId: exportWorkflowId(input.org, input.archiveTo, startedAtMs, n),
        args: [child],
        // A cancelled backup cancels its exports, which clean up after themselves.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        staticSummary: `Export ${names.length} of ${input.org}'s repositories for its backup into ${folder}`,
      });
      stored.push({ ...(work.names ? { names } : { part: work.part }), migrationId: result.migrationId, url: result.archive.url ?? result.archive.path, sha256: result.archive.sha256, bytes: result.archive.bytes });
      status.exportsStored++;
      status.backedUp += names.length;
    } catch (err) {
      if (isCancellation(err)) throw err;
      const failure = settledBy(err);
      if (!failure) {
        throw ApplicationFailure.create({ type: BackupFailure.ExportsFailed, nonRetryable: true, message: `export ${n} of ${input.org} failed: ${messageOf(err)}; the run wrote no manifest`, cause: err as Error });
      }
      if (names.length > 1) {
        const [a, b] = halves(names);
        queue.push({ names: a, depth: work.depth + 1 }, { names: b, depth: work.depth + 1 });
        status.halvings++;
      } else status.failed.push({ name: names[0], ...failure });
    }
    tracker.update();
  }
}

/** What a child's failure says, when halving can settle it: GitHub's reason, and whether the repository is gone. */
function settledBy(err: unknown): Omit<FailedRepository, 'name'> | undefined {
  const types: string[] = [];
  let message = '';
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof ApplicationFailure && e.type) {
      types.push(e.type);
      if (!message) message = e.message;
    }
  }
  if (!types.some((t) => SPLITTABLE.has(t))) return undefined;
  const gone = types.some((t) => GONE.has(t));
  const reason = err instanceof ChildWorkflowFailure ? message || messageOf(err) : messageOf(err);
  return { reason, kind: gone ? 'gone' : types.includes(ExportFailure.ExportFailed) ? 'export-failed' : 'error' };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
}
