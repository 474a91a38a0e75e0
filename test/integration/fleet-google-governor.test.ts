/**
 * Google requests go through the fleet's governor too: two worker PROCESSES poll API-key deletions; the
 * first `429 RESOURCE_EXHAUSTED` with `RetryInfo` that one of them receives closes the Google credential's
 * shared gate, so neither process sends another Google request until the wait the answer asked for ends.
 * Each process is judged by what it knew: its `limit-learned` log lines against the requests it sent
 * (`fleet-news.ts`, on its own clock); a recording proxy in front of the emulator counts the requests and
 * when the 429 went back. A poll waiting on its worker shows "waiting on the shared limit of <credential> until
 * <time>" in its pending activity: read on the server while the proxy keeps back the request it sent after the
 * wait, and compared with what its worker logged (`governor-wait`, `limit-learned`), not sampled during the wait.
 */
import { randomUUID } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { sharedWaitLine, sharedWaitOf } from '../../src/common/shared-wait';
import { apiKeyDelete } from '../../src/processes/google-operation/apikey-delete';
import { TEST_TOKEN } from '../helpers/emulator';
import { useFleetTeardown } from '../helpers/fleet';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { waitFor } from '../helpers/wait';
import { everySendRecorded, limitKnownAt, limitsLearned, newsDelays, sentRequests, sentWhileKnownLimited, sharedWaitsHeld, type LimitLearned, type SharedWaitHeld } from '../helpers/fleet-news';
import { FAST_POLL_5_MIN } from '../helpers/presets';

const fleet = useFleetTeardown();

interface Arrival {
  at: number;
  method: string;
  /** With the query, as sent. */
  path: string;
}

/**
 * A pass-through proxy recording when each request arrived and when the first 429 was answered. `hold`, if given,
 * is awaited before a request is passed on (its arrival is recorded first): the test keeps a request back with it.
 */
async function recordingProxy(
  target: string,
  hold?: (arrival: Arrival, arrivals: readonly Arrival[]) => Promise<void>,
): Promise<{ url: string; arrivals: Arrival[]; first429: () => number | undefined }> {
  const upstream = new URL(target);
  const arrivals: Arrival[] = [];
  let first429: number | undefined;
  const proxy: Server = createServer((req, res) => {
    const arrival = { at: Date.now(), method: req.method ?? '', path: req.url ?? '' };
    arrivals.push(arrival);
    void (hold?.(arrival, arrivals) ?? Promise.resolve()).then(() => {
      const forward = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        if (answer.statusCode === 429) first429 ??= Date.now();
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    }, () => res.destroy());
  });
  fleet.closeLater(() => new Promise((r) => proxy.close(r)));
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, arrivals, first429: () => first429 };
}

describe('Google requests through the fleet governor', () => {
  it('stops both worker processes once one of them gets a 429 with RetryInfo, until the wait ends', async () => {
    const waitSeconds = 6;
    const emulator = await fleet.emulator({
      google: { apikeys: { deleteOperationMs: 12_000 } },
      // The third poll of an operation (any worker's) is told to come back in 6 s.
      faults: [{ kind: 'status', status: 429, retryInfoSeconds: waitSeconds, method: 'GET', path: '/v2/operations/', every: 3, times: 1 }],
    });
    // What a user sees during a wait (`--follow`, the UI's pending activity) is checked on a request the proxy keeps
    // back: the first one sent after its activity waited on the shared limit (its sender's `governor-wait` line,
    // read before the sender's record of the request: a process writes its lines in order). That activity stays
    // pending, with the details it showed while it waited, until the test has read them: no race with the wait's end.
    let workers: WorkerProcess[] = [];
    let kept: { wait: SharedWaitHeld; known: LimitLearned; worker: WorkerProcess; pass: () => void } | undefined;
    let keeping = true;
    const hold = async ({ method, path }: Arrival, arrivals: readonly Arrival[]): Promise<void> => {
      if (!keeping || first429() === undefined) return;
      // This request is in its sender's record, and so is every line its sender wrote before it. A path is one
      // workflow's operation, polled by one worker at a time: as many records of it as arrivals means this one's is in.
      const same = (r: { method: string; path: string }) => r.method === method && r.path === path;
      const arrived = arrivals.filter(same).length;
      await waitFor(`the sender's record of ${method} ${path}`, () => workers.flatMap((w) => sentRequests(w, origin)).filter(same).length, (n) => n >= arrived, 60_000, 20);
      if (!keeping) return;
      const call = `${method} ${origin}${new URL(path, origin).pathname}`;
      for (const worker of workers) {
        // Its last wait before it was sent (the details its activity shows last), on a limit its worker knew of.
        const wait = sharedWaitsHeld(worker).filter((w) => w.call === call).at(-1);
        const known = wait && limitKnownAt(worker, wait.at);
        if (!wait || !known) continue;
        keeping = false;
        return new Promise<void>((pass) => (kept = { wait, known, worker, pass }));
      }
    };
    // API Keys has its own origin: the proxy stands in front of its root.
    const { url: apikeysUrl, arrivals, first429 } = await recordingProxy(emulator.serviceUrl('google-apikeys'), hold);
    const origin = new URL(apikeysUrl).origin;
    const client = await fleet.client();
    const suffix = randomUUID().slice(0, 8);
    // One task queue per process, and work on both: each has polls to send while the other is told to wait.
    const queues = [`fleet-google-a-${suffix}`, `fleet-google-b-${suffix}`];
    const env = {
      LONGHAUL_GOOGLE_CREDENTIAL: `google-${suffix}`,
      GOOGLE_APIKEYS_URL: apikeysUrl,
      GOOGLE_ACCESS_TOKEN: TEST_TOKEN,
      GITHUB_API_URL: emulator.apiUrl,
      GITHUB_TOKEN: TEST_TOKEN,
      LONGHAUL_DATA_DIR: `/tmp/longhaul-fleet-google-${suffix}`,
      LONGHAUL_LOG_FORMAT: 'json',
    };
    workers = await Promise.all(queues.map((q) => startWorkerProcess({ ...env, LONGHAUL_TASK_QUEUE: q }, { recordSends: true })));
    const poll = FAST_POLL_5_MIN;
    const handles: WorkflowHandle[] = [];
    for (const n of [1, 2, 3]) {
      const name = `projects/demo-project/locations/global/keys/demo-key-${n}`;
      const handle = await client.workflow.start(apiKeyDelete, { taskQueue: queues[n % 2], workflowId: `fleet-google-${n}-${suffix}`, args: [{ name, poll }] });
      handles.push(fleet.track(handle));
    }
    const results = Promise.all(handles.map((h) => h.result()));
    let ended = false;
    void results.finally(() => (ended = true));
    await waitFor('a request kept back after its activity waited on the shared limit', () => kept !== undefined || ended, Boolean, 300_000, 50);
    expect(kept, 'no poll waited on the shared limit on its worker').toBeDefined();
    const { wait, known, pass } = kept!;
    // Read on the server, at a moment the wait was in force by the worker's own log: the credential, the end the
    // worker logged for this wait, and no earlier than the end of the wait that worker knew of (its `limit-learned`).
    const shown = await waitFor(
      `the wait of ${wait.workflowId} in its pending activity`,
      async () => {
        const { raw } = await client.workflow.getHandle(wait.workflowId).describe();
        const pending = (raw.pendingActivities ?? []).map((a) => ({
          heartbeat: a.heartbeatDetails?.payloads?.[0] ? defaultPayloadConverter.fromPayload(a.heartbeatDetails.payloads[0]) : undefined,
          lastFailureMessage: a.lastFailure?.message ?? undefined,
        }));
        return sharedWaitOf(pending, wait.at);
      },
      // A wait the same activity showed before this one may still be there (heartbeats after the first are throttled).
      (w) => w !== undefined && Date.parse(w.until) >= wait.until,
      60_000,
      50,
    ).finally(pass);
    await results;
    expect(shown!.credential).toBe(env.LONGHAUL_GOOGLE_CREDENTIAL);
    expect(Date.parse(shown!.until)).toBe(wait.until);
    expect(Date.parse(shown!.until)).toBeGreaterThanOrEqual(known.until);
    // The worker labels the wait with the API it is for (it said `github` for the Google credential too).
    expect(known.api).toBe('google');
    console.log(`shared wait shown (Google): ${wait.workflowId} "${sharedWaitLine(shown!)}"; its worker knew of a wait until ${new Date(known.until).toISOString()} (${known.source})`);
    expect(sharedWaitLine(shown!)).toMatch(new RegExp(`^waiting on the shared limit of ${env.LONGHAUL_GOOGLE_CREDENTIAL} until \\d{4}-`));

    const limitedAt = first429();
    expect(limitedAt).toBeDefined();
    // Neither process sent a Google request after it had learned of the wait, while the wait was in force; the
    // process Google did not tell learned of it through the governor (how long that took is printed)…
    await everySendRecorded(workers, origin, () => arrivals.length);
    for (const w of workers) expect(sentWhileKnownLimited(w, origin), `worker ${w.pid}`).toEqual([]);
    const news = newsDelays(workers);
    expect(news.filter((d) => d.source === 'governor').length).toBeGreaterThan(0);
    console.log(`fleet news (Google): the other process learned of the wait after ${news.map((d) => `${d.delayMs} ms (${d.source})`).join(', ')}`);
    // …and the process Google told took the whole wait Google asked for: it read the 429 after the proxy passed it on.
    const told = workers.flatMap((w) => limitsLearned(w)).filter((l) => l.source === 'answer');
    expect(told.length).toBeGreaterThan(0);
    for (const l of told) expect(l.until).toBeGreaterThanOrEqual(limitedAt! + waitSeconds * 1000);
    // Both processes had work to do in that time (the polls resumed after it, from both).
    expect(arrivals.filter((a) => a.at >= limitedAt! + waitSeconds * 1000).length).toBeGreaterThan(0);
    const identities = new Set<string>();
    for (const h of handles) {
      const { events } = await h.fetchHistory();
      for (const e of events ?? []) if (e.activityTaskStartedEventAttributes?.identity) identities.add(e.activityTaskStartedEventAttributes.identity);
    }
    for (const w of workers) expect([...identities].some((id) => id.startsWith(`${w.pid}@`))).toBe(true);
  });
});
