/**
 * One clock for a test, its emulator and its activities' HTTP clients: the wall clock on the shared dev server, or
 * the time of a time-skipping test environment, so that an emulated export of an hour, a rate-limit window or a
 * five-minute outage (fault rules with `activeFromMs`/`activeUntilMs`) lasts as long as the workflow's timers say
 * and costs seconds of wall time.
 *
 * The test server's time is the wall clock plus what it skipped. It only skips while no activity runs and the test
 * awaits a result (`handle.result()`, `env.sleep()`), so reading it afresh when an activity starts and when the
 * emulator answers a request keeps every reading in between exact: `startStack({ env })` wires both.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

export interface TestClock {
  /** Epoch ms, synchronously: the last reading plus the wall time since. */
  now(): number;
  /** Reads the time afresh (it may have skipped since) and returns it. */
  sync(): Promise<number>;
}

export const wallClock: TestClock = { now: () => Date.now(), sync: async () => Date.now() };

/** The time-skipping environment's time. */
export function skippingClock(env: TestWorkflowEnvironment): TestClock {
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;
  return {
    now,
    sync: async () => {
      const serverMs = await env.currentTimeMs();
      // The reading is already a little old when it arrives: never step back.
      offsetMs = Math.max(offsetMs, serverMs - Date.now());
      return now();
    },
  };
}

/** Reads the clock afresh before every activity, so an HTTP client's rate-limit gate sees the time after a skip. */
export function clockSyncInterceptor(clock: TestClock): ActivityInterceptorsFactory {
  return () => ({
    inbound: {
      async execute(input, next) {
        await clock.sync();
        return next(input);
      },
    },
  });
}
