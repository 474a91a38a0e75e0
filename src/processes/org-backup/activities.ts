/**
 * The backup's activities (issue 38): one HTTP call or one store operation each. What is bulky (the listing, the
 * plan) goes to the run's folder in the object store, the one place both hosts of a fleet share (each worker's
 * data directory is its own); the workflow's history carries counts, plan indices and archive facts.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import type { MetricCounter, MetricGauge } from '@temporalio/common';
import { githubFor, type ActivityDeps } from '../../activities/context';
import { parseLinkHeader } from '../../http/api-client';
import { answer, expectList, required } from '../../http/answer';
import { parseDestination, type ArchiveDestination } from '../../archive/object-store/destination';
import { objectsFor, type ObjectAccess } from '../../archive/object-store/objects';
import { storeFor } from '../../archive/object-store/stores';
import { currentActivity } from '../../temporal/current-activity';
import { LonghaulOrg, LonghaulProcess } from '../../common/search-attributes';
import { Process } from './names';
import { FailureType } from '../../common/failures';
import { planExports, type ListedRepository } from './plan';
import { BackupFailure, MANIFEST, RUN_STATE_DIR, stampTime, type FailedRepository, type Manifest, type StoredExport } from './model';

const REPO_SHAPE = answer({ id: required('integer'), name: required('string'), size: required('integer') });
const PER_PAGE = 100;

/** The store and the key prefix of a folder URL (`s3://bucket/prefix/org/stamp/`). */
function folderOf(folderUrl: string, env: NodeJS.ProcessEnv = process.env): { destination: ArchiveDestination; objects: ObjectAccess; prefix: string } {
  const destination = parseDestination(folderUrl, 'folder');
  return { destination, objects: objectsFor(destination, env), prefix: destination.prefix };
}

const pageKey = (prefix: string, page: number) => `${prefix}${RUN_STATE_DIR}listing-${String(page).padStart(5, '0')}.json`;
const planKey = (prefix: string) => `${prefix}${RUN_STATE_DIR}plan.json`;

async function readJson<T>(objects: ObjectAccess, key: string): Promise<T> {
  const body = await objects.get(key);
  if (!body) throw ApplicationFailure.nonRetryable(`${objects.url(key)} is missing: the run's folder was changed under it`, BackupFailure.ListingFailed);
  return JSON.parse(body.toString('utf8')) as T;
}

export interface ListedPage {
  /** Repositories on this page. */
  count: number;
  /** The next page's number, when there is one. */
  next?: number;
  /** The last page's number, as GitHub's `Link` says. */
  last?: number;
}


let backupMetrics: { lastSuccess: MetricGauge; repositories: MetricCounter; runs: MetricCounter } | undefined;
function metrics() {
  if (!currentActivity()) return undefined;
  const meter = Runtime.instance().metricMeter;
  return (backupMetrics ??= {
    lastSuccess: meter.createGauge('longhaul_backup_last_success_timestamp_seconds', 'int', 's', 'When the last complete backup run of an organization into a destination finished (Unix seconds)'),
    repositories: meter.createCounter('longhaul_backup_repositories_total', '1', 'Repositories of complete backup runs, by org, destination and outcome (stored, export-failed, gone, error)'),
    runs: meter.createCounter('longhaul_backup_runs_total', '1', 'Backup runs ended, by org, destination and outcome (complete, failed)'),
  });
}

export function createBackupActivities(deps: ActivityDeps) {
  return {
    /** One call to the store: the bucket is there and the worker's credentials reach it (before anything is exported). */
    async checkBackupDestination(input: { archiveTo: string }): Promise<void> {
      await (await storeFor(parseDestination(input.archiveTo, 'archiveTo'))).check();
    },

    /**
     * `GET /orgs/{org}/repos?type=all&sort=created&direction=asc&per_page=100&page=N`, written to the run's folder
     * (`_run/listing-0000N.json`): oldest first, so a repository created during the listing lands on a later page
     * instead of shifting the earlier ones. One page per activity: a crash mid-listing resumes at its page.
     */
    async listRepositoriesPage(input: { org: string; page: number; folder: string }): Promise<ListedPage> {
      const res = await githubFor(deps).request<unknown[]>({
        method: 'GET',
        path: `/orgs/${encodeURIComponent(input.org)}/repos`,
        query: { type: 'all', sort: 'created', direction: 'asc', per_page: PER_PAGE, page: input.page },
      });
      const repos = expectList<{ id: number; name: string; size: number }>(res, 'GET', REPO_SHAPE).map((r) => ({ id: r.id, name: r.name, size: r.size }));
      const { objects, prefix } = folderOf(input.folder);
      await objects.put(pageKey(prefix, input.page), Buffer.from(JSON.stringify(repos)), 'application/json');
      const links = parseLinkHeader(res.headers.link);
      const pageOf = (url: string | undefined) => (url ? Number(new URL(url).searchParams.get('page')) || undefined : undefined);
      const next = pageOf(links.next);
      const last = pageOf(links.last);
      return { count: repos.length, ...(next !== undefined ? { next } : {}), ...(last !== undefined ? { last } : {}) };
    },

    /** Reads the listing's pages back, plans the exports (`plan.ts`) and writes the plan to the folder. */
    async planBackupExports(input: { folder: string; pages: number; reposPerExport: number }): Promise<{ exports: number; repositories: number }> {
      const { objects, prefix } = folderOf(input.folder);
      const seen = new Map<string, ListedRepository>();
      for (let page = 1; page <= input.pages; page++) {
        // A repository listed twice (pages shifted by a deletion during the listing) is exported once.
        for (const r of await readJson<ListedRepository[]>(objects, pageKey(prefix, page))) seen.set(r.name.toLowerCase(), { name: r.name, size: r.size });
      }
      const plan = planExports([...seen.values()], input.reposPerExport);
      await objects.put(planKey(prefix), Buffer.from(JSON.stringify(plan)), 'application/json');
      return { exports: plan.length, repositories: seen.size };
    },

    /** The repositories of the plan's export `part`. */
    async plannedExport(input: { folder: string; part: number }): Promise<string[]> {
      const { objects, prefix } = folderOf(input.folder);
      const plan = await readJson<string[][]>(objects, planKey(prefix));
      const names = plan[input.part];
      if (!names) throw ApplicationFailure.nonRetryable(`the plan of ${input.folder} has no export ${input.part}`, BackupFailure.ListingFailed);
      return names;
    },

    /**
     * Writes `manifest.json`, the run's last object: each repository with its archive, SHA-256, size and export id,
     * and the repositories that failed with GitHub's reason. Its URL.
     */
    async writeBackupManifest(input: { folder: string; org: string; destination: string; startedAt: string; finishedAt: string; listed: number; stored: StoredExport[]; failed: FailedRepository[] }): Promise<{ url: string; repositories: number }> {
      const { objects, prefix } = folderOf(input.folder);
      const plan = input.stored.some((s) => s.part !== undefined) ? await readJson<string[][]>(objects, planKey(prefix)) : [];
      const manifest: Manifest = {
        format: 'longhaul-backup/1',
        org: input.org,
        startedAt: input.startedAt,
        finishedAt: input.finishedAt,
        destination: input.destination,
        listed: input.listed,
        repositories: [],
        failed: input.failed,
        exports: [],
      };
      for (const s of input.stored) {
        const names = s.names ?? plan[s.part ?? -1] ?? [];
        manifest.exports.push({ exportId: s.migrationId, archive: s.url, sha256: s.sha256, bytes: s.bytes, repositories: names.length });
        for (const name of names) manifest.repositories.push({ name, archive: s.url, sha256: s.sha256, bytes: s.bytes, exportId: s.migrationId });
      }
      manifest.repositories.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const key = `${prefix}${MANIFEST}`;
      await objects.put(key, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`), 'application/json');
      const m = metrics();
      const labels = { org: input.org, destination: input.destination };
      m?.lastSuccess.set(Math.floor(Date.parse(input.finishedAt) / 1000), labels);
      m?.runs.add(1, { ...labels, outcome: 'complete' });
      m?.repositories.add(manifest.repositories.length, { ...labels, outcome: 'stored' });
      for (const kind of ['export-failed', 'gone', 'error'] as const) {
        const n = input.failed.filter((f) => f.kind === kind).length;
        if (n) m?.repositories.add(n, { ...labels, outcome: kind });
      }
      return { url: objects.url(key), repositories: manifest.repositories.length };
    },

    /**
     * Retention: deletes the run folders of `org` under `archiveTo` that started more than `keepMs` before `nowMs`,
     * never the newest complete one (with a manifest), never the current run, never a run still in progress (a
     * running backup workflow of this org records its folder in its memo). A folder that is not a run's is left.
     */
    async pruneBackupRuns(input: { archiveTo: string; org: string; keepMs: number; nowMs: number; currentFolder: string }): Promise<string[]> {
      const orgFolder = `${input.archiveTo.endsWith('/') ? input.archiveTo : `${input.archiveTo}/`}${input.org}/`;
      const { objects, prefix } = folderOf(orgFolder);
      const folders = (await objects.list(prefix, '/')).prefixes
        .map((p) => ({ prefix: p, startedAt: stampTime(p.slice(prefix.length).replace(/\/$/, '')) }))
        .filter((f): f is { prefix: string; startedAt: number } => f.startedAt !== undefined)
        .sort((a, b) => b.startedAt - a.startedAt);
      const complete = new Set<string>();
      for (const f of folders) if (await objects.get(`${f.prefix}${MANIFEST}`)) complete.add(f.prefix);
      const newestComplete = folders.find((f) => complete.has(f.prefix))?.prefix;
      const running = await runningFolders(input.org);
      const current = parseDestination(input.currentFolder, 'folder').prefix;
      const pruned: string[] = [];
      for (const f of folders) {
        if (f.prefix === current || f.prefix === newestComplete || running.has(objects.url(f.prefix))) continue;
        if (input.nowMs - f.startedAt <= input.keepMs) continue;
        // The manifest first: a folder half deleted reads as incomplete, never as a complete run with holes.
        if (complete.has(f.prefix)) await objects.delete(`${f.prefix}${MANIFEST}`);
        for (const o of (await objects.list(f.prefix)).objects) await objects.delete(o.key);
        pruned.push(objects.url(f.prefix));
        Context.current().heartbeat({ pruned: pruned.length });
      }
      return pruned;
    },

    /**
     * `DELETE /orgs/{org}/migrations/{id}/archive`: GitHub's copy of an export the run stored. Already gone (404,
     * 410: an earlier attempt's answer was lost with its host, or GitHub's 7 days passed) is done, not a failure.
     */
    async deleteGithubArchive(input: { org: string; migrationId: number }): Promise<'deleted' | 'gone'> {
      try {
        await githubFor(deps).request({ method: 'DELETE', path: `/orgs/${encodeURIComponent(input.org)}/migrations/${input.migrationId}/archive` });
        return 'deleted';
      } catch (err) {
        if (err instanceof ApplicationFailure && (err.type === FailureType.NotFound || err.type === FailureType.Gone)) return 'gone';
        throw err;
      }
    },

    /** Counts a run that ended without a manifest (`longhaul_backup_runs_total{outcome="failed"}`). */
    async recordBackupFailure(input: { org: string; destination: string }): Promise<void> {
      metrics()?.runs.add(1, { org: input.org, destination: input.destination, outcome: 'failed' });
    },
  };
}

/** The folders of this organization's backup runs still running, from their memo (`folder`). */
async function runningFolders(org: string): Promise<Set<string>> {
  const out = new Set<string>();
  const quote = (v: string) => `'${v.replace(/['\\]/g, '')}'`;
  const query = `${LonghaulProcess.name} = ${quote(Process.Backup)} AND ${LonghaulOrg.name} = ${quote(org)} AND ExecutionStatus = 'Running'`;
  for await (const wf of Context.current().client.workflow.list({ query })) {
    const folder = wf.memo?.folder;
    if (typeof folder === 'string') out.add(folder);
  }
  return out;
}

export type BackupActivities = ReturnType<typeof createBackupActivities>;
