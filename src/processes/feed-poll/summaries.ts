/**
 * The one-line summary of each of this process's activities in the Temporal UI (`summarized` of the workflow kit):
 * made from the activity's input only, so deterministic. A new activity without one fails the typecheck.
 */
import { count, type Summaries } from '../../workflows/kit/activity-summaries';
import type { FeedPollActivities } from './activities';

export const FEED_POLL_SUMMARIES: Summaries<FeedPollActivities> = {
  fetchFeedPage: (i) => `Poll feed ${i.feed}${i.url ? ' (next page)' : ''}`,
  deliverFeedEvents: (i) => `Deliver ${count(i.ids.length, 'event')} of ${i.feed} to the ${i.sink.kind} sink`,
  requestFeedPoll: (i) => `Ask for a poll of ${i.feed}`,
};
