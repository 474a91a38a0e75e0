/** Feed-polling stacks for integration tests: the test stack, plus each feed's Schedule and cursor cleaned up after. */
import type { EmulatorOptions } from '@longhaul/emulator';
import { feedCursorWorkflowId, feedScheduleId, type FeedCursorStatus, type FeedPollRunInput } from '../../src/processes/feed-poll/model';
import { feedCursorStatusQuery } from '../../src/processes/feed-poll/workflow';
import { upsertFeedSchedule } from '../../src/processes/feed-poll/cli-schedule';
import type { RetryPolicy } from '../../src/http/retry-policy';
import { useStackPerTest, type TestStack } from './stack';

export interface FeedStack extends TestStack {
  /**
   * Creates (or updates) the feed's Schedule; it and the feed's cursor go when the stack stops. Without
   * `everyMs` it is paused: its runs are the ones the test triggers (a trigger starts a run of a paused
   * Schedule), never an hourly one that falls due at the top of the hour in the middle of the test.
   */
  schedule(input: FeedPollRunInput, everyMs?: number): Promise<string>;
  /** Remembers a feed whose cursor the test created without a Schedule. */
  track(feed: string): void;
  cursor(feed: string): Promise<FeedCursorStatus>;
}

/** Feed stacks that tests start for themselves (each with its own emulator options), stopped after their test. */
export function useFeedStacks(): (options: EmulatorOptions, policy?: RetryPolicy) => Promise<FeedStack> {
  const startStack = useStackPerTest();
  return async (emulator, policy) => {
    const stack = await startStack({ emulator, deps: { policy } });
    // The Schedule is deleted before the worker stops, the cursor ended after it: no run is left waiting for one.
    const track = (feed: string) => stack.cleanUpOnStop({ schedules: [feedScheduleId(feed)], workflows: [feedCursorWorkflowId(feed)] });
    return Object.assign(stack, {
      track,
      schedule: async (input: FeedPollRunInput, everyMs?: number) => {
        track(input.feed);
        stack.emulator.feeds.ensure(input.feed);
        const paused = everyMs === undefined;
        return (await upsertFeedSchedule(stack.client, { taskQueue: stack.taskQueue, everyMs: everyMs ?? 60 * 60_000, input, paused })).scheduleId;
      },
      cursor: (feed: string) => stack.client.workflow.getHandle(feedCursorWorkflowId(feed)).query(feedCursorStatusQuery),
    });
  };
}
