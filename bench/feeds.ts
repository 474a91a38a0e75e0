/**
 * `npm run bench:feeds` — N activity feeds polled on Temporal Schedules against the emulator, with the
 * feeds' `X-Poll-Interval` scaled down to seconds.
 *
 *   npm run bench:feeds                      # 50 feeds for 10 minutes
 *   npm run bench:feeds -- --minutes 1       # shorter while developing
 *
 * Runs its own in-memory Temporal dev server, the emulator and the HTTP sink's receiver in this process,
 * and the worker as a separate process (so its CPU and RSS are its own). Feeds cover every feed kind of
 * the spec; a few get a burst beyond the 300-event window half-way. At the end production stops, the
 * schedules run until every event still in a feed is delivered, and the bench prints: requests that
 * counted against the primary limit, the 304 share, events delivered vs produced (and those a burst
 * pushed out before any poll could see them), gaps reported, duplicates (must be 0), early polls (must
 * be 0), and the worker's CPU and peak RSS.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import { startDevServer } from '../src/temporal/dev-server';
import { startEmulator } from '@longhaul/emulator';
import { startSinkReceiver, type ReceivedBatch } from '../packages/emulator/src/sink/receiver';
import { writeWorkflowBundle } from '../src/bundle';
import { defaultGithubFixture } from '../packages/emulator/src/github/fixture';
import { feedCursorWorkflowId, type FeedCursorStatus } from '../src/processes/feed-poll/model';
import { deleteFeedSchedule } from '../src/processes/feed-poll/cli-schedule-delete';
import { upsertFeedSchedule } from '../src/processes/feed-poll/cli-schedule';
import { buildWorker, cpuTimes, rssKb, startWorkerProcess } from './worker-process';
import { describeHistorySizes, historySizeReport } from '../src/temporal/history-stats';

interface Options {
  feeds: number;
  minutes: number;
  pollInterval: number;
  every: number;
  eventsPerMinute: number;
  burstFeeds: number;
  burstSize: number;
}

const program = new Command()
  .option('--feeds <n>', 'feeds, each on its own Schedule', Number, 50)
  .option('--minutes <n>', 'how long the feeds produce events and are polled', Number, 10)
  .option('--poll-interval <s>', 'X-Poll-Interval the emulator sends (GitHub: 60; scaled down)', Number, 6)
  .option('--every <s>', 'schedule interval', Number, 6)
  .option('--events-per-minute <n>', 'new events per feed per minute', Number, 6)
  .option('--burst-feeds <n>', 'feeds that get a burst beyond the 300-event window half-way', Number, 2)
  .option('--burst-size <n>', 'events in each burst', Number, 350);

const USER = 'bench-viewer';

/** Feed i: every kind of the spec in turn, each on names of its own. */
function feedPath(i: number): string {
  switch (i % 9) {
    case 0:
      return `/repos/bench-org/repo-${i}/events`;
    case 1:
      return `/networks/bench-org/repo-${i}/events`;
    case 2:
      return `/orgs/bench-org-${i}/events`;
    case 3:
      return `/users/bench-user-${i}/events`;
    case 4:
      return `/users/bench-user-${i}/events/public`;
    case 5:
      return `/users/bench-user-${i}/received_events`;
    case 6:
      return `/users/bench-user-${i}/received_events/public`;
    case 7:
      return i === 7 ? '/events' : `/repos/bench-org/repo-${i}/events`;
    default:
      return `/users/${USER}/events/orgs/bench-org-${i}`;
  }
}

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  const durationMs = o.minutes * 60_000;
  const fixture = defaultGithubFixture();
  fixture.accounts.push({ id: 5000, login: 'bench-org', type: 'Organization' }, { id: 5001, login: USER, type: 'User' });
  for (let i = 0; i < o.feeds; i++) {
    fixture.repositories.push({ id: 10_000 + i, name: `repo-${i}`, owner: 'bench-org', private: false, workflowsEnabled: false });
    fixture.accounts.push({ id: 20_000 + i, login: `bench-org-${i}`, type: 'Organization' }, { id: 30_000 + i, login: `bench-user-${i}`, type: 'User' });
  }
  const feeds = Array.from({ length: o.feeds }, (_, i) => feedPath(i));
  const burstAtMs = Math.round(durationMs / 2);
  const burstFeeds = feeds.filter((f) => f.startsWith('/repos/')).slice(0, o.burstFeeds);

  const emulator = await startEmulator({
    fixture,
    feeds: {
      eventsPerMinute: o.eventsPerMinute,
      initialEvents: 10,
      pollIntervalSeconds: o.pollInterval,
      authenticatedUser: USER,
      bursts: burstFeeds.map((feed) => ({ atMs: burstAtMs, count: o.burstSize, feed })),
    },
    // A window longer than the run, so `x-ratelimit-used` is the number of requests that counted.
    rateLimit: { limit: 1_000_000, windowMs: 24 * 60 * 60_000 },
  });
  const secret = 'bench-sink-secret';
  const receiver = await startSinkReceiver({ secret });
  const server = await startDevServer({ port: 0, uiPort: false, log: () => undefined });
  const dataDir = await mkdtemp(join(tmpdir(), 'longhaul-bench-feeds-'));
  const taskQueue = `bench-feeds-${Date.now()}`;
  buildWorker();
  const bundlePath = await writeWorkflowBundle(join(dataDir, 'workflow-bundle.js'));

  const worker = await startWorkerProcess({
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    GITHUB_API_URL: emulator.apiUrl,
    GITHUB_TOKEN: 'bench-token',
    LONGHAUL_SINK_SECRET: secret,
    LONGHAUL_TASK_QUEUE: taskQueue,
    LONGHAUL_DATA_DIR: dataDir,
    LONGHAUL_WORKFLOW_BUNDLE: bundlePath,
    // Where the worker's memory is, each minute (V8 heap vs native), in this output.
    LONGHAUL_MEMORY_LOG_SECONDS: '60',
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });

  console.log(
    `bench: ${o.feeds} feeds on Schedules every ${o.every} s for ${o.minutes} min; X-Poll-Interval ${o.pollInterval} s; ` +
      `${o.eventsPerMinute} events/min per feed; ${burstFeeds.length} burst(s) of ${o.burstSize} at ${(burstAtMs / 60_000).toFixed(1)} min; HTTP sink`,
  );
  for (const feed of feeds) emulator.feeds.ensure(feed);
  for (const feed of feeds) {
    await upsertFeedSchedule(client, { taskQueue, everyMs: o.every * 1000, input: { feed, sink: { kind: 'http', url: `${receiver.url}/feeds`, secretEnv: 'LONGHAUL_SINK_SECRET' } } });
  }

  // Peak and mean: the RSS swings within a minute (memory returned, then taken again), so the peak alone
  // depends on spikes.
  let peakRss = 0;
  let rssSum = 0;
  let rssSamples = 0;
  const sampler = setInterval(
    () =>
      void rssKb(worker.pid).then((kb) => {
        if (kb === 0) return;
        peakRss = Math.max(peakRss, kb);
        rssSum += kb;
        rssSamples++;
      }),
    500,
  );
  const cpuBefore = await cpuTimes(worker.pid);
  const started = Date.now();
  const progress = setInterval(() => {
    const t = emulator.feeds.totals();
    console.log(`  ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s: ${t.polls} polls, ${t.notModified} × 304, ${receiver.events.size} events delivered, worker RSS ${(peakRss / 1024).toFixed(0)} MB`);
  }, 60_000);
  await new Promise((r) => setTimeout(r, durationMs));
  const cpuAtEnd = await cpuTimes(worker.pid);
  const runMs = Date.now() - started;

  // Stop production; the schedules keep running until every event still in a feed has been delivered.
  emulator.feeds.setRate(0);
  const expected = () => feeds.reduce((n, f) => n + emulator.feeds.produced(f).length - emulator.feeds.droppedUnseen(f).length, 0);
  const drainDeadline = Date.now() + Math.max(60_000, o.every * 5_000);
  while (receiver.events.size < expected() && Date.now() < drainDeadline) await new Promise((r) => setTimeout(r, 500));
  clearInterval(progress);
  clearInterval(sampler);

  // Schedules deleted and cursors ended the way `feed-schedule --delete --forget-cursor` does it: each cursor
  // only once its feed's runs in flight have ended (one would start a fresh cursor that re-delivers the window).
  const deletions = await Promise.all(feeds.map((feed) => deleteFeedSchedule(client, feed, { forgetCursor: true, runsTimeoutMs: 5 * 60_000 })));
  const statuses = deletions.flatMap((d) => (d.cursorStatus ? [d.cursorStatus] : []));
  const cursorsKept = deletions.filter((d) => d.stillRunning.length > 0).length;
  // Every cursor ends once stopped; one still running was started again after its stop.
  const cursorsLeft = await countRunningCursors(client, feeds);

  const produced = feeds.reduce((n, f) => n + emulator.feeds.produced(f).length, 0);
  const droppedUnseen = feeds.reduce((n, f) => n + emulator.feeds.droppedUnseen(f).length, 0);
  const totals = emulator.feeds.totals();
  const counted = Number(emulator.rateLimiter.headers('bench-token', Date.now())['x-ratelimit-used']);
  const sum = (pick: (s: FeedCursorStatus) => number) => statuses.reduce((n, s) => n + pick(s), 0);
  const undelivered = produced - droppedUnseen - receiver.events.size;
  const cpu = cpuAtEnd.user + cpuAtEnd.system - cpuBefore.user - cpuBefore.system;
  // System time apart: large malloc blocks in mappings of their own (docs/operations.md, "Worker memory") cost it.
  const cpuSystem = cpuAtEnd.system - cpuBefore.system;

  const row = (label: string, value: string, target = '') => console.log(`  ${label.padEnd(44)} ${value.padEnd(22)} ${target}`);
  console.log('results');
  row('feeds / run time', `${o.feeds} / ${(runMs / 60_000).toFixed(1)} min`);
  row('polls (page-1 requests)', String(totals.polls));
  row('answered 304', `${totals.notModified} (${((100 * totals.notModified) / Math.max(1, totals.polls)).toFixed(1)} %)`);
  row('later pages (2, 3)', String(totals.extraPages));
  row('requests counted against the primary limit', String(counted), `of ${emulator.stats.requests} requests`);
  row('runs skipped before X-Poll-Interval', String(sum((s) => s.counters.skippedEarly)), '(no API call)');
  row('runs that waited briefly for the interval', String(sum((s) => s.counters.waited)));
  row('events produced', String(produced));
  row('events delivered (unique at the receiver)', String(receiver.events.size));
  row('pushed out by bursts before any poll', String(droppedUnseen), `gaps reported: ${sum((s) => s.counters.gaps)}`);
  row('produced, not delivered, not pushed out', String(undelivered), 'target 0');
  row('duplicates (events received again)', String(receiver.stats.resentEvents), 'target 0');
  for (const line of describeResentBatches(receiver.batches)) console.log(`    ${line}`);
  row('early polls (seen by the emulator)', String(totals.earlyPolls), 'target 0');
  row('cursors running after their stop', String(cursorsLeft), `target 0 (poll runs waited for at the end: ${deletions.reduce((n, d) => n + d.waitedFor.length, 0)}; cursors kept for runs still going: ${cursorsKept})`);
  row('sink failures', String(sum((s) => s.counters.sinkFailures)));
  row('worker CPU', `${cpu.toFixed(1)} s (${((100 * cpu * 1000) / runMs).toFixed(1)} % of a core)`, `system ${cpuSystem.toFixed(1)} s`);
  row('worker peak RSS', `${(peakRss / 1024).toFixed(0)} MB`, `mean ${(rssSum / Math.max(1, rssSamples) / 1024).toFixed(0)} MB`);
  row('rate-limit rejections / sent while limited', `${emulator.stats.rateLimited.primary + emulator.stats.rateLimited.secondary} / ${emulator.stats.requestsWhileLimited}`);
  console.log(`  ${describeHistorySizes(await historySizeReport(client))}`);

  await worker.stop();
  await connection.close();
  await server.stop();
  await receiver.close();
  await emulator.close();
  await rm(dataDir, { recursive: true, force: true });
  process.exitCode = receiver.stats.resentEvents === 0 && totals.earlyPolls === 0 && undelivered === 0 && cursorsLeft === 0 ? 0 : 1;
}

/** The feeds' cursor workflows still running, a few seconds after each was asked to stop. */
async function countRunningCursors(client: Client, feeds: readonly string[]): Promise<number> {
  let running = 0;
  for (const feed of feeds) {
    const handle = client.workflow.getHandle(feedCursorWorkflowId(feed));
    const ended = await Promise.race([handle.result().then(() => true, () => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
    if (!ended && (await handle.describe()).status.name === 'RUNNING') running++;
  }
  return running;
}

/**
 * Where duplicates came from: a batch re-sent with a delivery id the receiver already had is a sink retry
 * (the same bytes again); one with a new delivery id carried events an earlier poll had delivered already
 * (the cursor did not record them as delivered).
 */
function describeResentBatches(batches: readonly ReceivedBatch[]): string[] {
  const seen = new Set<string>();
  const firstBatch = new Map<string, ReceivedBatch>();
  const lines: string[] = [];
  for (const b of batches) {
    if (b.alreadyStored > 0) {
      const kind = seen.has(b.delivery) ? 'the same delivery again (sink retry)' : 'a new delivery';
      const earlier = b.eventIds.map((id) => firstBatch.get(id)).find((e) => e !== undefined);
      const from = earlier ? `first sent by ${earlier.feed === b.feed ? 'the same feed' : earlier.feed} at ${new Date(earlier.receivedAt).toISOString()}` : '';
      lines.push(`${b.feed}: ${b.alreadyStored} of ${b.eventIds.length} events already stored, ${kind}, at ${new Date(b.receivedAt).toISOString()}; ${from}`);
    }
    seen.add(b.delivery);
    for (const id of b.eventIds) if (!firstBatch.has(id)) firstBatch.set(id, b);
  }
  return lines.length > 10 ? [...lines.slice(0, 10), `… and ${lines.length - 10} more such batches`] : lines;
}

main().catch((err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
