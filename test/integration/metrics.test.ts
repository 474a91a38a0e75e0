/**
 * The worker's own metrics, logs and activity summaries, seen from outside as an operator sees them: a worker
 * PROCESS (as `npm run worker` starts it) serves Prometheus metrics on an ephemeral port; the test scrapes
 * `/metrics` before, during and after an org migration against the emulator, reads the worker's JSON log lines,
 * and reads the summaries the workflow put on each scheduled activity in its history.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Emulator } from '@longhaul/emulator';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { freePort } from '../../src/temporal/dev-server';
import { TEST_TOKEN } from '../helpers/emulator';
import { useFleetTeardown } from '../helpers/fleet';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { eventually } from '../helpers/wait';
import { releaseVersion } from '../../src/release';
import { FAST_POLL } from '../helpers/presets';

// After each test: its worker process killed, its client and emulator closed.
const fleet = useFleetTeardown();

/** `name{labels} value` lines of the scrape whose name starts with `longhaul_`, as label string → value. */
function longhaulSamples(text: string, name: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    // Greedy labels: a templated route holds braces of its own (`route="GET /orgs/{org}"`).
    const m = /^(longhaul_[a-z_]+)(\{.*\})?\s+([0-9.eE+-]+)$/.exec(line.trim());
    if (m && m[1] === name) samples.set(m[2] ?? '{}', Number(m[3]));
  }
  return samples;
}

const total = (samples: Map<string, number>) => [...samples.values()].reduce((a, b) => a + b, 0);

/** A worker process against the emulator, serving metrics on a free port and logging JSON lines. */
async function startObservedWorker(e: Emulator, env: Record<string, string> = {}) {
  const port = await freePort();
  const taskQueue = `metrics-${randomUUID()}`;
  const worker = await startWorkerProcess({
    LONGHAUL_TASK_QUEUE: taskQueue,
    LONGHAUL_GITHUB_CREDENTIAL: `metrics-${randomUUID().slice(0, 8)}`,
    GITHUB_API_URL: e.apiUrl,
    GITHUB_TOKEN: TEST_TOKEN,
    LONGHAUL_DATA_DIR: `/tmp/longhaul-metrics-test-${randomUUID().slice(0, 8)}`,
    LONGHAUL_METRICS_ADDRESS: `127.0.0.1:${port}`,
    LONGHAUL_LOG_FORMAT: 'json',
    ...env,
  });
  const scrape = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };
  return { worker, taskQueue, scrape };
}

/** The worker's JSON log lines. */
function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("the worker's metrics endpoint, logs and activity summaries", () => {
  it('shows longhaul counters moving during a migration, with templated routes, JSON log lines and a summary on every activity', async () => {
    const emulator = await fleet.emulator({ migrations: { exportMs: 4_000, archiveBytes: 300_000 } });
    const client = await fleet.client();
    const { worker, taskQueue, scrape } = await startObservedWorker(emulator);

    const before = await scrape();
    // The release the worker runs, as one series.
    expect(longhaulSamples(before, 'longhaul_build_info')).toEqual(new Map([[`{deployment_version="longhaul.${releaseVersion()}",version="${releaseVersion()}"}`, 1]]));
    const requestsBefore = total(longhaulSamples(before, 'longhaul_api_requests_total'));
    const pollsBefore = total(longhaulSamples(before, 'longhaul_polls_total'));

    const handle = await client.workflow.start(orgMigration, {
      taskQueue,
      workflowId: `metrics-migration-${randomUUID()}`,
      args: [{ org: 'octo-org', repositories: ['alpha', 'beta'], lockRepositories: true, poll: FAST_POLL }],
    });

    // During the export: the poll counter moves while the workflow is still running.
    const during = await eventually(
      async () => {
        const text = await scrape();
        return total(longhaulSamples(text, 'longhaul_polls_total')) > pollsBefore ? text : undefined;
      },
      'a poll counted while the export runs',
      120_000,
      200,
    );
    expect(longhaulSamples(during, 'longhaul_polls_total').get('{process="org-migration"}')).toBeGreaterThan(0);

    const result = await handle.result();
    expect(result.state).toBe('exported');

    const after = await scrape();
    const requests = longhaulSamples(after, 'longhaul_api_requests_total');
    expect(total(requests)).toBeGreaterThan(requestsBefore);
    // Routes are templates, never raw org names or ids.
    const routes = [...requests.keys()].map((labels) => /route="([^"]+)"/.exec(labels)?.[1]);
    expect(routes).toContain('POST /orgs/{org}/migrations');
    expect(routes).toContain('GET /orgs/{org}/migrations/{id}');
    expect(routes).toContain('DELETE /orgs/{org}/migrations/{id}/repos/{repo}/lock');
    for (const route of routes) expect(route).not.toMatch(/octo-org|alpha|beta|\/\d+/);
    expect([...requests.keys()].some((labels) => labels.includes('api="github"') && labels.includes('status="200"'))).toBe(true);
    expect(total(longhaulSamples(after, 'longhaul_polls_total'))).toBeGreaterThanOrEqual(total(longhaulSamples(during, 'longhaul_polls_total')));
    expect(total(longhaulSamples(after, 'longhaul_download_bytes_total'))).toBeGreaterThanOrEqual(result.archive.bytes);

    // The worker's JSON log lines: one per unlock, with stable fields.
    const lines = jsonLines(worker.output());
    const cleanups = lines.filter((l) => l.event === 'cleanup' && l.workflowId === handle.workflowId);
    expect(cleanups.map((l) => l.step).sort()).toEqual(['unlock alpha', 'unlock beta']);
    for (const line of cleanups) expect(line).toMatchObject({ level: 'info', time: expect.any(String) });

    // Every scheduled activity carries its summary in the history's user metadata.
    const { events } = await handle.fetchHistory();
    const summaries = (events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => ({ type: e.activityTaskScheduledEventAttributes!.activityType!.name, summary: e.userMetadata?.summary ? defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary) : undefined }));
    expect(summaries.length).toBeGreaterThan(0);
    for (const s of summaries) expect(s.summary, `summary of ${s.type}`).toBeTruthy();
    const texts = summaries.map((s) => s.summary);
    expect(texts).toContain(`Start export of 2 repositories of octo-org`);
    expect(texts).toContain(`Poll export ${result.migrationId} of octo-org until it changes`);
    expect(texts).toContain('Unlock alpha');
    expect(texts).toContain('Unlock beta');
    expect(texts).toContain(`Download archive of export ${result.migrationId} of octo-org`);
  });

  it('keeps every worker running when the metrics port is taken: by a worker started in the same instant, or by another program', async () => {
    const emulator = await fleet.emulator();
    const workerOn = (address: string) =>
      startWorkerProcess({
        LONGHAUL_TASK_QUEUE: `metrics-port-${randomUUID()}`,
        LONGHAUL_GITHUB_CREDENTIAL: `metrics-${randomUUID().slice(0, 8)}`,
        GITHUB_API_URL: emulator.apiUrl,
        GITHUB_TOKEN: TEST_TOKEN,
        LONGHAUL_DATA_DIR: `/tmp/longhaul-metrics-test-${randomUUID().slice(0, 8)}`,
        LONGHAUL_METRICS_ADDRESS: address,
      });
    const noMetrics = /warning: this process serves no metrics: (\S+) could not be bound/;
    // Each process says one or the other before it polls; stderr may reach us a moment after the stdout line.
    const metricsOutcome = (w: WorkerProcess, address: string) =>
      eventually(() => {
        if (noMetrics.exec(w.output())?.[1] === address) return 'none';
        if (w.output().includes(`metrics: http://${address}/metrics`)) return 'served';
        return undefined;
      }, `the worker to say whether it serves metrics on ${address}`);

    // Two workers on one address, started together: both run, one serves /metrics, the other says it does not.
    const shared = `127.0.0.1:${await freePort()}`;
    const pair = await Promise.all([workerOn(shared), workerOn(shared)]);
    expect((await Promise.all(pair.map((w) => metricsOutcome(w, shared)))).sort()).toEqual(['none', 'served']);
    expect((await fetch(`http://${shared}/metrics`)).status).toBe(200);

    // An address another program holds: the worker starts without metrics and names the address.
    const holder = createServer();
    const held = await new Promise<string>((resolve) => holder.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(holder.address() as { port: number }).port}`)));
    fleet.closeLater(() => new Promise((resolve) => holder.close(resolve)));
    const lone = await workerOn(held);
    expect(await metricsOutcome(lone, held)).toBe('none');
    expect(lone.child.exitCode).toBeNull();
  });

  it('counts limited answers and the time waited on them, and logs each wait as a JSON line', async () => {
    // 8 points per endpoint per 2 s: the export (5 points) and the unlocks (5 each) run into the secondary limit.
    const emulator = await fleet.emulator({
      migrations: { exportMs: 1_000, archiveBytes: 4_096 },
      rateLimit: { secondary: { pointsPerWindow: 8, windowMs: 2_000, retryAfter: true, status: 403 } },
    });
    const client = await fleet.client();
    const { worker, taskQueue, scrape } = await startObservedWorker(emulator, { LONGHAUL_RATE_GOVERNOR: 'off' });
    const handle = await client.workflow.start(orgMigration, {
      taskQueue,
      workflowId: `metrics-limited-${randomUUID()}`,
      args: [{ org: 'octo-org', repositories: ['alpha', 'beta', 'gamma'], lockRepositories: true, poll: FAST_POLL }],
    });
    expect((await handle.result()).state).toBe('exported');

    const after = await scrape();
    const limited = longhaulSamples(after, 'longhaul_rate_limited_answers_total');
    expect(limited.get('{api="github",kind="secondary"}')).toBeGreaterThan(0);
    expect(longhaulSamples(after, 'longhaul_api_requests_total').size).toBeGreaterThan(0);
    expect([...longhaulSamples(after, 'longhaul_api_requests_total').keys()].some((labels) => labels.includes('status="403"'))).toBe(true);
    expect(longhaulSamples(after, 'longhaul_rate_limit_wait_milliseconds_total').get('{api="github"}')).toBeGreaterThan(0);
    expect(longhaulSamples(after, 'longhaul_rate_limit_gate_closed').has('{api="github"}')).toBe(true);

    const waits = jsonLines(worker.output()).filter((l) => l.event === 'rate-limit-wait' && l.workflowId === handle.workflowId);
    expect(waits.length).toBeGreaterThan(0);
    for (const line of waits) {
      expect(line).toMatchObject({ api: 'github', route: expect.stringMatching(/^(GET|POST|DELETE) \/orgs\/\{org\}/), waitMs: expect.any(Number) });
      expect(line.route).not.toMatch(/octo-org|alpha|beta|gamma/);
    }
  });
});
