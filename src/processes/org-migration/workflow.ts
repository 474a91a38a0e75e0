/**
 * Organization migration (spec 002), durably: start the export exactly once → poll with durable, growing
 * timers until `exported` or `failed` (waiting out API outages, continuing as new before the history grows
 * too long) → download the archive through the 302 → unlock the repositories → optionally delete the archive.
 *
 * Whatever happens once the start call may have reached the server (failure, time bound, cancellation),
 * every repository the migration locked is unlocked in a non-cancellable scope before the workflow ends;
 * cleanup calls are retried until they succeed or fail permanently, and a permanent failure names what is
 * left to do by hand (`cleanup.ts`).
 */
import { ApplicationFailure, CancellationScope, CancelledFailure, continueAsNew, isCancellation, patched, proxyActivities, upsertMemo, workflowInfo } from '@temporalio/workflow';
import { CLOCK_SKEW_MS } from '../../common/clock-skew';
import type { MigrationActivityFunctions, MigrationSummary } from './activities';
import { CLEANUP, DOWNLOAD, POLL, QUIET_POLL, READ, SEND_ONCE, withCallTimeout } from '../../workflows/kit/activity-options';
import { summarized } from '../../workflows/kit/activity-summaries';
import { MIGRATION_SUMMARIES } from './summaries';
import { activityCause, failureFacts } from '../../common/activity-failures';
import { asConditional, keepTrying, MAX_EVENTS_PER_RUN, pollUntil, quietWherePatched, refuseUntrusted, resolvePollBounds, runBudgetReached, sendOnce, statusQuery, trackStatus, upsertAttributes, validatedWorkflow } from '../../workflows/kit';
import { MIGRATION_FAILURES } from './failures';
import { dataPathRefusal } from '../../common/data-paths';
import {
  ARCHIVE_MEMO,
  archiveFileName,
  DEFAULT_POLL,
  describeOrgMigration,
  MIGRATION_FLAGS,
  MigrationFailure,
  migrationEnded,
  OrgMigrationInputSchema,
  newMigrationStatus,
  type MigrationArchive,
  type MigrationEnding,
  type OrgMigrationInput,
  type OrgMigrationResult,
  type OrgMigrationStatus,
} from './model';
import { LonghaulMigrationGuid, summarizeList } from '../../common/search-attributes';
import { destinationObjectUrl, parseDestination } from '../../archive/object-store/destination';
import { ObjectStoreFailure } from '../../archive/object-store/errors';
import {
  abortUpload,
  archivePath,
  DEFAULT_DOWNLOAD_DIR,
  completeExport,
  continueEnding,
  EVENTS_PER_UNLOCK,
  UNLOCK_BATCH,
  unlockAll,
  withUnlockFailure,
  type Cleanup,
  type Migration,
} from './cleanup';

export { MigrationFailure } from './model';

/** The activities of a migration, each kind with its retry preset (and the input's call timeout). */
function migrationActivities(input: OrgMigrationInput) {
  const timeout = input.apiCallTimeoutMs;
  return {
    read: summarized(proxyActivities<MigrationActivityFunctions>(withCallTimeout(READ, timeout)), MIGRATION_SUMMARIES),
    send: summarized(proxyActivities<MigrationActivityFunctions>(withCallTimeout(SEND_ONCE, timeout)), MIGRATION_SUMMARIES),
    poll: summarized(proxyActivities<MigrationActivityFunctions>(withCallTimeout(POLL, timeout)), MIGRATION_SUMMARIES),
    quietPoll: summarized(proxyActivities<MigrationActivityFunctions>(withCallTimeout(QUIET_POLL, timeout)), MIGRATION_SUMMARIES),
    cleanup: summarized(proxyActivities<MigrationActivityFunctions>(withCallTimeout(CLEANUP, timeout)), MIGRATION_SUMMARIES),
    download: summarized(
      proxyActivities<MigrationActivityFunctions>(input.downloadHeartbeatTimeoutMs === undefined ? DOWNLOAD : { ...DOWNLOAD, heartbeatTimeout: input.downloadHeartbeatTimeoutMs }),
      MIGRATION_SUMMARIES,
    ),
  };
}
type MigrationActivities = ReturnType<typeof migrationActivities>;

export const migrationStatusQuery = statusQuery<OrgMigrationStatus>();

/** `patched()` id: a cancelled or failed migration's LonghaulState names its ending. */
const LIST_MIGRATION_ENDING_PATCH = 'list-migration-ending';

/**
 * `patched()` id: before the export is started, the archive's destination is checked with one call to the store
 * (the input's `archiveTo` or the worker's default, which only the activity knows). Runs started before it have
 * no such activity.
 */
const ARCHIVE_DESTINATION_CHECKED_PATCH = 'archive-destination-checked';
/** `patched()` id: the workflow records where its archive went in its memo (`ARCHIVE_MEMO`), which `longhaul list` shows. */
const ARCHIVE_MEMO_PATCH = 'archive-memo';


export const orgMigration = validatedWorkflow(
  'orgMigration',
  {
    what: 'migration input',
    failures: MIGRATION_FAILURES,
    schema: OrgMigrationInputSchema,
    first: (input) => {
      // A bad destination ends with its own type (ArchiveDestinationInvalid, ArchiveDestinationCredential).
      if (typeof input.archiveTo === 'string') parseDestination(input.archiveTo, 'archiveTo');
      // An archive directory outside the data directory is refused before anything is sent (a run resumed after an
      // export keeps going: its download refuses it, and the repositories are unlocked).
      if (input.resume === undefined) refuseUntrusted(dataPathRefusal(input.downloadDir, 'downloadDir'));
    },
  },
  migrate,
);

async function migrate(input: OrgMigrationInput): Promise<OrgMigrationResult> {
  const acts = migrationActivities(input);
  const { resume } = input;
  const status: OrgMigrationStatus = resume ? { ...resume.status, continuedAsNew: resume.status.continuedAsNew + 1 } : newMigrationStatus(input);
  // Histories recorded before a cancelled/failed migration was listed under its ending have no such upsert.
  const tracker = trackStatus(migrationStatusQuery, status, (s) =>
    describeOrgMigration(s, undefined, { listEnding: migrationEnded(s) && patched(LIST_MIGRATION_ENDING_PATCH) }),
  );
  let migration: Migration | undefined = resume ? { id: resume.migrationId, locked: resume.locked } : undefined;
  const cleanup = (m: Migration): Cleanup => ({ input, migration: m, acts, status, tracker });
  if (resume?.ending && migration) return finishEnding(cleanup(migration), resume.ending);
  let next: OrgMigrationInput | undefined;

  try {
    let state = resume?.state;
    if (!migration || state === undefined) {
      if (patched(ARCHIVE_DESTINATION_CHECKED_PATCH)) await checkArchiveDestination(input, acts);
      const started = await startExactlyOnce(input, acts, () => {
        status.startLookups = (status.startLookups ?? 0) + 1;
        tracker.update();
      });
      migration = {
        id: started.id,
        locked: started.lockRepositories ? [...started.repositories] : input.lockRepositories ? [...input.repositories] : [],
      };
      state = started.state;
      status.migrationId = started.id;
      // Recorded at once: another workflow's lookup never adopts a migration recorded here.
      upsertAttributes([{ key: LonghaulMigrationGuid, value: started.guid }]);
    }
    const known = migration;
    status.phase = 'waiting';
    status.state = state;
    tracker.update();

    const finished = (s: string) => s === 'exported' || s === 'failed';
    if (!finished(state)) {
      // The download and the first batch of unlocks after the last poll must fit in the same run too.
      const eventsPerRun = Math.min(input.eventsPerRun ?? MAX_EVENTS_PER_RUN, MAX_EVENTS_PER_RUN) - EVENTS_PER_UNLOCK * Math.min(known.locked.length, UNLOCK_BATCH);
      const waited = await pollUntil<MigrationSummary>(
        {
          what: `migration ${known.id} of ${input.org}`,
          // Conditional: a 304 (unchanged since the last answer's ETag) does not count against the rate limit.
          poll: { conditional: async (etag) => asConditional(await acts.poll.getMigration({ org: input.org, migrationId: known.id, etag })) },
          // Most polls of an export answer 304: as one quiet activity they add nothing to the history.
          quiet: quietWherePatched((request) => acts.quietPoll.quietGetMigration({ org: input.org, migrationId: known.id, ...request })),
          done: (m) => finished(m.state),
          bounds: resolvePollBounds(DEFAULT_POLL, input.poll),
          outage: input.outage,
          state: resume?.poll,
          suspend: () => runBudgetReached(Math.max(eventsPerRun, 50)),
          onProgress: (progress, last) => {
            Object.assign(status, progress);
            if (last) status.state = last.state;
            tracker.update();
          },
          failureTypes: { timedOut: MigrationFailure.TimedOut, pollFailed: MigrationFailure.PollFailed },
          describeLast: (last) => `still ${last?.state ?? state}`,
          details: { migrationId: known.id },
        },
        resume ? ({ state } as MigrationSummary) : undefined,
      );
      if (waited.kind === 'suspended') {
        status.nextPollInMs = undefined;
        next = { ...input, resume: { migrationId: known.id, locked: known.locked, state: waited.last?.state ?? state, poll: waited.state, status } };
      } else state = waited.value.state;
    }

    if (!next) {
      status.nextPollInMs = undefined;
      if (state === 'failed') {
        throw ApplicationFailure.nonRetryable(
          `migration ${known.id} of ${input.org} failed on the server while exporting ${status.target}`,
          MigrationFailure.ExportFailed,
          { migrationId: known.id },
        );
      }
      status.phase = 'downloading';
      const name = archiveFileName(input.org, known.id);
      // The UI's current details name the object while the bytes flow (they are in the activity's heartbeat).
      if (input.archiveTo !== undefined) status.archiveTo = destinationObjectUrl(input.archiveTo, name, 'archiveTo');
      tracker.update();
      // The same activity, in the same place, with or without a destination: histories from before
      // `archiveTo` existed replay unchanged (the activity streams to the store when it has one).
      const path = archivePath(input, known.id);
      const archive = await acts.download.downloadArchive({ org: input.org, migrationId: known.id, path, ...(input.archiveTo !== undefined ? { archiveTo: input.archiveTo } : {}) });
      status.download = { offset: archive.bytes, total: archive.bytes };
      const where = archive.url !== undefined ? { url: archive.url, ...(archive.version !== undefined ? { version: archive.version } : {}) } : {};
      const stored: MigrationArchive = { path: archive.path, bytes: archive.bytes, sha256: archive.sha256, ...where };
      recordArchive(status, stored);
      const done = await completeExport(cleanup(known), stored);
      if ('result' in done) return done.result;
      next = done.next;
    }
  } catch (err) {
    await endWithCleanup(err, migration ? cleanup(migration) : undefined, status, tracker);
  }
  // Between polls (or between batches of unlocks), with everything the next run needs in its input.
  return continueAsNew<typeof orgMigration>(next as OrgMigrationInput);
}

/**
 * Where the archive went, known the moment the download returns whatever chose the destination (the input, the
 * worker's `LONGHAUL_ARCHIVE_TO`, or the worker's disk): in the status (the UI's current details, `status`) and
 * in the memo `longhaul list` reads. Runs recorded before the memo replay without its command.
 */
function recordArchive(status: OrgMigrationStatus, archive: MigrationArchive): void {
  status.archive = { path: archive.path, bytes: archive.bytes, ...(archive.url !== undefined ? { url: archive.url } : {}) };
  if (patched(ARCHIVE_MEMO_PATCH)) upsertMemo({ [ARCHIVE_MEMO]: archive });
}

/** A run resumed after the export ended: the unlocks still to make, then the ending the earlier run reached. */
async function finishEnding(c: Cleanup, ending: MigrationEnding): Promise<OrgMigrationResult> {
  if (ending.kind === 'exported') {
    // The run that stored the archive recorded it; a continued run records it again (its memo may start empty).
    recordArchive(c.status, ending.archive);
    const done = await completeExport(c, ending.archive);
    if ('result' in done) return done.result;
    return continueAsNew<typeof orgMigration>(done.next);
  }
  let unlocked: 'done' | 'suspended';
  try {
    unlocked = await CancellationScope.nonCancellable(() => unlockAll(c));
  } catch (unlockErr) {
    c.status.phase = 'failed';
    c.tracker.update();
    throw withUnlockFailure(ending.message, unlockErr);
  }
  if (unlocked === 'suspended') return continueAsNew<typeof orgMigration>(continueEnding(c, ending));
  if (ending.abortUpload) await abortUpload(c);
  c.status.phase = ending.cancelled ? 'cancelled' : 'failed';
  c.tracker.update();
  // The cancellation request belonged to an earlier run: this one can only report it.
  if (ending.cancelled) throw new CancelledFailure(ending.message);
  throw ApplicationFailure.create({ type: ending.type, nonRetryable: true, message: ending.message, details: ending.details });
}

/** After a failure, time bound or cancellation: unlock what the migration locked (never cancelled), then end with the cause. */
async function endWithCleanup(err: unknown, c: Cleanup | undefined, status: OrgMigrationStatus, tracker: Cleanup['tracker']): Promise<never> {
  const cancelled = isCancellation(err);
  // Ended mid-download: an upload may be open in the object store with no attempt alive to abort it.
  const uploadOpen = status.phase === 'downloading';
  status.error = err instanceof Error ? err.message : String(err);
  status.nextPollInMs = undefined;
  if (c) {
    let unlocked: 'done' | 'suspended';
    try {
      unlocked = await CancellationScope.nonCancellable(() => unlockAll(c));
    } catch (unlockErr) {
      status.phase = 'failed';
      tracker.update();
      throw withUnlockFailure(status.error, unlockErr, err);
    }
    if (unlocked === 'suspended') {
      const failure = err instanceof ApplicationFailure ? err : undefined;
      const type = failure?.type ?? failureFacts(err).type ?? MigrationFailure.ExportFailed;
      return continueAsNew<typeof orgMigration>(continueEnding(c, { kind: 'failed', type, message: status.error, details: failure?.details ?? undefined, cancelled, ...(uploadOpen ? { abortUpload: true } : {}) }));
    }
    if (uploadOpen) await abortUpload(c);
  }
  status.phase = cancelled ? 'cancelled' : 'failed';
  tracker.update();
  throw err;
}

/**
 * The archive's destination, checked before anything is sent to the API: a missing bucket, a refusal or a worker
 * without the store's configuration ends the migration with that type; a store that is down is waited out on the
 * outage budget (`ArchiveStoreUnreachable` after it).
 */
async function checkArchiveDestination(input: OrgMigrationInput, acts: MigrationActivities): Promise<void> {
  const where = { ...(input.archiveTo !== undefined ? { archiveTo: input.archiveTo } : {}), downloadDir: input.downloadDir ?? DEFAULT_DOWNLOAD_DIR };
  const checked = await keepTrying(() => acts.poll.checkArchiveDestination(where), { outage: input.outage });
  if (checked.ok) return;
  const cause = activityCause(checked.error);
  if (checked.why === 'permanent' && cause?.type) {
    // The store's own type, as the workflow's failure (not wrapped in the activity's).
    throw ApplicationFailure.create({ type: cause.type, nonRetryable: true, message: `${cause.message}; no export was started`, details: cause.details ?? undefined });
  }
  throw ApplicationFailure.create({
    type: ObjectStoreFailure.StoreUnreachable,
    nonRetryable: true,
    message: `the archive destination could not be checked (${checked.message}); no export was started`,
    cause: checked.error instanceof Error ? checked.error : undefined,
  });
}

/**
 * POSTs the export at most once in effect (the kit's `sendOnce`): after an unknown outcome it looks for the
 * migration over the grace period before any re-send, and adopts only one with these repositories and flags,
 * created inside this workflow's attempt window, that no other workflow recorded. Non-cancellable while a
 * try is in flight: a migration the server created holds locks, so the workflow must know it to unlock.
 */
async function startExactlyOnce(input: OrgMigrationInput, acts: MigrationActivities, onLookup: () => void): Promise<MigrationSummary> {
  const firstTryAt = Date.now();
  const flags = Object.fromEntries(MIGRATION_FLAGS.filter((f) => input[f] !== undefined).map((f) => [f, input[f] as boolean]));
  try {
    return await sendOnce({
      what: `the export of ${input.org}: ${summarizeList(input.repositories, 300) || '(org metadata)'}`,
      send: () => acts.send.startMigration({ org: input.org, repositories: input.repositories, ...flags }),
      recover: () =>
        acts.read.findMigration({
          org: input.org,
          repositories: input.repositories,
          flags,
          notBefore: new Date(firstTryAt - CLOCK_SKEW_MS.github).toISOString(),
          notAfter: new Date(Date.now() + CLOCK_SKEW_MS.github).toISOString(),
        }),
      onLookup,
      nonCancellable: true,
      failureType: MigrationFailure.StartFailed,
      callTimeoutMs: input.apiCallTimeoutMs,
      graceMs: input.sendOnceGraceMs ?? input.startGraceMs,
      outage: input.outage,
      details: { org: input.org, workflowId: workflowInfo().workflowId },
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    const failure = err as ApplicationFailure;
    if (failure.type !== MigrationFailure.StartFailed) throw err;
    // The start may have reached the server without this workflow learning the migration: say what to check.
    throw ApplicationFailure.create({
      type: MigrationFailure.StartFailed,
      nonRetryable: true,
      message: `${failure.message}; an export may exist that this workflow could not confirm: check GET /orgs/${input.org}/migrations and unlock its repositories by hand if it locked them`,
      details: failure.details ?? undefined,
      cause: failure.cause,
    });
  }
}
