/** How the kit classifies an activity's failure: transient (wait it out), permanent (stop), or cancelled. */
import { describe, expect, it } from 'vitest';
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { failureFacts, workerGone } from '../../src/common/activity-failures';

const activityFailed = (cause: Error) => new ActivityFailure('activity failed', 'getMigration', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, undefined, cause);

describe('failureFacts', () => {
  it('treats retryable failures and the HTTP core giving up on an outage or rate limit as transient', () => {
    expect(failureFacts(activityFailed(ApplicationFailure.retryable('502 <html>', 'ServerError'))).kind).toBe('transient');
    expect(failureFacts(activityFailed(ApplicationFailure.nonRetryable('gave up after 10 attempts', 'TransientRetriesExhaustedError'))).kind).toBe('transient');
    expect(failureFacts(activityFailed(ApplicationFailure.nonRetryable('still limited', 'RateLimitRetriesExhaustedError'))).notProcessed).toBe(true);
    expect(failureFacts(activityFailed(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE)))).toMatchObject({ kind: 'transient', type: 'ActivityTimeout' });
  });

  it('treats a malformed answer as an unknown outcome, even once its budget is spent: never permanent, never "not processed"', () => {
    for (const failure of [ApplicationFailure.retryable('HTML page', 'MalformedAnswer'), ApplicationFailure.nonRetryable('HTML page', 'MalformedAnswer')]) {
      expect(failureFacts(activityFailed(failure))).toMatchObject({ kind: 'transient', type: 'MalformedAnswer', notProcessed: false });
    }
  });

  it('treats non-retryable API answers as permanent and cancellation as cancellation', () => {
    expect(failureFacts(activityFailed(ApplicationFailure.nonRetryable('404', 'NotFoundError')))).toMatchObject({ kind: 'permanent', type: 'NotFoundError', message: '404' });
    expect(failureFacts(new CancelledFailure('cancelled')).kind).toBe('cancelled');
  });

  it('reads the wait the server demanded', () => {
    const limited = ApplicationFailure.create({ type: 'SecondaryRateLimitError', message: 'limited', details: [{ retryDelayMs: 61_000 }] });
    expect(failureFacts(activityFailed(limited))).toMatchObject({ kind: 'transient', demandedDelayMs: 61_000, notProcessed: true });
  });
});

describe('workerGone', () => {
  it('is a schedule-to-start timeout only (the worker of a worker-specific queue took no task), not a timeout of a running attempt', () => {
    expect(workerGone(activityFailed(new TimeoutFailure('timed out', undefined, TimeoutType.SCHEDULE_TO_START)))).toBe(true);
    expect(workerGone(activityFailed(new TimeoutFailure('timed out', undefined, TimeoutType.HEARTBEAT)))).toBe(false);
    expect(workerGone(activityFailed(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE)))).toBe(false);
    expect(workerGone(activityFailed(ApplicationFailure.retryable('502', 'ServerError')))).toBe(false);
    expect(workerGone(new TimeoutFailure('timed out', undefined, TimeoutType.SCHEDULE_TO_START))).toBe(false);
  });
});
