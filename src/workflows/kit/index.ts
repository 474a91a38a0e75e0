/**
 * The workflow kit: what every longhaul workflow shares. Workflow-safe (covered by the purity lint rule).
 *
 * - `pollUntil`: the one poller (growth schedule, bounds, outage budget, continue-as-new suspension), quiet
 *   (`quiet-poll-schedule`: the polls of a stretch without change as one activity's attempts) where a process allows;
 * - `sendOnce`: the one send-once (lookups over a grace period before any re-send);
 * - `keepTrying`: cleanup calls that retry until success or a permanent failure;
 * - `trackStatus`: query state, current details and search attributes from one `describe`;
 * - `runBudgetReached`: when to continue as new.
 * The pure pieces both sides share (poll schedule and decisions, outage budget, quiet-poll schedule, run budget,
 * `failureFacts`) live in `src/common/`, where models and activities import them without the kit; the kit
 * re-exports them so workflow files import one place.
 */
export * from '../../common/poll-schedule';
export * from '../../common/outage';
export * from './outage-watch';
export * from '../../common/poll-decision';
export * from './poll-until';
export * from '../../common/quiet-poll-schedule';
export * from './send-once-decision';
export * from '../../common/send-once-grace';
export * from './send-once';
export * from './keep-trying';
export * from './status-tracker';
export * from './run-budget';
export * from './validated-input';
export * from './trusted-inputs';
