/**
 * A one-line summary on every activity a workflow schedules ("Poll export 4242 of octo-org", "Unlock
 * alpha"), recorded as the ActivityTaskScheduled event's user metadata, so the Temporal UI's timeline reads
 * like the process instead of a list of function names.
 *
 * `summarized(proxyActivities(…), SUMMARIES)` wraps a proxy with its process's table of summaries (the process's
 * `summaries.ts`): every call goes through `executeWithOptions` with the summary made from the activity's input. The text depends on the input only (deterministic), and
 * user metadata is not compared on replay, so recorded histories without summaries still replay.
 */
import type { ActivityOptions } from '@temporalio/workflow';

/** One summary per activity of `A` (a process's activities' type), each made from the activity's input. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Summaries<A> = { [K in keyof A]: A[K] extends (input: infer I, ...rest: any[]) => unknown ? (input: I) => string : never };

/** "1 repository", "3 events": what several summaries write. */
export const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The summary of one call; never throws (an unexpected input shape falls back to the activity's name). */
export function activitySummary(summaries: object, name: string, input: unknown): string {
  const summarize = (summaries as Record<string, ((input: unknown) => string) | undefined>)[name];
  try {
    return summarize ? summarize(input) : name;
  } catch {
    return name;
  }
}

/** The same proxy, with every call carrying its summary from `summaries` (call-site options still override the rest). */
export function summarized<A extends object>(activities: A, summaries: Summaries<A>): A {
  return new Proxy(activities, {
    get(target, name, receiver) {
      const fn = Reflect.get(target, name, receiver) as A[keyof A];
      if (typeof name !== 'string' || typeof fn !== 'function') return fn;
      const proxied = fn as unknown as { executeWithOptions(options: ActivityOptions, args: unknown[]): Promise<unknown> };
      const call = (...args: unknown[]) => proxied.executeWithOptions({ summary: activitySummary(summaries, name, args[0]) }, args);
      call.executeWithOptions = (options: ActivityOptions, args: unknown[]) => proxied.executeWithOptions({ summary: activitySummary(summaries, name, args[0]), ...options }, args);
      return call;
    },
  });
}
