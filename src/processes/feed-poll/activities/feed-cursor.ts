/**
 * The bridge from a scheduled run to the feed's entity workflow: Update-with-Start on
 * `feed-cursor:<feed>` (started if absent, used if running), then the poll's outcome. The Update id is
 * the run's own id, so a retried activity gets the same poll's outcome instead of polling again.
 *
 * Uses the worker's own Temporal client (`Context.client`); no credentials of any API pass through.
 */
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FEED_CURSOR_WORKFLOW, FeedFailure, feedCursorWorkflowId, pollFeedUpdate, type FeedCursorWorkflow, type FeedPollOutcome, type FeedPollRequest } from '../model';
import { fitSearchAttributes, LonghaulProcess, LonghaulTarget } from '../../../common/search-attributes';
import { Process } from '../names';

export function createFeedCursorActivities() {
  return {
    async requestFeedPoll(input: { feed: string; request: FeedPollRequest }): Promise<FeedPollOutcome> {
      const ctx = Context.current();
      const start = new WithStartWorkflowOperation<FeedCursorWorkflow>(FEED_CURSOR_WORKFLOW, {
        workflowId: feedCursorWorkflowId(input.feed),
        taskQueue: ctx.info.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ feed: input.feed }],
        typedSearchAttributes: fitSearchAttributes([
          { key: LonghaulProcess, value: Process.FeedCursor },
          { key: LonghaulTarget, value: input.feed },
        ]).pairs,
      });
      // The entity may wait for the poll interval and retry its sink: keep telling Temporal we are alive.
      const beat = setInterval(() => ctx.heartbeat(), 5_000);
      try {
        const poll = async () => {
          const update = await ctx.client.workflow.startUpdateWithStart(pollFeedUpdate, {
            updateId: input.request.requestId,
            args: [input.request],
            waitForStage: 'ACCEPTED',
            startWorkflowOperation: start,
          });
          return update.result();
        };
        // Give way when cancelled (worker shutdown included): the entity runs on workers too, and a worker
        // that waits for it while draining would wait forever. A retry asks for the same Update again.
        return await Promise.race([poll(), ctx.cancelled]);
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) {
          const cause = err.cause;
          // The cursor refused because it is stopping, or its run ended (continue-as-new) before taking the
          // poll: the next attempt reaches the run that continues (or a fresh cursor).
          const retryable =
            cause instanceof ApplicationFailure && (cause.type === FeedFailure.CursorStopping || /completed before the update/i.test(cause.message));
          throw ApplicationFailure.create({
            type: retryable ? FeedFailure.CursorStopping : FeedFailure.PollFailed,
            message: `poll of ${input.feed} failed: ${cause?.message ?? err.message}`,
            nonRetryable: !retryable,
            cause: err,
          });
        }
        throw err;
      } finally {
        clearInterval(beat);
      }
    },
  };
}
