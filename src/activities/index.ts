/**
 * All activities, built from injected dependencies. Workflows import the *type* of this module only.
 * Each API family contributes one factory; add new families here.
 */
import type { ActivityDeps } from './context';
import { createMigrationActivities } from '../processes/org-migration/activities';
import { createGoogleOperationActivities } from '../processes/google-operation/activities';
import { createImportActivities } from '../processes/source-import/activities';
import { createFeedActivities } from './github/feeds';
import { createHookActivities } from './github/hooks';
import { createSinkActivities } from './sinks';
import { createFeedCursorActivities } from './temporal/feed-cursor';
import { createScheduleHealthActivities } from './temporal/schedule-health';

export type { ActivityDeps } from './context';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createMigrationActivities(deps),
    ...createGoogleOperationActivities(deps),
    ...createImportActivities(deps),
    ...createFeedActivities(deps),
    ...createHookActivities(deps),
    ...createSinkActivities(deps),
    ...createFeedCursorActivities(),
    ...createScheduleHealthActivities(),
  };
}

export type Activities = ReturnType<typeof createActivities>;
