/**
 * All activities, built from injected dependencies. Workflows import the *type* of this module only.
 * Each API family contributes one factory; add new families here.
 */
import type { ActivityDeps } from './context';
import { createMigrationActivities } from './github/migrations';

export type { ActivityDeps } from './context';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createMigrationActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
