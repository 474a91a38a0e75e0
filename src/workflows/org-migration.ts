/**
 * Organization migration (spec 002), durably: start the export exactly once → poll with durable, growing
 * timers until `exported` or `failed` (waiting out API outages, continuing as new before the history grows
 * too long) → download the archive through the 302 → unlock the repositories → optionally delete the archive.
 *
 * Whatever happens once the start call may have reached the server (failure, time bound, cancellation),
 * every repository the migration locked is unlocked in a non-cancellable scope before the workflow ends;
 * cleanup calls are retried until they succeed or fail permanently, and a permanent failure names what is
 * left to do by hand.
 */
import { ApplicationFailure, CancellationScope, continueAsNew, defineQuery, isCancellation, proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { MigrationSummary } from '../activities/github/migrations';
import { CLEANUP, DOWNLOAD, POLL, READ, SEND_ONCE, withCallTimeout } from './activity-options';
import { keepTrying, pollUntil, resolvePollBounds, runBudgetReached, sendOnce, trackStatus, MAX_EVENTS_PER_RUN, type StatusTracker } from './kit';
import {
  DEFAULT_POLL,
  describeOrgMigration,
  MIGRATION_FLAGS,
  MigrationFailure,
  migrationInputProblems,
  newMigrationStatus,
  type OrgMigrationInput,
  type OrgMigrationResult,
  type OrgMigrationStatus,
} from '../common/org-migration';
import { LonghaulMigrationGuid, summarizeList } from '../common/search-attributes';

export { MigrationFailure } from '../common/org-migration';

export const migrationStatusQuery = defineQuery<OrgMigrationStatus>('status');

/** Tolerated difference between our clock and the server's when matching `created_at` to our attempt window. */
const CLOCK_SKEW_MARGIN_MS = 60_000;
/** Unlocks run in parallel, this many at a time (each is its own activity). */
const UNLOCK_BATCH = 100;
/** History events one unlock costs (scheduled, started, completed), plus a margin for workflow tasks. */
const EVENTS_PER_UNLOCK = 4;

interface Migration {
  id: number;
  /** The repositories the migration locked: unlocked at the end, whatever happens. */
  locked: string[];
}

function activities(input: OrgMigrationInput) {
  const timeout = input.apiCallTimeoutMs;
  return {
    read: proxyActivities<Activities>(withCallTimeout(READ, timeout)),
    send: proxyActivities<Activities>(withCallTimeout(SEND_ONCE, timeout)),
    poll: proxyActivities<Activities>(withCallTimeout(POLL, timeout)),
    cleanup: proxyActivities<Activities>(withCallTimeout(CLEANUP, timeout)),
    download: proxyActivities<Activities>(DOWNLOAD),
  };
}
type MigrationActivities = ReturnType<typeof activities>;

export async function orgMigration(input: OrgMigrationInput): Promise<OrgMigrationResult> {
  const problems = migrationInputProblems(input);
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(`invalid migration input: ${problems.join('; ')}`, MigrationFailure.InvalidInput, { problems });
  }
  const acts = activities(input);
  const { resume } = input;
  const status: OrgMigrationStatus = resume ? { ...resume.status, continuedAsNew: resume.status.continuedAsNew + 1 } : newMigrationStatus(input);
  const tracker = trackStatus(migrationStatusQuery, status, (s) => describeOrgMigration(s));
  let migration: Migration | undefined = resume ? { id: resume.migrationId, locked: resume.locked } : undefined;
  let next: OrgMigrationInput | undefined;

  try {
    let state = resume?.state;
    if (!migration || state === undefined) {
      const started = await startExactlyOnce(input, acts);
      migration = {
        id: started.id,
        locked: started.lockRepositories ? [...started.repositories] : input.lockRepositories ? [...input.repositories] : [],
      };
      state = started.state;
      status.migrationId = started.id;
      // Recorded at once: another workflow's lookup never adopts a migration recorded here.
      upsertSearchAttributes([{ key: LonghaulMigrationGuid, value: started.guid }]);
    }
    const known = migration;
    status.phase = 'waiting';
    status.state = state;
    tracker.update();

    const finished = (s: string) => s === 'exported' || s === 'failed';
    if (!finished(state)) {
      // What comes after the last poll (download, unlocks, delete) must fit in the same run too.
      const eventsPerRun = Math.min(input.eventsPerRun ?? MAX_EVENTS_PER_RUN, MAX_EVENTS_PER_RUN) - EVENTS_PER_UNLOCK * known.locked.length;
      const waited = await pollUntil<MigrationSummary>(
        {
          what: `migration ${known.id} of ${input.org}`,
          poll: () => acts.poll.getMigration({ org: input.org, migrationId: known.id }),
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
      return await finish(input, known, acts, status, tracker);
    }
  } catch (err) {
    await endWithCleanup(err, input, migration, acts, status, tracker);
  }
  // Between polls, with everything the next run needs in its input.
  return continueAsNew<typeof orgMigration>(next as OrgMigrationInput);
}

/** Download, unlock, delete the archive: the end of a successful export. */
async function finish(input: OrgMigrationInput, migration: Migration, acts: MigrationActivities, status: OrgMigrationStatus, tracker: StatusTracker): Promise<OrgMigrationResult> {
  status.phase = 'downloading';
  tracker.update();
  const dir = (input.downloadDir ?? 'archives').replace(/\/+$/, '');
  const archive = await acts.download.downloadArchive({ org: input.org, migrationId: migration.id, path: `${dir}/${input.org}-migration-${migration.id}.tar.gz` });
  status.download = { offset: archive.bytes, total: archive.bytes };

  await unlockAll(input, migration, acts, status, tracker);
  if (input.deleteArchiveAfterDownload) {
    status.phase = 'deleting-archive';
    tracker.update();
    const deleted = await keepTrying(() => acts.cleanup.deleteArchive({ org: input.org, migrationId: migration.id }), { outage: input.outage });
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
    migrationId: migration.id,
    state: 'exported',
    archive: { path: archive.path, bytes: archive.bytes, sha256: archive.sha256 },
    // In the order they were given (the unlocks ran in parallel).
    unlockedRepositories: migration.locked.filter((repository) => status.unlockedRepositories.includes(repository)),
  };
}

/** Unlocks every repository still locked, in parallel batches; each unlock is retried until it succeeds or fails permanently. */
async function unlockAll(input: OrgMigrationInput, migration: Migration, acts: MigrationActivities, status: OrgMigrationStatus, tracker: StatusTracker): Promise<void> {
  status.phase = 'unlocking';
  tracker.update();
  const pending = migration.locked.filter((repository) => !status.unlockedRepositories.includes(repository));
  const failures: string[] = [];
  for (let i = 0; i < pending.length; i += UNLOCK_BATCH) {
    await Promise.all(
      pending.slice(i, i + UNLOCK_BATCH).map(async (repository) => {
        const outcome = await keepTrying(() => acts.cleanup.unlockRepository({ org: input.org, migrationId: migration.id, repository }), { outage: input.outage });
        if (outcome.ok) status.unlockedRepositories.push(repository);
        else failures.push(`${repository}: ${outcome.message}`);
      }),
    );
  }
  tracker.update();
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
}

/** After a failure, time bound or cancellation: unlock what the migration locked (never cancelled), then end with the cause. */
async function endWithCleanup(
  err: unknown,
  input: OrgMigrationInput,
  migration: Migration | undefined,
  acts: MigrationActivities,
  status: OrgMigrationStatus,
  tracker: StatusTracker,
): Promise<never> {
  const cancelled = isCancellation(err);
  status.error = err instanceof Error ? err.message : String(err);
  status.nextPollInMs = undefined;
  if (migration) {
    try {
      await CancellationScope.nonCancellable(() => unlockAll(input, migration, acts, status, tracker));
    } catch (unlockErr) {
      // Both matter: what ended the migration, and which repositories are still locked.
      status.phase = 'failed';
      tracker.update();
      const unlock = unlockErr as ApplicationFailure;
      throw ApplicationFailure.create({
        type: MigrationFailure.UnlockFailed,
        nonRetryable: true,
        message: `${status.error}; and ${unlock.message}`,
        details: unlock.details ?? undefined,
        cause: err instanceof Error ? err : undefined,
      });
    }
  }
  status.phase = cancelled ? 'cancelled' : 'failed';
  tracker.update();
  throw err;
}

/**
 * POSTs the export at most once in effect (the kit's `sendOnce`): after an unknown outcome it looks for the
 * migration over the grace period before any re-send, and adopts only one with these repositories and flags,
 * created inside this workflow's attempt window, that no other workflow recorded. Non-cancellable while a
 * try is in flight: a migration the server created holds locks, so the workflow must know it to unlock.
 */
async function startExactlyOnce(input: OrgMigrationInput, acts: MigrationActivities): Promise<MigrationSummary> {
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
          notBefore: new Date(firstTryAt - CLOCK_SKEW_MARGIN_MS).toISOString(),
          notAfter: new Date(Date.now() + CLOCK_SKEW_MARGIN_MS).toISOString(),
        }),
      nonCancellable: true,
      failureType: MigrationFailure.StartFailed,
      callTimeoutMs: input.apiCallTimeoutMs,
      graceMs: input.startGraceMs,
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
