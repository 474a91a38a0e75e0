/** The Google long-running operations as the rest of longhaul sees them (see src/processes/descriptor.ts). */
import { GOOGLE_OPERATION_FAILURES } from './failures';
import { defineProcess, type ProcessKind } from '../descriptor';
import { Process } from './names';
import { LonghaulProcess, LonghaulState, LonghaulTarget } from '../../common/search-attributes';
import { describeOperationStatus, type OperationStatus } from './model';
import { apiKeyDelete } from './apikey-delete';
import { logBucketCreate, logBucketUpdate } from './log-bucket';
import { dnsChange } from './dns-change';
import { GOOGLE_OPERATION_SUMMARIES } from './summaries';
import { describeApiKeyDeleteResult, describeBucketResult, describeDnsChangeResult, registerGoogleCommands } from './cli';

/** A Google operation: the shared operation status line. */
const operationKind = (process: string, describeResult: (r: never) => string[]): ProcessKind => ({
  process,
  describeStatus: (s) => describeOperationStatus(s as OperationStatus),
  describeResult: describeResult as (r: unknown) => string[],
  describeCleanup: (s) => describeOperationStatus(s as OperationStatus).line,
});

export const googleOperationProcess = defineProcess({
  name: 'google-operation',
  processNames: [Process.ApiKeyDelete, Process.LogBucketCreate, Process.LogBucketUpdate, Process.DnsChange],
  workflows: [apiKeyDelete, logBucketCreate, logBucketUpdate, dnsChange],
  activities: () => import('./activities').then((m) => m.createGoogleOperationActivities),
  summaries: GOOGLE_OPERATION_SUMMARIES,
  failures: [GOOGLE_OPERATION_FAILURES],
  kinds: {
    [apiKeyDelete.name]: operationKind(Process.ApiKeyDelete, describeApiKeyDeleteResult),
    [logBucketCreate.name]: operationKind(Process.LogBucketCreate, describeBucketResult),
    [logBucketUpdate.name]: operationKind(Process.LogBucketUpdate, describeBucketResult),
    [dnsChange.name]: operationKind(Process.DnsChange, describeDnsChangeResult),
  },
  commands: { group: 'start', register: registerGoogleCommands },
  searchAttributes: [LonghaulProcess, LonghaulTarget, LonghaulState],
});
