/**
 * Organization migration (spec 002), durably: start the export exactly once → poll with durable,
 * growing timers until `exported` or `failed` → download the archive through the 302 → unlock the
 * repositories → optionally delete the archive.
 *
 * Whatever happens after the export started (failure, timeout, cancellation), every repository this
 * workflow locked is unlocked in a non-cancellable scope before the workflow ends.
 */
import {
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { MigrationSummary } from '../activities/github/migrations';
import { API_CALL } from './activity-options';
import { activityCause, certainlyNotProcessed, demandedDelayMs } from './activity-failures';
import {
  DEFAULT_POLL,
  migrationInputProblems,
  nextPollInterval,
  type OrgMigrationInput,
  type OrgMigrationResult,
  type OrgMigrationStatus,
} from '../common/migration-input';
import { LonghaulOrg, LonghaulProcess, LonghaulState, LonghaulTarget } from '../common/search-attributes';

export const migrationStatusQuery = defineQuery<OrgMigrationStatus>('status');

/** Failure types this workflow ends with (stable strings for callers). */
export const MigrationFailure = {
  InvalidInput: 'InvalidMigrationInput',
  ExportFailed: 'MigrationExportFailed',
  TimedOut: 'MigrationTimedOut',
  StartFailed: 'MigrationStartFailed',
  /** Some repositories could not be unlocked; `details[0].stillLocked` names them. */
  UnlockFailed: 'MigrationUnlockFailed',
} as const;

/** The API-call activities, with the input's `apiCallTimeoutMs` when it sets one. */
function apiActivities(input: OrgMigrationInput) {
  const options = input.apiCallTimeoutMs !== undefined ? { ...API_CALL, startToCloseTimeout: input.apiCallTimeoutMs } : API_CALL;
  return {
    api: proxyActivities<Activities>(options),
    /** The start call is retried by the workflow itself, so it can look for the migration between tries. */
    startOnce: proxyActivities<Activities>({ ...options, retry: { maximumAttempts: 1 } }),
  };
}

const download = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

const MAX_START_TRIES = 6;
/** Tolerated difference between our clock and the server's when matching `created_at`. */
const CLOCK_SKEW_MARGIN_MS = 5 * 60 * 1000;

export async function orgMigration(input: OrgMigrationInput): Promise<OrgMigrationResult> {
  const problems = migrationInputProblems(input);
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(`invalid migration input: ${problems.join('; ')}`, MigrationFailure.InvalidInput, { problems });
  }
  const poll = { ...DEFAULT_POLL, ...input.poll };
  const { api } = apiActivities(input);
  const status: OrgMigrationStatus = { phase: 'starting', org: input.org, polls: 0, unlockedRepositories: [] };
  setHandler(migrationStatusQuery, () => status);
  const show = (state?: string) => {
    if (state !== undefined && state !== status.state) {
      status.state = state;
      upsertSearchAttributes([{ key: LonghaulState, value: state }]);
    }
    const parts = [`phase: ${status.phase}`];
    if (status.migrationId !== undefined) parts.push(`migration ${status.migrationId}`);
    if (status.state) parts.push(`state: ${status.state}`);
    if (status.download) parts.push(`downloaded ${status.download.offset}${status.download.total ? ` of ${status.download.total}` : ''} bytes`);
    setCurrentDetails(parts.join(' · '));
  };
  upsertSearchAttributes([
    { key: LonghaulProcess, value: 'org-migration' },
    { key: LonghaulOrg, value: input.org },
    { key: LonghaulTarget, value: input.repositories.join(',') || '(org metadata)' },
  ]);
  show('starting');

  const migration = await startExactlyOnce(input);
  status.migrationId = migration.id;
  const locked = migration.lockRepositories ? [...migration.repositories] : input.lockRepositories ? [...input.repositories] : [];

  const unlockAll = async () => {
    status.phase = 'unlocking';
    show();
    // In parallel: each unlock is its own retried activity, and one slow repository must not hold up the rest.
    const pending = locked.filter((repository) => !status.unlockedRepositories.includes(repository));
    const outcomes = await Promise.allSettled(
      pending.map(async (repository) => {
        await api.unlockRepository({ org: input.org, migrationId: migration.id, repository });
        status.unlockedRepositories.push(repository);
      }),
    );
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) {
      const stillLocked = locked.filter((repository) => !status.unlockedRepositories.includes(repository));
      throw ApplicationFailure.create({
        type: MigrationFailure.UnlockFailed,
        nonRetryable: true,
        message:
          `could not unlock ${stillLocked.join(', ')} of migration ${migration.id}: ${failed.reason instanceof Error ? failed.reason.message : String(failed.reason)}; ` +
          `unlock by hand with DELETE /orgs/${input.org}/migrations/${migration.id}/repos/{repo}/lock`,
        details: [{ migrationId: migration.id, stillLocked }],
        cause: failed.reason instanceof Error ? failed.reason : undefined,
      });
    }
  };

  try {
    // Wait with durable timers; the interval grows to the bound.
    status.phase = 'waiting';
    show(migration.state);
    // Poll times are anchored to the start (not to the end of the previous poll), so the latency of
    // each poll does not push the schedule back.
    const waitStartedAt = Date.now();
    let interval = poll.initialIntervalMs;
    let nextPollAt = waitStartedAt + interval;
    let state = migration.state;
    while (state !== 'exported' && state !== 'failed') {
      if (nextPollAt - waitStartedAt > poll.timeoutMs) {
        throw ApplicationFailure.nonRetryable(
          `migration ${migration.id} of ${input.org} was still ${state} after ${Math.round((Date.now() - waitStartedAt) / 1000)} s`,
          MigrationFailure.TimedOut,
          { migrationId: migration.id, state },
        );
      }
      status.nextPollInMs = Math.max(0, nextPollAt - Date.now());
      if (status.nextPollInMs > 0) await sleep(status.nextPollInMs);
      interval = nextPollInterval(interval, poll);
      nextPollAt += interval;
      state = (await api.getMigration({ org: input.org, migrationId: migration.id })).state;
      status.polls++;
      show(state);
    }
    status.nextPollInMs = undefined;
    if (state === 'failed') {
      throw ApplicationFailure.nonRetryable(
        `migration ${migration.id} of ${input.org} failed on the server while exporting ${input.repositories.join(', ') || 'organization metadata'}`,
        MigrationFailure.ExportFailed,
        { migrationId: migration.id },
      );
    }

    status.phase = 'downloading';
    show();
    const dir = (input.downloadDir ?? 'archives').replace(/\/+$/, '');
    const archive = await download.downloadArchive({ org: input.org, migrationId: migration.id, path: `${dir}/${input.org}-migration-${migration.id}.tar.gz` });
    status.download = { offset: archive.bytes, total: archive.bytes };

    await unlockAll();
    if (input.deleteArchiveAfterDownload) {
      status.phase = 'deleting-archive';
      show();
      await api.deleteArchive({ org: input.org, migrationId: migration.id });
    }
    status.phase = 'done';
    show('exported');
    return {
      migrationId: migration.id,
      state: 'exported',
      archive: { path: archive.path, bytes: archive.bytes, sha256: archive.sha256 },
      // In the order they were given (the unlocks ran in parallel).
      unlockedRepositories: locked.filter((repository) => status.unlockedRepositories.includes(repository)),
    };
  } catch (err) {
    const cancelled = isCancellation(err);
    status.error = err instanceof Error ? err.message : String(err);
    // Never leave repositories locked, even when the workflow is being cancelled.
    try {
      await CancellationScope.nonCancellable(unlockAll);
    } catch (unlockErr) {
      // Both matter: what ended the migration, and which repositories are still locked.
      status.phase = 'failed';
      show();
      const unlock = unlockErr as ApplicationFailure;
      throw ApplicationFailure.create({
        type: MigrationFailure.UnlockFailed,
        nonRetryable: true,
        message: `${status.error}; and ${unlock.message}`,
        details: unlock.details ?? undefined,
        cause: err instanceof Error ? err : undefined,
      });
    }
    status.phase = cancelled ? 'cancelled' : 'failed';
    show(cancelled ? 'cancelled' : status.state);
    throw err;
  }
}

/**
 * POSTs the export once. When a try's outcome is unknown (timeout or connection lost after sending,
 * 5xx), it looks for the migration that try may have created before trying again; when the server
 * certainly rejected the try (rate limit), it waits as told and tries again.
 */
async function startExactlyOnce(input: OrgMigrationInput): Promise<MigrationSummary> {
  const notBefore = new Date(Date.now() - CLOCK_SKEW_MARGIN_MS).toISOString();
  const startInput = {
    org: input.org,
    repositories: input.repositories,
    lockRepositories: input.lockRepositories,
    excludeMetadata: input.excludeMetadata,
    excludeGitData: input.excludeGitData,
    excludeAttachments: input.excludeAttachments,
    excludeReleases: input.excludeReleases,
    excludeOwnerProjects: input.excludeOwnerProjects,
    orgMetadataOnly: input.orgMetadataOnly,
  };
  const { api, startOnce } = apiActivities(input);
  let lastError: unknown;
  for (let attempt = 1; attempt <= MAX_START_TRIES; attempt++) {
    // A try (and, when its outcome is unknown, the search for what it created) runs to the end even when
    // the workflow is cancelled meanwhile: a migration the server created holds locks, so the workflow
    // must know it to unlock. The cancellation surfaces at the next cancellable step.
    const outcome = await CancellationScope.nonCancellable(async (): Promise<{ migration: MigrationSummary } | { error: unknown; failure?: ApplicationFailure }> => {
      try {
        return { migration: await startOnce.startMigration(startInput) };
      } catch (err) {
        const failure = activityCause(err);
        if (failure?.nonRetryable) throw err;
        if (!certainlyNotProcessed(failure)) {
          const existing = await api.findMigration({ org: input.org, repositories: input.repositories, notBefore });
          if (existing) return { migration: existing };
        }
        return { error: err, failure };
      }
    });
    if ('migration' in outcome) return outcome.migration;
    lastError = outcome.error;
    await sleep(demandedDelayMs(outcome.failure) ?? Math.min(60_000, 1_000 * 2 ** (attempt - 1)));
  }
  throw ApplicationFailure.nonRetryable(
    `could not start the migration of ${input.org} after ${MAX_START_TRIES} tries: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
    MigrationFailure.StartFailed,
    undefined,
  );
}
