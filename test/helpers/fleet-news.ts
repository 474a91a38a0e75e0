/**
 * What each worker process of a fleet test knew about rate limits, and what it sent: its `limit-learned` log lines
 * (`LONGHAUL_LOG_FORMAT=json`, from `GovernorLink`) and its sends (`recordSends`, `sent-requests.cjs`), both on the
 * process's own clock. A fleet keeps a limit when no worker sends while a wait it has learned of is in force; how
 * long the news took to reach each worker depends on the machine's speed, so it is reported, not asserted.
 */
import { expect } from 'vitest';
import type { WorkerProcess } from './worker-process';
import { waitFor } from './wait';

/** The prefix of the lines `sent-requests.cjs` writes. */
const SENT_PREFIX = 'longhaul-test-sent ';

export interface SentRequest {
  at: number;
  method: string;
  path: string;
}

export interface LimitLearned {
  /** @format epoch milliseconds — when the worker learned of the wait. */
  at: number;
  /** @format epoch milliseconds — until when the wait it learned of is in force. */
  until: number;
  source: 'answer' | 'governor';
  /** The API of the credential the wait is for, as the worker labels it. */
  api?: string;
  /** `content`: only content creation is closed (a 422 "spammed"); absent: every request. */
  kind?: 'content';
}

function lines(worker: Pick<WorkerProcess, 'output'>): string[] {
  return worker.output().split('\n');
}

/** The requests `worker` sent to `origin` (an emulator's), in order. */
export function sentRequests(worker: Pick<WorkerProcess, 'output'>, origin: string): SentRequest[] {
  return lines(worker)
    .filter((line) => line.startsWith(SENT_PREFIX))
    .map((line) => JSON.parse(line.slice(SENT_PREFIX.length)) as SentRequest & { origin: string })
    .filter((sent) => sent.origin === origin)
    .map(({ at, method, path }) => ({ at, method, path }));
}

/**
 * Waits until the workers' records hold as many requests to `origin` as its server saw (a record is written before
 * the request goes out, but the test reads it from a pipe), and checks they are exactly those: nothing unrecorded.
 */
export async function everySendRecorded(workers: Pick<WorkerProcess, 'output'>[], origin: string, seenByServer: () => number): Promise<void> {
  const recorded = () => workers.reduce((n, w) => n + sentRequests(w, origin).length, 0);
  await waitFor(`every request ${origin} saw in its sender's record`, recorded, (n) => n >= seenByServer(), 30_000, 50);
  expect(recorded()).toBe(seenByServer());
}

/** The prefix of the answer lines `sent-requests.cjs` writes. */
const ANSWER_PREFIX = 'longhaul-test-answer ';

/**
 * The waits `worker`'s answers from `origin` announced, when it read them (`sent-requests.cjs`): what it had been
 * told, whatever it logs (an old release logs no `limit-learned`). GitHub's rules: `x-ratelimit-remaining: 0` until
 * `x-ratelimit-reset` (epoch seconds); a `retry-after` (seconds) from the answer on.
 */
export function waitsAnswered(worker: Pick<WorkerProcess, 'output'>, origin: string): LimitLearned[] {
  const out: LimitLearned[] = [];
  for (const line of lines(worker)) {
    if (!line.startsWith(ANSWER_PREFIX)) continue;
    const answer = JSON.parse(line.slice(ANSWER_PREFIX.length)) as { at: number; origin: string; told: Record<string, string> };
    if (answer.origin !== origin) continue;
    const { 'x-ratelimit-remaining': remaining, 'x-ratelimit-reset': reset, 'retry-after': retryAfter } = answer.told;
    if (remaining === '0' && reset !== undefined) out.push({ at: answer.at, until: Number(reset) * 1000, source: 'answer' });
    if (retryAfter !== undefined) out.push({ at: answer.at, until: answer.at + Number(retryAfter) * 1000, source: 'answer' });
  }
  return out;
}

/** Every wait `worker` learned of (its `limit-learned` log lines), in order. */
export function limitsLearned(worker: WorkerProcess): LimitLearned[] {
  const out: LimitLearned[] = [];
  for (const line of lines(worker)) {
    if (!line.startsWith('{') || !line.includes('"limit-learned"')) continue;
    const entry = JSON.parse(line) as { event?: string; at?: string; until?: string; source?: LimitLearned['source']; kind?: string; api?: string };
    if (entry.event !== 'limit-learned' || !entry.at || !entry.until || !entry.source) continue;
    out.push({ at: Date.parse(entry.at), until: Date.parse(entry.until), source: entry.source, api: entry.api, ...(entry.kind === 'content' ? { kind: 'content' as const } : {}) });
  }
  return out;
}

/** A request held on a worker for a shared limit: its `governor-wait` line with the end its activity shows. */
export interface SharedWaitHeld {
  /** @format epoch milliseconds — when the worker logged it (the wait began). */
  at: number;
  /** @format epoch milliseconds — the end the waiting activity shows (`sharedLimitWait.until`). */
  until: number;
  workflowId: string;
  /** The request that waits, as `METHOD origin/path`. */
  call: string;
}

/** Every wait a request of `worker` spent held on the worker (`governor-wait` lines with `until`), in order. */
export function sharedWaitsHeld(worker: WorkerProcess): SharedWaitHeld[] {
  const out: SharedWaitHeld[] = [];
  for (const line of lines(worker)) {
    if (!line.startsWith('{') || !line.includes('"governor-wait"')) continue;
    const entry = JSON.parse(line) as { event?: string; time?: string; until?: string; workflowId?: string; msg?: string };
    const call = /^(\S+ \S+): waits /.exec(entry.msg ?? '')?.[1];
    if (entry.event !== 'governor-wait' || !entry.time || !entry.until || !entry.workflowId || !call) continue;
    out.push({ at: Date.parse(entry.time), until: Date.parse(entry.until), workflowId: entry.workflowId, call });
  }
  return out;
}

/** The wait `worker` knew of at `at` (its `limit-learned` line in force then, for every request), if any. */
export function limitKnownAt(worker: WorkerProcess, at: number): LimitLearned | undefined {
  return limitsLearned(worker).filter((l) => l.kind === undefined && l.at <= at && at < l.until).at(-1);
}

/**
 * Requests `worker` sent after it had learned of a wait and before that wait's end: a correct fleet sends none.
 * A content wait (`kind: 'content'`) holds back only the requests `isContent` says create content.
 */
export function sentWhileKnownLimited(
  worker: WorkerProcess,
  origin: string,
  isContent: (sent: SentRequest) => boolean = () => false,
): { sent: SentRequest; learned: LimitLearned }[] {
  return sendsWhileKnown(sentRequests(worker, origin), limitsLearned(worker), isContent);
}

/** The `sends` of one sender made after it had learned of a wait (`learned`, on the same clock) and before its end. */
export function sendsWhileKnown(
  sends: SentRequest[],
  learned: LimitLearned[],
  isContent: (sent: SentRequest) => boolean = () => false,
): { sent: SentRequest; learned: LimitLearned }[] {
  return sends.flatMap((sent) => {
    const known = learned.find((l) => l.at < sent.at && sent.at < l.until && (l.kind !== 'content' || isContent(sent)));
    return known ? [{ sent, learned: known }] : [];
  });
}

/**
 * How long the news of each wait took: a wait starts with the first answer that announced it to any worker
 * (`source: 'answer'`); for each other worker, the time until it learned of it (by either source) before it ended.
 */
export function newsDelays(workers: WorkerProcess[]): { wait: number; worker: number; delayMs: number; source: LimitLearned['source'] }[] {
  const learned = workers.map(limitsLearned);
  const announcements = learned
    .flatMap((ls, worker) => ls.filter((l) => l.source === 'answer' && l.kind === undefined).map((l) => ({ ...l, worker })))
    .sort((a, b) => a.at - b.at);
  const waits: (LimitLearned & { worker: number })[] = [];
  for (const a of announcements) if (waits.length === 0 || a.at >= waits[waits.length - 1].until) waits.push(a);
  return waits.flatMap((wait, w) =>
    learned.flatMap((ls, worker) => {
      if (worker === wait.worker) return [];
      const first = ls.find((l) => l.kind === undefined && l.at >= wait.at && l.at < wait.until);
      return first ? [{ wait: w, worker, delayMs: first.at - wait.at, source: first.source }] : [];
    }),
  );
}
