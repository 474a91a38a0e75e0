/**
 * Google requests go through the fleet's governor too: two worker PROCESSES poll API-key deletions; the
 * first `429 RESOURCE_EXHAUSTED` with `RetryInfo` that one of them receives closes the Google credential's
 * shared gate, so neither process sends another Google request until the wait the answer asked for ends.
 * Each process is judged by what it knew: its `limit-learned` log lines against the requests it sent
 * (`fleet-news.ts`, on its own clock); a recording proxy in front of the emulator counts the requests and
 * when the 429 went back. The waiting polls show "waiting on the shared limit of <credential> until <time>" in their pending activity.
 */
import { randomUUID } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { sharedWaitLine, sharedWaitOf, type SharedLimitWait } from '../../src/common/shared-wait';
import { apiKeyDelete } from '../../src/processes/google-operation/apikey-delete';
import { TEST_TOKEN } from '../helpers/emulator';
import { useFleetTeardown } from '../helpers/fleet';
import { startWorkerProcess } from '../helpers/worker-process';
import { everySendRecorded, newsDelays, sentWhileKnownLimited } from '../helpers/fleet-news';
import { FAST_POLL_5_MIN } from '../helpers/presets';

const fleet = useFleetTeardown();

interface Arrival {
  at: number;
  path: string;
}

/** A pass-through proxy recording when each request arrived and when the first 429 was answered. */
async function recordingProxy(target: string): Promise<{ url: string; arrivals: Arrival[]; first429: () => number | undefined }> {
  const upstream = new URL(target);
  const arrivals: Arrival[] = [];
  let first429: number | undefined;
  const proxy: Server = createServer((req, res) => {
    arrivals.push({ at: Date.now(), path: req.url ?? '' });
    const forward = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      if (answer.statusCode === 429) first429 ??= Date.now();
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
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
    // API Keys has its own origin: the proxy stands in front of its root.
    const { url: apikeysUrl, arrivals, first429 } = await recordingProxy(emulator.serviceUrl('google-apikeys'));
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
    const workers = await Promise.all(queues.map((q) => startWorkerProcess({ ...env, LONGHAUL_TASK_QUEUE: q }, { recordSends: true })));
    const poll = FAST_POLL_5_MIN;
    const handles: WorkflowHandle[] = [];
    for (const n of [1, 2, 3]) {
      const name = `projects/demo-project/locations/global/keys/demo-key-${n}`;
      const handle = await client.workflow.start(apiKeyDelete, { taskQueue: queues[n % 2], workflowId: `fleet-google-${n}-${suffix}`, args: [{ name, poll }] });
      handles.push(fleet.track(handle));
    }
    // Meanwhile, what a user sees (`--follow`, the UI's pending activity): a poll held back by the governor.
    const seen: SharedLimitWait[] = [];
    let done = false;
    const watching = (async () => {
      while (!done) {
        for (const h of handles) {
          const { raw } = await h.describe();
          const pending = (raw.pendingActivities ?? []).map((a) => ({
            heartbeat: a.heartbeatDetails?.payloads?.[0] ? defaultPayloadConverter.fromPayload(a.heartbeatDetails.payloads[0]) : undefined,
            lastFailureMessage: a.lastFailure?.message ?? undefined,
          }));
          const wait = sharedWaitOf(pending, Date.now());
          if (wait) seen.push(wait);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await Promise.all(handles.map((h) => h.result())).finally(() => (done = true));
    await watching;

    const limitedAt = first429();
    expect(limitedAt).toBeDefined();
    // Neither process sent a Google request after it had learned of the wait, while the wait was in force; the
    // process Google did not tell learned of it through the governor (how long that took is printed)…
    const origin = new URL(apikeysUrl).origin;
    await everySendRecorded(workers, origin, () => arrivals.length);
    for (const w of workers) expect(sentWhileKnownLimited(w, origin), `worker ${w.pid}`).toEqual([]);
    const news = newsDelays(workers);
    expect(news.filter((d) => d.source === 'governor').length).toBeGreaterThan(0);
    console.log(`fleet news (Google): the other process learned of the wait after ${news.map((d) => `${d.delayMs} ms (${d.source})`).join(', ')}`);
    // …though both processes had work to do in that time (the polls resumed after it, from both).
    expect(arrivals.filter((a) => a.at >= limitedAt! + waitSeconds * 1000).length).toBeGreaterThan(0);
    const identities = new Set<string>();
    for (const h of handles) {
      const { events } = await h.fetchHistory();
      for (const e of events ?? []) if (e.activityTaskStartedEventAttributes?.identity) identities.add(e.activityTaskStartedEventAttributes.identity);
    }
    for (const w of workers) expect([...identities].some((id) => id.startsWith(`${w.pid}@`))).toBe(true);
    // The wait was visible while it lasted: the credential, and an end no earlier than the one Google asked for.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0].credential).toBe(env.LONGHAUL_GOOGLE_CREDENTIAL);
    expect(Date.parse(seen[0].until)).toBeGreaterThanOrEqual(limitedAt! + waitSeconds * 1000 - 500);
    expect(sharedWaitLine(seen[0])).toMatch(new RegExp(`^waiting on the shared limit of ${env.LONGHAUL_GOOGLE_CREDENTIAL} until \\d{4}-`));
  });
});
