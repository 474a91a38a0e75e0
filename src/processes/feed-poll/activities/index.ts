/**
 * The feed poll's activities: reading the feed (`feeds.ts`), handing new events to the sink (`sinks/`), and
 * the bridge from a scheduled run to the feed's cursor entity workflow (`feed-cursor.ts`).
 */
import type { ActivityDeps } from '../../../activities/context';
import { createFeedActivities } from './feeds';
import { createFeedCursorActivities } from './feed-cursor';
import { createSinkActivities } from './sinks';

export function createFeedPollActivities(deps: ActivityDeps) {
  return {
    ...createFeedActivities(deps),
    ...createSinkActivities(deps),
    ...createFeedCursorActivities(),
  };
}

/** The feed poll's activities, as its workflows proxy them. */
export type FeedPollActivities = ReturnType<typeof createFeedPollActivities>;
