/**
 * Activity options shared by workflows. Retries are bounded: permanent failures are non-retryable at
 * the source, and every other failure stops after a fixed number of attempts, so no workflow retries
 * forever. Server-demanded waits arrive as `nextRetryDelay` and override the intervals below.
 */
import type { ActivityOptions } from '@temporalio/workflow';

export const API_CALL: ActivityOptions = {
  startToCloseTimeout: '60 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
    maximumAttempts: 12,
  },
};
