/** The activity feed's polling as the rest of longhaul sees it (see src/processes/descriptor.ts). */
import { FEED_FAILURES, SINK_FAILURES } from './failures';
import { defineProcess } from '../descriptor';
import { Process } from './names';
import { LonghaulProcess, LonghaulState, LonghaulTarget } from '../../common/search-attributes';
import { describeFeedOutcome, type FeedPollOutcome } from './model';
import { feedCursor, feedPollRun } from './workflow';
import { FEED_POLL_SUMMARIES } from './summaries';
import { registerFeedCommands } from './cli';
import { FEED_SCHEDULE_PREFIX } from './cli-schedule';

export const feedPollProcess = defineProcess({
  name: 'feed-poll',
  processNames: [Process.FeedPoll, Process.FeedCursor],
  workflows: [feedPollRun, feedCursor],
  activities: () => import('./activities').then((m) => m.createFeedPollActivities),
  summaries: FEED_POLL_SUMMARIES,
  failures: [FEED_FAILURES, SINK_FAILURES],
  kinds: {
    [feedPollRun.name]: { process: Process.FeedPoll, describeResult: (r) => describeFeedOutcome(r as FeedPollOutcome) },
  },
  commands: { group: 'start', register: registerFeedCommands },
  searchAttributes: [LonghaulProcess, LonghaulTarget, LonghaulState],
  schedules: [{ idPrefix: FEED_SCHEDULE_PREFIX, workflowType: feedPollRun.name }],
});
