/**
 * The exactly-once start's lookups are bounded by design (issue 31): a worker PROCESS is killed with SIGKILL
 * while the start POSTs of several migrations are in flight (the emulator, its clock 20 s behind, holds each
 * POST: half of them after creating the migration, half before, and those die with the worker's connection),
 * so every start's outcome is unknown to its workflow. A second worker process takes over. Each workflow looks
 * the migration up when the start times out: found → adopted (1 lookup); not found → looked up once more when
 * the grace period is spent, still not there → sent again (2 lookups). At most 2 lookups per interrupted start,
 * counted by the emulator, in each workflow's status and in the worker's metrics. (Before the bound, a start
 * that was not found was looked up all through the grace period: 5 lookups in these 15 s.)
 *
 * Under REST API version 2026-03-10 (issue 39), whose migration resources carry `simple-repository` entries, unless
 * `LONGHAUL_TEST_GITHUB_API_VERSION` names the version (the matrix's other half): the lookup identifies an adopted
 * export under both, and no export is made twice.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import type { Emulator } from '@longhaul/emulator';
import { migrationStatusQuery, orgMigration } from '../../src/processes/org-migration/workflow';
import { freePort } from '../../src/temporal/dev-server';
import { TEST_TOKEN } from '../helpers/emulator';
import { useFleetTeardown } from '../helpers/fleet';
import { FAST_POLL } from '../helpers/presets';
import { startWorkerProcess } from '../helpers/worker-process';
import { waitFor } from '../helpers/wait';
import { TEST_API_VERSION_ENV, testGithubApiVersion } from '../helpers/api-version';

const fleet = useFleetTeardown();

const MIGRATIONS = 4;
/** Each start POST is held this long: the worker is killed meanwhile. */
const HOLD_MS = 8_000;
/** Starts whose POST created the migration before it was held (the other half never reached processing). */
const CREATED = MIGRATIONS / 2;
/** The start's call timeout: the workflow learns that the killed attempt is lost this long after it began. */
const CALL_TIMEOUT_MS = 3_000;
/** Long enough for the held POSTs to have created their migrations when it is spent. */
const GRACE_MS = 15_000;
const LIST = 'GET /orgs/:org/migrations';
const API_VERSION = process.env[TEST_API_VERSION_ENV] ? testGithubApiVersion() : '2026-03-10';
const START = 'POST /orgs/:org/migrations';

/** A worker process on `taskQueue` against the emulator (one token, the rate governor off: every start goes out at once). */
async function worker(emulator: Emulator, taskQueue: string, metricsPort?: number) {
  return startWorkerProcess({
    LONGHAUL_TASK_QUEUE: taskQueue,
    LONGHAUL_GITHUB_CREDENTIAL: `lookups-${randomUUID().slice(0, 8)}`,
    LONGHAUL_RATE_GOVERNOR: 'off',
    GITHUB_API_URL: emulator.apiUrl,
    GITHUB_TOKEN: TEST_TOKEN,
    GITHUB_API_VERSION: API_VERSION,
    LONGHAUL_DATA_DIR: `/tmp/longhaul-lookups-test-${randomUUID().slice(0, 8)}`,
    LONGHAUL_METRICS_ADDRESS: metricsPort ? `127.0.0.1:${metricsPort}` : 'off',
  });
}

/** The attempts each of a workflow's `findMigration` activities took, in order. */
async function lookupAttempts(handle: WorkflowHandle): Promise<number[]> {
  const { events } = await handle.fetchHistory();
  const lookups = new Set<string>();
  const out: number[] = [];
  for (const e of events ?? []) {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'findMigration') lookups.add(String(e.eventId));
    const started = e.activityTaskStartedEventAttributes;
    if (started && lookups.has(String(started.scheduledEventId))) out.push(started.attempt ?? 1);
  }
  return out;
}

describe('org migration: workers killed during the start phase', () => {
  it('looks each interrupted start up at most twice: when it timed out (found: adopted), and when the grace is spent (still not found: sent again)', async () => {
    const emulator = await fleet.emulator({
      migrations: { exportMs: 300, archiveBytes: 10_000 },
      clockOffsetMs: -20_000,
      faults: [
        { method: 'POST', path: '/orgs/:org/migrations', kind: 'slow', delayMs: HOLD_MS, afterProcessing: true, times: CREATED },
        { method: 'POST', path: '/orgs/:org/migrations', kind: 'slow', delayMs: HOLD_MS, times: MIGRATIONS - CREATED },
      ],
    });
    const client = await fleet.client();
    const taskQueue = `start-lookups-${randomUUID()}`;
    const first = await worker(emulator, taskQueue);

    const handles = await Promise.all(
      Array.from({ length: MIGRATIONS }, (_, i) =>
        client.workflow
          .start(orgMigration, {
            taskQueue,
            workflowId: `start-lookups-${i}-${randomUUID()}`,
            args: [
              {
                org: 'octo-org',
                repositories: [i % 2 ? 'alpha' : 'beta'],
                excludeReleases: i >= 2,
                lockRepositories: false,
                apiCallTimeoutMs: CALL_TIMEOUT_MS,
                startGraceMs: GRACE_MS,
                poll: FAST_POLL,
              },
            ],
          })
          .then(fleet.track),
      ),
    );

    // Every start is in flight (held by the emulator) when the worker dies.
    await waitFor('every start POST to arrive', () => emulator.stats.byRoute[START] ?? 0, (n) => n === MIGRATIONS, 60_000, 20);
    await first.stop('SIGKILL');
    const metricsPort = await freePort();
    await worker(emulator, taskQueue, metricsPort);

    const results = await Promise.all(handles.map((h) => h.result()));
    const statuses = await Promise.all(handles.map((h) => h.query(migrationStatusQuery)));

    // The starts that created their migration were adopted; the others were sent again once the grace was spent.
    expect(emulator.stats.byRoute[START]).toBe(MIGRATIONS + (MIGRATIONS - CREATED));
    expect(new Set(results.map((r) => r.migrationId)).size).toBe(MIGRATIONS);
    // No export twice: the server holds exactly one migration per workflow.
    expect(emulator.migrations.all()).toHaveLength(MIGRATIONS);
    for (const r of results) expect(r.state).toBe('exported');

    // The bound: at most 2 lookups per interrupted start (1 when found at once), seen by the server, the
    // workflows and the metrics.
    // A lookup is one activity; an attempt of it that outlived its 3 s call timeout on a loaded machine is tried
    // again, one more list request for the same lookup. So the server's count is the lookups' attempts (from the
    // histories), and the bound is on the lookups themselves.
    const lookups = emulator.stats.byRoute[LIST] ?? 0;
    expect(statuses.map((s) => s.startLookups).sort()).toEqual([...Array<number>(CREATED).fill(1), ...Array<number>(MIGRATIONS - CREATED).fill(2)]);
    const attempts = await Promise.all(handles.map((h) => lookupAttempts(h)));
    expect(attempts.map((a) => a.length).sort()).toEqual(statuses.map((s) => s.startLookups).sort());
    expect(lookups).toBe(attempts.flat().reduce((n, a) => n + a, 0));
    if (lookups > CREATED + 2 * (MIGRATIONS - CREATED)) console.info(`start lookups: ${lookups} list requests for ${CREATED + 2 * (MIGRATIONS - CREATED)} lookups (attempts ${JSON.stringify(attempts)})`);
    const scrape = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const counted = /^longhaul_send_lookups_total\{[^}]*process="org-migration"[^}]*\}\s+(\d+)/m.exec(scrape)?.[1];
    expect(Number(counted)).toBe(lookups);
  });
});

describe("org migration: the start lookup on an organization's long history of migrations", () => {
  it('reads only the page that reaches back to the attempt window (the list is newest first)', async () => {
    // 250 migrations of the organization from two hours ago: three pages of 100.
    let offsetMs = -2 * 60 * 60 * 1000;
    const emulator = await fleet.emulator({
      migrations: { exportMs: 300, archiveBytes: 10_000 },
      clock: () => Date.now() + offsetMs,
      rateLimit: { secondary: { contentPerMinute: 1_000, contentPerHour: 10_000, pointsPerWindow: 100_000 } },
    });
    for (let i = 0; i < 250; i++) {
      const res = await fetch(`${emulator.apiUrl}/orgs/octo-org/migrations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ repositories: ['gamma'] }),
      });
      expect(res.status).toBe(201);
    }
    // The start's connection is reset before the server acts on it: its outcome is unknown.
    emulator.setFaults([{ method: 'POST', path: '/orgs/:org/migrations', kind: 'reset', times: 1 }]);
    // From now on the server's clock is 20 s behind the workers'.
    offsetMs = -20_000;
    const listsBefore = emulator.stats.byRoute[LIST] ?? 0;

    const client = await fleet.client();
    const taskQueue = `start-lookups-pages-${randomUUID()}`;
    await worker(emulator, taskQueue);
    const handle = fleet.track(
      await client.workflow.start(orgMigration, {
        taskQueue,
        workflowId: `start-lookups-pages-${randomUUID()}`,
        args: [{ org: 'octo-org', repositories: ['gamma'], lockRepositories: false, startGraceMs: 3_000, poll: FAST_POLL }],
      }),
    );
    const result = await handle.result();
    const status = await handle.query(migrationStatusQuery);

    // Not found twice (one page each), then sent again: the new migration, not one of the 250 older ones.
    expect(result.state).toBe('exported');
    expect(result.migrationId).toBeGreaterThan(250);
    expect(status.startLookups).toBe(2);
    // One request per lookup: the first page already reaches back before the window (three pages each, before).
    expect((emulator.stats.byRoute[LIST] ?? 0) - listsBefore).toBe(2);
  });
});
