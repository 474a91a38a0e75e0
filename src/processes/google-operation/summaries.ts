/**
 * The one-line summary of each of this process's activities in the Temporal UI (`summarized` of the workflow kit):
 * made from the activity's input only, so deterministic. A new activity without one fails the typecheck.
 */
import { count, type Summaries } from '../../workflows/kit/activity-summaries';
import type { GoogleOperationActivities } from './activities';

export const GOOGLE_OPERATION_SUMMARIES: Summaries<GoogleOperationActivities> = {
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
};
