/**
 * A one-line summary on every activity a workflow schedules ("Poll export 4242 of octo-org", "Unlock
 * alpha"), recorded as the ActivityTaskScheduled event's user metadata, so the Temporal UI's timeline reads
 * like the process instead of a list of function names.
 *
 * `summarized(proxyActivities(…))` wraps a proxy: every call goes through `executeWithOptions` with the
 * summary made from the activity's name and input. The text depends on the input only (deterministic), and
 * user metadata is not compared on replay, so recorded histories without summaries still replay.
 */
import type { ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { HookTarget } from '../processes/hook-repair/model';
import { archiveFileName } from '../processes/org-migration/model';
import { destinationObjectUrl } from '../object-store/destination';

type Input<K extends keyof Activities> = Parameters<Activities[K]>[0];
type Summaries = { [K in keyof Activities]: (input: Input<K>) => string };

const repo = (t: { owner: string; repo: string }) => `${t.owner}/${t.repo}`;
const hookOf = (t: HookTarget, hookId: number) => `hook ${hookId} of ${'org' in t ? t.org : `${t.owner}/${t.repo}`}`;
const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const SUMMARIES: Summaries = {
  startMigration: (i) => `Start export of ${count(i.repositories.length, 'repository', 'repositories')} of ${i.org}`,
  findMigration: (i) => `Look for an export of ${i.org} already started`,
  getMigration: (i) => `Poll export ${i.migrationId} of ${i.org}`,
  quietGetMigration: (i) => `Poll export ${i.migrationId} of ${i.org} until it changes`,
  // The object it streams into, when the input names one (the worker's default is known only on the worker).
  downloadArchive: (i) => `Download archive of export ${i.migrationId} of ${i.org}${i.archiveTo !== undefined ? ` into ${destinationObjectUrl(i.archiveTo, archiveFileName(i.org, i.migrationId))}` : ''}`,
  checkArchiveDestination: () => 'Check the archive destination',
  abortArchiveUpload: (i) => `Abort the upload of the archive of export ${i.migrationId} of ${i.org}`,
  unlockRepository: (i) => `Unlock ${i.repository}`,
  deleteArchive: (i) => `Delete archive of export ${i.migrationId} of ${i.org}`,
  startImport: (i) => `Start import into ${repo(i)}`,
  getImport: (i) => `Poll import into ${repo(i)}`,
  quietGetImport: (i) => `Poll import into ${repo(i)} until it changes`,
  sendImportCredentials: (i) => `Send source credentials for ${repo(i)}`,
  chooseImportProject: (i) => `Choose the source project for ${repo(i)}`,
  restartImport: (i) => `Restart import into ${repo(i)}`,
  cancelImport: (i) => `Cancel import into ${repo(i)}`,
  listImportAuthors: (i) => `List commit authors of ${repo(i)}`,
  mapImportAuthor: (i) => `Map author ${i.authorId} of ${repo(i)}`,
  listImportLargeFiles: (i) => `List large files of ${repo(i)}`,
  setImportLfs: (i) => `Set LFS ${i.useLfs === 'opt_in' ? 'on' : 'off'} for ${repo(i)}`,
  fetchFeedPage: (i) => `Poll feed ${i.feed}${i.url ? ' (next page)' : ''}`,
  deliverFeedEvents: (i) => `Deliver ${count(i.ids.length, 'event')} of ${i.feed} to the ${i.sink.kind} sink`,
  requestFeedPoll: (i) => `Ask for a poll of ${i.feed}`,
  listHookDeliveries: (i) => `List deliveries of ${hookOf(i.target, i.hookId)}`,
  redeliverHookDelivery: (i) => `Redeliver ${i.deliveryId} of ${hookOf(i.target, i.hookId)}`,
  pingHook: (i) => `Ping ${hookOf(i.target, i.hookId)}`,
  deleteApiKey: (i) => `Delete API key ${i.name}`,
  getApiKey: (i) => `Read API key ${i.name}`,
  getApiKeyOperation: (i) => `Poll ${i.name}`,
  quietGetApiKeyOperation: (i) => `Poll ${i.name} until it changes`,
  createLogBucketAsync: (i) => `Create log bucket ${i.bucketId} in ${i.parent}`,
  updateLogBucketAsync: (i) => `Update ${i.updateMask.join(', ')} of ${i.name}`,
  getLogBucket: (i) => `Read ${i.name}`,
  getLoggingOperation: (i) => `Poll ${i.name}`,
  quietGetLoggingOperation: (i) => `Poll ${i.name} until it changes`,
  cancelLoggingOperation: (i) => `Cancel ${i.name}`,
  findLogBucketOperation: (i) => `Look for a ${i.kind} of ${i.bucketName} already sent`,
  createDnsChange: (i) => `Change ${count((i.additions?.length ?? 0) + (i.deletions?.length ?? 0), 'record')} in zone ${i.zone}`,
  getDnsChange: (i) => `Poll change ${i.changeId} of zone ${i.zone}`,
  quietGetDnsChange: (i) => `Poll change ${i.changeId} of zone ${i.zone} until it changes`,
  findDnsChange: (i) => `Look for a change of zone ${i.zone} already sent`,
  recordScheduledRunFailure: (i) => `Record a failed run of schedule ${i.scheduleId}`,
};

/** The summary of one call; never throws (an unexpected input shape falls back to the activity's name). */
export function activitySummary(name: string, input: unknown): string {
  const summarize = (SUMMARIES as Record<string, ((input: unknown) => string) | undefined>)[name];
  try {
    return summarize ? summarize(input) : name;
  } catch {
    return name;
  }
}

/** The same proxy, with every call carrying its summary (call-site options still override the rest). */
export function summarized<A extends object>(activities: A): A {
  return new Proxy(activities, {
    get(target, name, receiver) {
      const fn = Reflect.get(target, name, receiver) as A[keyof A];
      if (typeof name !== 'string' || typeof fn !== 'function') return fn;
      const proxied = fn as unknown as { executeWithOptions(options: ActivityOptions, args: unknown[]): Promise<unknown> };
      const call = (...args: unknown[]) => proxied.executeWithOptions({ summary: activitySummary(name, args[0]) }, args);
      call.executeWithOptions = (options: ActivityOptions, args: unknown[]) => proxied.executeWithOptions({ summary: activitySummary(name, args[0]), ...options }, args);
      return call;
    },
  });
}
