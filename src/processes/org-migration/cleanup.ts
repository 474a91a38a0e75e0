/**
 * The end of an org migration: unlocking what the export locked and deleting the archive, with the kit's
 * `keepTrying` (until success or a permanent failure), in parallel batches, suspended for continue-as-new when
 * the run's event budget is reached (thousands of repositories, or cleanup through a long outage). Workflow
 * code, not a workflow (not exported from the index).
 */
import { ApplicationFailure, CancellationScope, patched } from '@temporalio/workflow';
import type { MigrationActivityFunctions } from './activities';
import { keepTrying, MAX_EVENTS_PER_RUN, runBudgetReached, type StatusTracker } from '../../workflows/kit';
import { archiveFileName, MigrationFailure, type MigrationEnding, type OrgMigrationInput, type OrgMigrationResult, type OrgMigrationStatus } from './model';
import { summarizeList } from '../../common/search-attributes';

/** Unlocks run in parallel, this many at a time (each is its own activity). */
export const UNLOCK_BATCH = 100;
/** History events one unlock costs (scheduled, started, completed), plus a margin for workflow tasks. */
export const EVENTS_PER_UNLOCK = 4;
/** A batch starts only while the run has room for it. */
const CLEANUP_EVENT_BUDGET = MAX_EVENTS_PER_RUN - UNLOCK_BATCH * EVENTS_PER_UNLOCK - 200;

export interface Migration {
  id: number;
  /** The repositories the migration locked: unlocked at the end, whatever happens. */
  locked: string[];
}

/** The cleanup calls the workflow's activities include (`migrationActivities` in `workflow.ts`). */
export interface CleanupActivities {
  cleanup: Pick<MigrationActivityFunctions, 'unlockRepository' | 'deleteArchive' | 'abortArchiveUpload'>;
}

export interface Cleanup {
  input: OrgMigrationInput;
  migration: Migration;
  acts: CleanupActivities;
  status: OrgMigrationStatus;
  tracker: StatusTracker;
}

/** What a run hands to the next when the cleanup is not finished: the same input, resumed at the ending. */
export function continueEnding(c: Cleanup, ending: MigrationEnding): OrgMigrationInput {
  return { ...c.input, resume: { migrationId: c.migration.id, locked: c.migration.locked, status: c.status, ending } };
}

/**
 * Unlocks every repository still locked. `suspended` when the run's budget ran out first (the caller
 * continues as new); throws `MigrationUnlockFailed` naming what is still locked when an unlock failed for good.
 */
export async function unlockAll(c: Cleanup): Promise<'done' | 'suspended'> {
  const { input, migration, acts, status, tracker } = c;
  status.phase = 'unlocking';
  tracker.update();
  const failures: string[] = [];
  let suspended = false;
  const suspend = () => runBudgetReached(Math.min(CLEANUP_EVENT_BUDGET, input.eventsPerRun ?? MAX_EVENTS_PER_RUN));
  for (;;) {
    const pending = migration.locked.filter((repository) => !status.unlockedRepositories.includes(repository));
    if (pending.length === 0 || failures.length > 0 || suspended) break;
    if (suspend()) return 'suspended';
    await Promise.all(
      pending.slice(0, UNLOCK_BATCH).map(async (repository) => {
        const outcome = await keepTrying(() => acts.cleanup.unlockRepository({ org: input.org, migrationId: migration.id, repository }), { outage: input.outage, suspend, what: `unlock ${repository}` });
        if (outcome.ok) status.unlockedRepositories.push(repository);
        else if (outcome.why === 'suspended') suspended = true;
        else failures.push(`${repository}: ${outcome.message}`);
      }),
    );
    tracker.update();
  }
  if (failures.length > 0) {
    const stillLocked = migration.locked.filter((repository) => !status.unlockedRepositories.includes(repository));
    throw ApplicationFailure.create({
      type: MigrationFailure.UnlockFailed,
      nonRetryable: true,
      message:
        `could not unlock ${summarizeList(stillLocked, 500)} of migration ${migration.id} (${failures[0]}${failures.length > 1 ? `; and ${failures.length - 1} more` : ''}); ` +
        `unlock by hand with DELETE /orgs/${input.org}/migrations/${migration.id}/repos/{repo}/lock`,
      details: [{ migrationId: migration.id, stillLocked }],
    });
  }
  return suspended ? 'suspended' : 'done';
}

/** Where archives go in the worker's data directory unless the input says otherwise. */
export const DEFAULT_DOWNLOAD_DIR = 'archives';

/** Where the archive of `migrationId` is downloaded: the local file, whose name is also the object's under a destination. */
export function archivePath(input: OrgMigrationInput, migrationId: number): string {
  const dir = (input.downloadDir ?? DEFAULT_DOWNLOAD_DIR).replace(/\/+$/, '');
  return `${dir}/${archiveFileName(input.org, migrationId)}`;
}

/**
 * `patched()` id: a migration that fails or is cancelled mid-download aborts the archive's upload from the
 * workflow, once its repositories are unlocked, since no download attempt may be alive to do it (the last one
 * failed retryable, or the cancellation came between attempts, or the attempt's own abort failed). Runs started
 * before it have no such activity.
 */
const ARCHIVE_UPLOAD_ABORTED_PATCH = 'archive-upload-aborted';

/**
 * Drops the upload the download left open in the object store (the activity resolves the destination as the
 * download did; the local directory keeps its `.part`). Not cancellable; tried on the outage budget, and a
 * failure is logged (`cleanup-failed`) without changing how the migration ends.
 */
export async function abortUpload(c: Cleanup): Promise<void> {
  if (!patched(ARCHIVE_UPLOAD_ABORTED_PATCH)) return;
  const { input, migration, acts } = c;
  const request = { org: input.org, migrationId: migration.id, path: archivePath(input, migration.id), ...(input.archiveTo !== undefined ? { archiveTo: input.archiveTo } : {}) };
  await CancellationScope.nonCancellable(() => keepTrying(() => acts.cleanup.abortArchiveUpload(request), { outage: input.outage, what: `abort the archive upload of export ${migration.id}` }));
}

/** After the download: unlock, delete the archive if asked, and the result — or the input of the next run. */
export async function completeExport(c: Cleanup, archive: OrgMigrationResult['archive']): Promise<{ result: OrgMigrationResult } | { next: OrgMigrationInput }> {
  const { input, migration, acts, status, tracker } = c;
  if ((await unlockAll(c)) === 'suspended') return { next: continueEnding(c, { kind: 'exported', archive }) };
  if (input.deleteArchiveAfterDownload) {
    status.phase = 'deleting-archive';
    tracker.update();
    const deleted = await keepTrying(() => acts.cleanup.deleteArchive({ org: input.org, migrationId: migration.id }), { outage: input.outage, what: `delete archive of export ${migration.id}` });
    if (!deleted.ok) {
      throw ApplicationFailure.create({
        type: MigrationFailure.ArchiveDeleteFailed,
        nonRetryable: true,
        message: `the archive of migration ${migration.id} is downloaded (${archive.path}) and every repository unlocked, but deleting it on the server failed: ${deleted.message}; delete it by hand with DELETE /orgs/${input.org}/migrations/${migration.id}/archive`,
        details: [{ migrationId: migration.id, archive: archive.path }],
        cause: deleted.error instanceof Error ? deleted.error : undefined,
      });
    }
  }
  status.phase = 'done';
  tracker.update();
  return {
    result: {
      migrationId: migration.id,
      state: 'exported',
      archive,
      // In the order they were given (the unlocks ran in parallel).
      unlockedRepositories: migration.locked.filter((repository) => status.unlockedRepositories.includes(repository)),
    },
  };
}

/** Both matter when the unlock fails after another failure: what ended the migration, and what is still locked. */
export function withUnlockFailure(ending: string, unlockErr: unknown, cause?: unknown): ApplicationFailure {
  const unlock = unlockErr as ApplicationFailure;
  return ApplicationFailure.create({
    type: MigrationFailure.UnlockFailed,
    nonRetryable: true,
    message: `${ending}; and ${unlock.message}`,
    details: unlock.details ?? undefined,
    cause: cause instanceof Error ? cause : undefined,
  });
}
