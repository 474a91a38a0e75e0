/**
 * What the lifecycle commands (status, wait, cancel, list, watch) know about each process kind, keyed by
 * workflow type (the workflow function's name): its status line and result text, reusing each process's
 * own `describe…` renderers, and what its cancellation cleaned up.
 */
import { describeOrgMigration, type OrgMigrationResult, type OrgMigrationStatus } from '../processes/org-migration/model';
import { describeSourceImportStatus, type SourceImportResult, type SourceImportStatus } from '../processes/source-import/model';
import { describeOperationStatus, type OperationStatus } from '../processes/google-operation/model';
import { describeFeedOutcome, type FeedPollOutcome } from '../processes/feed-poll/model';
import { apiKeyDelete, dnsChange, feedPollRun, hookPing, logBucketCreate, logBucketUpdate, orgMigration, sourceImport } from '../workflows';
import { describeImportResult } from '../processes/source-import/cli';
import { describeApiKeyDeleteResult, describeBucketResult, describeDnsChangeResult } from '../processes/google-operation/cli';
import { describeMigrationResult } from '../processes/org-migration/cli';
import type { StatusLine } from './kit/run-workflow';
import { Process } from '../common/processes';

export interface ProcessKind {
  /** The `LonghaulProcess` search attribute value(s) of this kind. */
  process: string;
  /** One status line from the `status` query (and a running activity's heartbeat). */
  describeStatus?(status: unknown, heartbeat: unknown, workflowId: string): StatusLine;
  describeResult(result: unknown): string[];
  /** After a cancellation: what the cleanup did (e.g. "unlocked alpha, beta"), from the final status. */
  describeCleanup?(status: unknown): string;
}

/** A Google operation: the shared operation status line. */
const googleOperation = (process: string, describeResult: (r: never) => string[]): ProcessKind => ({
  process,
  describeStatus: (s) => describeOperationStatus(s as OperationStatus),
  describeResult: describeResult as (r: unknown) => string[],
  describeCleanup: (s) => describeOperationStatus(s as OperationStatus).line,
});

export const PROCESS_KINDS: Record<string, ProcessKind> = {
  [orgMigration.name]: {
    process: Process.OrgMigration,
    describeStatus: (s, heartbeat) => describeOrgMigration(s as OrgMigrationStatus, heartbeat as { offset?: number; total?: number } | undefined),
    describeResult: (r) => describeMigrationResult(r as OrgMigrationResult),
    describeCleanup: (s) => {
      const unlocked = (s as OrgMigrationStatus).unlockedRepositories;
      return unlocked.length > 0 ? `unlocked ${[...unlocked].sort().join(', ')}` : 'no repository was locked';
    },
  },
  [sourceImport.name]: {
    process: Process.SourceImport,
    describeStatus: (s, _heartbeat, workflowId) => describeSourceImportStatus(s as SourceImportStatus, workflowId),
    describeResult: (r) => describeImportResult(r as SourceImportResult),
    describeCleanup: (s) => describeSourceImportStatus(s as SourceImportStatus).line,
  },
  [apiKeyDelete.name]: googleOperation(Process.ApiKeyDelete, describeApiKeyDeleteResult),
  [logBucketCreate.name]: googleOperation(Process.LogBucketCreate, describeBucketResult),
  [logBucketUpdate.name]: googleOperation(Process.LogBucketUpdate, describeBucketResult),
  [dnsChange.name]: googleOperation(Process.DnsChange, describeDnsChangeResult),
  [feedPollRun.name]: { process: Process.FeedPoll, describeResult: (r) => describeFeedOutcome(r as FeedPollOutcome) },
  [hookPing.name]: { process: Process.HookPing, describeResult: (r) => [`${(r as { hook: string }).hook} answered the ping with ${(r as { status: number }).status}`] },
};

/** The kind of a workflow type; unknown types (other workflows on the namespace) show their raw JSON. */
export function processKind(workflowType: string): ProcessKind {
  return PROCESS_KINDS[workflowType] ?? { process: workflowType, describeResult: (r) => [JSON.stringify(r, null, 2)] };
}
