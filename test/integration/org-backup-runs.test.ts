/**
 * Issue 38: backups run after run. Retention across runs (one killed half-way, one still in progress), and the
 * Schedule the CLI creates: while no worker runs, later times are skipped (overlap skip) and the missed run is made
 * once when a worker starts, not once per missed time.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { objectsFor } from '../../src/archive/object-store/objects';
import { parseDestination } from '../../src/archive/object-store/destination';
import { backupStatusQuery } from '../../src/processes/org-backup/workflow';
import type { BackupResult } from '../../src/processes/org-backup/model';
import { useFleetTeardown } from '../helpers/fleet';
import { BACKUP_BUCKET, BACKUP_ORG, backupFleet, backupInput, startBackup, useS3BackupStore } from '../helpers/backup';
import { waitFor } from '../helpers/wait';
import { runLonghaul } from '../helpers/starter';
import { hostOf, runningActivities } from '../helpers/multi-host';

const fleet = useFleetTeardown();
// Every backup of this file goes to S3, each test's under a prefix of its own: one versitygw for the file.
const s3Env = useS3BackupStore();

describe('backups of a whole organization, run after run', () => {
  it('retention deletes runs older than --keep, a run killed half-way included, never one in progress', async () => {
    const env = s3Env();
    const e = await fleet.emulator({ organizations: { [BACKUP_ORG]: { repositories: 30 } }, migrations: { exportMs: 300, archiveBytes: 1_024 } });
    const { taskQueue } = await backupFleet(fleet, e, env);
    const prefix = `retained-${randomUUID().slice(0, 6)}`;
    const input = backupInput('s3', prefix, { reposPerExport: 10 });
    const objects = objectsFor(parseDestination(`s3://${BACKUP_BUCKET}/${prefix}/${BACKUP_ORG}/`, 'x'), env);
    const folders = async () => (await objects.list(`${prefix}/${BACKUP_ORG}/`, '/')).prefixes.map((p) => p.split('/').at(-2)!).sort();

    const first = await (await startBackup(fleet, taskQueue, input)).result();
    // Run folders are named to the second: each next run starts in a later one.
    const nextSecond = async (after: string) => waitFor('the next second', async () => Date.now(), (now) => Math.floor(now / 1000) > Date.parse(after) / 1000 + 1, 10_000, 50);
    await nextSecond(new Date().toISOString());
    const killed = await startBackup(fleet, taskQueue, input);
    // Hang guards, not budgets: at load average 20 the second run had stored no export after a minute.
    await waitFor('the second run to store an export', () => killed.query(backupStatusQuery), (s) => s.exportsStored >= 1, 240_000, 50);
    await killed.terminate('killed half-way');
    const killedFolder = (await killed.query(backupStatusQuery).catch(() => undefined))?.folder;
    await nextSecond(new Date().toISOString());
    // In progress while the last run prunes: its exports are polled only after a minute.
    const slow = await startBackup(fleet, taskQueue, { ...input, exportPoll: { initialIntervalMs: 120_000, maxIntervalMs: 120_000, backoffFactor: 1 } });
    const slowStatus = await waitFor('the slow run to export', () => slow.query(backupStatusQuery), (s) => s.exportsStarted >= 1, 240_000, 50);
    await nextSecond(new Date().toISOString());
    const before = await folders();
    expect(before).toHaveLength(3);
    const last = await (await startBackup(fleet, taskQueue, { ...input, keepMs: 1_000 })).result();

    const after = await folders();
    const stampOf = (url: string) => url.split('/').filter(Boolean).at(-1)!;
    const lastStamp = stampOf(last.folder);
    const slowStamp = stampOf(slowStatus.folder);
    expect(after).toEqual([slowStamp, lastStamp].sort());
    expect(last.pruned.map(stampOf).sort()).toEqual([stampOf(first.folder), ...(killedFolder ? [stampOf(killedFolder)] : before.filter((f) => f !== slowStamp && f !== stampOf(first.folder)))].sort());

    // What a user reads of it without logs: `backup status` (the last complete run, its coverage, the run in progress).
    // `backup verify` reads each archive of the newest complete run back: all match (read at once with the status, two
    // processes of their own), then one overwritten does not.
    const verify = () => runLonghaul(['backup', 'verify', '--org', BACKUP_ORG, '--archive-to', input.archiveTo, '--json'], taskQueue, env);
    const [shown, verified] = await Promise.all([runLonghaul(['backup', 'status', '--org', BACKUP_ORG, '--archive-to', input.archiveTo, '--json'], taskQueue, env), verify()]);
    expect(shown.code, shown.stderr).toBe(0);
    const [destination] = (JSON.parse(shown.stdout) as { destinations: { lastComplete: { url: string; coverage: { backedUp: number; listed: number } }; running: { workflowId: string }[] }[] }).destinations;
    expect(stampOf(destination.lastComplete.url)).toBe(lastStamp);
    expect(destination.lastComplete.coverage).toEqual({ backedUp: 30, listed: 30 });
    expect(destination.running.map((r) => r.workflowId)).toEqual([slow.workflowId]);
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ archives: 3, repositories: 30, ok: true, problems: [] });
    const manifest = JSON.parse((await objects.get(`${prefix}/${BACKUP_ORG}/${lastStamp}/manifest.json`))!.toString('utf8')) as { exports: { archive: string }[] };
    const damaged = manifest.exports[0].archive;
    await objects.put(damaged.slice(`s3://${BACKUP_BUCKET}/`.length), Buffer.from('not the archive'), 'application/gzip');
    const refused = await verify();
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ archives: 3, ok: false, problems: [{ archive: damaged, ok: false, found: { bytes: 15 } }] });
    await slow.terminate('test over');
  });

  it('a host SIGKILLed mid-listing: the listing goes on from the next page on the other host, not from the first', async () => {
    const env = s3Env();
    // 1,050 repositories: 11 pages of 100, each answered a second late so that the kill lands mid-listing.
    const e = await fleet.emulator({ organizations: { [BACKUP_ORG]: { repositories: 1_050 } }, migrations: { exportMs: 200, archiveBytes: 256 } });
    e.setFaults([{ method: 'GET', path: `/orgs/${BACKUP_ORG}/repos`, kind: 'slow', delayMs: 1_000 }]);
    const listings = () => e.requestLog.filter((r) => r.method === 'GET' && r.path === `/orgs/${BACKUP_ORG}/repos`).length;
    const { hosts, taskQueue } = await backupFleet(fleet, e, env);
    const handle = await startBackup(fleet, taskQueue, backupInput('s3', `listing-${randomUUID().slice(0, 6)}`, { reposPerExport: 500 }));
    await waitFor('three pages listed', () => handle.query(backupStatusQuery), (s) => s.listedPages >= 3, 120_000, 50);
    const lister = await waitFor('the host listing the next page', async () => (await runningActivities(handle)).find((a) => a.activity === 'listRepositoriesPage'), (a) => a?.identity !== undefined, 60_000, 20);
    const victim = hostOf(hosts, lister!.identity);
    expect(victim, `a host runs the listing (${lister!.identity})`).toBeDefined();
    const pagesAtKill = (await handle.query(backupStatusQuery)).listedPages;
    await victim!.kill();
    e.setFaults([]);
    const result = await handle.result();
    expect(result.listed).toBe(1_050);
    expect(result.backedUp).toBe(1_050);
    // Each page asked once, but for the one in flight at the kill (and one the victim may have finished unseen):
    // a listing started over would ask again for the pages listed before the kill.
    expect(listings()).toBeGreaterThanOrEqual(11);
    expect(listings()).toBeLessThanOrEqual(11 + 2);
    console.info(`backup listing: killed ${victim!.name} with ${pagesAtKill} pages listed; ${listings()} listing requests for 11 pages`);
  });

  it('the CLI creates the Schedule; while no worker runs, later times are skipped, and the run is made once when one starts', async () => {
    const env = s3Env();
    const e = await fleet.emulator({ organizations: { [BACKUP_ORG]: { repositories: 12 } }, migrations: { exportMs: 200, archiveBytes: 512 } });
    const taskQueue = `org-backup-schedule-${randomUUID()}`;
    const archiveTo = `s3://${BACKUP_BUCKET}/scheduled-${randomUUID().slice(0, 6)}`;
    // Bad input is refused before anything is created (asked at the same time, from a process of its own).
    const [cli, refused] = await Promise.all([
      runLonghaul(['backup', '--org', BACKUP_ORG, '--archive-to', archiveTo, '--every', '2s', '--repos-per-export', '5', '--json'], taskQueue, env),
      runLonghaul(['backup', '--org', BACKUP_ORG, '--archive-to', 'ftp://x/y', '--every', '2s'], taskQueue, env),
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    const { scheduleId } = JSON.parse(cli.stdout) as { scheduleId: string };
    const client = await fleet.client();
    const schedule = client.schedule.getHandle(scheduleId);
    fleet.closeLater(() => schedule.delete().catch(() => undefined));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/unknown scheme/);
    // No worker polls the queue: the first time starts a run nobody works on; the next ones are skipped (overlap).
    const skipped = await waitFor('two times skipped while the first run waits for a worker', () => schedule.describe(), (d) => d.info.numActionsSkippedOverlap >= 2, 60_000, 200);
    expect(skipped.info.numActionsTaken).toBe(1);
    const [first] = skipped.info.recentActions;
    const run = client.workflow.getHandle(first.action.workflow.workflowId);
    fleet.track(run);
    await backupFleet(fleet, e, env, 1, taskQueue);
    const result = (await run.result()) as BackupResult;
    expect(result.backedUp).toBe(12);
    // Pause, then look: the missed times were not each made up for.
    await schedule.pause('test');
    const after = await schedule.describe();
    const runs = new Set(after.info.recentActions.map((a) => a.action.workflow.workflowId));
    // Each time the Schedule took an action after the worker started is a run of its own, one at a time: never more
    // runs than times taken, and the times skipped while the first waited are not made up later.
    expect(after.info.numActionsTaken).toBe(runs.size);
    expect(after.info.numActionsSkippedOverlap).toBeGreaterThanOrEqual(2);
    const listed = await runLonghaul(['backup', '--list', '--json'], taskQueue, env);
    expect(JSON.parse(listed.stdout).schedules.map((x: { scheduleId: string }) => x.scheduleId)).toContain(scheduleId);
  });
});
