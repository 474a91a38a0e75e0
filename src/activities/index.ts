/**
 * All activities, built from injected dependencies. Workflows import the *type* of this module only.
 * Each API family contributes one factory; add new families here.
 */
import type { ActivityDeps } from './context';
import { createMigrationActivities } from '../processes/org-migration/activities';
import { createGoogleOperationActivities } from '../processes/google-operation/activities';
import { createImportActivities } from '../processes/source-import/activities';
import { createFeedPollActivities } from '../processes/feed-poll/activities';
import { createHookActivities } from '../processes/hook-repair/activities';
import { createScheduleHealthActivities } from '../processes/scheduled-run/activities';

export type { ActivityDeps } from './context';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createMigrationActivities(deps),
    ...createGoogleOperationActivities(deps),
    ...createImportActivities(deps),
    ...createFeedPollActivities(deps),
    ...createHookActivities(deps),
    ...createScheduleHealthActivities(),
  };
}

export type Activities = ReturnType<typeof createActivities>;
