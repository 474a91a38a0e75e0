/** A feed-polling stack for integration tests: emulator, worker, client, Schedules and cursors cleaned up after. */
import type { Client } from '@temporalio/client';
import type { Emulator, EmulatorOptions } from '../../src/emulator/emulator';
import { feedCursorWorkflowId, feedScheduleId, type FeedCursorStatus, type FeedPollRunInput } from '../../src/common/feeds';
import { upsertFeedSchedule } from '../../src/temporal/schedules';
import type { ActivityDeps } from '../../src/activities';
import type { RetryPolicy } from '../../src/http/retry-policy';
import { emulatorDeps, startTestEmulator } from './emulator';
import { startTestWorker, testClient, type TestWorker } from './temporal';
import { cleanUp } from './schedules';

export interface FeedStack {
  emulator: Emulator;
  deps: ActivityDeps;
  tw: TestWorker;
  client: Client;
  /** Creates (or updates) the feed's Schedule and remembers the feed for clean-up. */
  schedule(input: FeedPollRunInput, everyMs?: number): Promise<string>;
  cursor(feed: string): Promise<FeedCursorStatus>;
}

export class FeedStacks {
  private stacks: FeedStack[] = [];
  private feeds: string[] = [];

  async start(options: EmulatorOptions, policy?: RetryPolicy): Promise<FeedStack> {
    const emulator = await startTestEmulator(options);
    const deps = await emulatorDeps(emulator, { policy });
    const tw = await startTestWorker(deps);
    // Its own connection: the worker's client closes when a test restarts the worker.
    const client = await testClient();
    const stack: FeedStack = {
      emulator,
      deps,
      tw,
      client,
      schedule: async (input, everyMs = 60 * 60_000) => {
        this.feeds.push(input.feed);
        emulator.feeds.ensure(input.feed);
        return (await upsertFeedSchedule(client, { taskQueue: stack.tw.taskQueue, everyMs, input })).scheduleId;
      },
      cursor: (feed) => client.workflow.getHandle(feedCursorWorkflowId(feed)).query<FeedCursorStatus>('status'),
    };
    this.stacks.push(stack);
    return stack;
  }

  /** Remembers a feed whose cursor the test created without a Schedule. */
  track(feed: string): void {
    this.feeds.push(feed);
  }

  async stopAll(): Promise<void> {
    for (const s of this.stacks) {
      await cleanUp(s.client, this.feeds.map(feedScheduleId));
      // Stop the worker before ending the cursors, so no run is left waiting for one.
      await s.tw.stop();
      await cleanUp(s.client, [], this.feeds.map(feedCursorWorkflowId));
      await s.client.connection.close();
      await s.emulator.close();
    }
    this.stacks = [];
    this.feeds = [];
  }
}
