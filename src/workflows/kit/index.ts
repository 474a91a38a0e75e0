/**
 * The workflow kit: what every longhaul workflow shares. Workflow-safe (covered by the purity lint rule).
 *
 * - `pollUntil`: the one poller (growth schedule, bounds, outage budget, continue-as-new suspension), quiet
 *   (`quiet-poll-schedule`: the polls of a stretch without change as one activity's attempts) where a process allows;
 * - `sendOnce`: the one send-once (lookups over a grace period before any re-send);
 * - `keepTrying`: cleanup calls that retry until success or a permanent failure;
 * - `trackStatus`: query state, current details and search attributes from one `describe`;
 * - `runBudgetReached`: when to continue as new.
 * The pure decision functions are exported for unit tests and for model files in `src/common/`.
 */
export * from './poll-schedule';
export * from './outage';
export * from './outage-watch';
export * from './poll-decision';
export * from './poll-until';
export * from './quiet-poll-schedule';
export * from './send-once-decision';
export * from './send-once';
export * from './keep-trying';
export * from './status-tracker';
export * from './run-budget';
