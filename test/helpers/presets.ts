/**
 * The suite's named presets, defined once: poll bounds, an outage and an outage budget that keep a test short
 * without changing what it proves.
 */
import type { PollBounds } from '../../src/common/poll-schedule';
import type { OutageBounds } from '../../src/common/outage';

/** Polls at the kit's floor: every second, never growing. */
export const FAST_POLL = { initialIntervalMs: 1_000, maxIntervalMs: 1_000, backoffFactor: 1 } satisfies PollBounds;

/** `FAST_POLL` that gives up after 5 minutes (Google's validation wants a bound on a run's polls). */
export const FAST_POLL_5_MIN = { ...FAST_POLL, timeoutMs: 5 * 60_000 } satisfies PollBounds;

/** @format milliseconds — the outage the outage tests stage: every call failing for 5 minutes. */
export const SHORT_OUTAGE_MS = 5 * 60_000;

/** The wait between failed calls capped at 20 s, so the end of an outage is noticed soon. */
export const QUICK_OUTAGE_BACKOFF = { maxBackoffMs: 20_000 } satisfies OutageBounds;

/** A quick outage budget: 1 s between failed calls, given up after 2 minutes of failures in a row. */
export const QUICK_OUTAGE_BUDGET = { initialBackoffMs: 1_000, maxBackoffMs: 1_000, budgetMs: 120_000 } satisfies OutageBounds;

/** A budget a test means to see spent: given up after 3 s of failures in a row. */
export const SPENT_OUTAGE_BUDGET = { ...QUICK_OUTAGE_BUDGET, budgetMs: 3_000 } satisfies OutageBounds;
