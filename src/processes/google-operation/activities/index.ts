/**
 * The Google operation's activities: one factory per API the one Operation workflow drives (API-key delete,
 * log buckets, DNS changes), each one HTTP call per activity; `operations.ts` reads a long-running Operation
 * the same way for the two APIs that answer with one.
 */
import type { ActivityDeps } from '../../../activities/context';
import { createApiKeyActivities } from './apikeys';
import { createDnsActivities } from './dns';
import { createLogBucketActivities } from './log-buckets';

export function createGoogleOperationActivities(deps: ActivityDeps) {
  return {
    ...createApiKeyActivities(deps),
    ...createLogBucketActivities(deps),
    ...createDnsActivities(deps),
  };
}

/** The Google operation's activities, as its workflows proxy them. */
export type GoogleOperationActivities = ReturnType<typeof createGoogleOperationActivities>;
