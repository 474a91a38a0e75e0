/**
 * The one list of processes (src/processes/index.ts) is what the rest is built from or checked against: the
 * workflow bundle's entry exports exactly the descriptors' workflows, every activity has one owner and one
 * summary, an activity name two processes define is refused when the worker starts, and the failure registry's
 * groups, the process names and the search attributes each belong to the processes that use them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { bundleEntry } from '../helpers/workflows-entry';
import { ActivityNameClash, PROCESS_KINDS, PROCESS_NAMES, PROCESSES, processActivities, processWorkflows, workflowsEntry } from '../../src/processes';
import { defineProcess, type AnyProcess } from '../../src/processes/descriptor';
import type { ActivityDeps } from '../../src/activities/context';
import { FAILURES, failureGroups, registeredGroup } from '../../src/common/failures';
import { MIGRATION_FAILURES } from '../../src/processes/org-migration/failures';
import { ExportFailure } from '../../src/processes/org-backup/model';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';

const processes: readonly AnyProcess[] = PROCESSES;
/** The factories only close over their dependencies: building them reads none. */
const deps = {} as ActivityDeps;

/** Each value and the processes that claim it. */
function owners<T>(claims: (p: AnyProcess) => readonly T[]): Map<T, string[]> {
  const map = new Map<T, string[]>();
  for (const p of processes) for (const value of claims(p)) map.set(value, [...(map.get(value) ?? []), p.name]);
  return map;
}

describe('the processes', () => {
  it('are each one folder, named as their descriptor says', () => {
    expect(processes.map((p) => p.name)).toEqual(['org-migration', 'source-import', 'google-operation', 'feed-poll', 'hook-repair', 'rate-governor', 'scheduled-run', 'org-backup']);
  });

  it("give the workflow bundle's entry, written from the list, exactly their workflows, each under its type", async () => {
    const entry = await bundleEntry();
    const exported = Object.entries(entry).filter(([, value]) => typeof value === 'function');
    const listed = processWorkflows();
    for (const wf of listed) expect(entry, `the entry lacks ${wf.name}: export it from its process's workflow.ts`).toHaveProperty(wf.name, wf);
    expect(exported.map(([name]) => name).sort()).toEqual(listed.map((wf) => wf.name).sort());
    for (const [type, claimants] of owners((p) => p.workflows.map((wf) => wf.name))) expect(claimants, type).toHaveLength(1);
  });

  it("export from each one's workflow.ts exactly its own workflows", async () => {
    for (const p of processes.filter((p) => p.workflows.length > 0)) {
      const module = (await import(`../../src/processes/${p.name}/workflow`)) as Record<string, unknown>;
      const functions = Object.values(module).filter((value) => typeof value === 'function');
      expect(functions, `${p.name}/workflow.ts`).toEqual(expect.arrayContaining([...p.workflows]));
      expect(functions, `${p.name}/workflow.ts exports a function that is not one of its workflows`).toHaveLength(p.workflows.length);
    }
  });

  it("complete the failure registry through the bundle's entry alone, as workflow code sees it in the sandbox", async () => {
    const everywhere = failureGroups().map((g) => [g.name, g.specs] as const);
    vi.resetModules();
    await bundleEntry();
    const sandbox = await import('../../src/common/failures');
    expect(sandbox.failureGroups).not.toBe(failureGroups);
    expect(new Map(sandbox.failureGroups().map((g) => [g.name, g.specs] as const))).toEqual(new Map(everywhere));
  });

  it("load, in the bundle's entry, every process's failure groups and workflows, nothing else of theirs", () => {
    const lines = workflowsEntry().split('\n');
    const imports = lines.filter((l) => l.startsWith('import ')).map((l) => l.match(/processes\/([^/]+)\/failures"/)?.[1]);
    expect(imports).toEqual(processes.filter((p) => (p.failures ?? []).length > 0).map((p) => p.name));
    const exports = lines.filter((l) => l.startsWith('export ')).map((l) => l.match(/processes\/([^/]+)\/workflow"/)?.[1]);
    expect(exports).toEqual(processes.filter((p) => p.workflows.length > 0).map((p) => p.name));
  });

  it('each own their activities, every one with a summary', async () => {
    for (const p of processes) {
      const names = Object.keys((await p.activities?.())?.(deps) ?? {}).sort();
      expect(Object.keys(p.summaries ?? {}).sort(), `${p.name}'s summaries`).toEqual(names);
    }
    const all = Object.keys(await processActivities(deps));
    expect(all).toEqual([...new Set(all)]);
    expect(all).toContain('startMigration');
    expect(all).toContain('recordScheduledRunFailure');
  });

  it('refuse an activity name two processes define, naming both', async () => {
    const first = defineProcess({ name: 'first', processNames: [], workflows: [], activities: async () => () => ({ fetchThing: async () => 1 }) });
    const second = defineProcess({ name: 'second', processNames: [], workflows: [], activities: async () => () => ({ fetchThing: async () => 2 }) });
    await expect(processActivities(deps, [first, second])).rejects.toThrow(ActivityNameClash);
    await expect(processActivities(deps, [first, second])).rejects.toThrow('activity "fetchThing" is defined by both first and second');
    await expect(processActivities(deps, [...processes, first])).resolves.toBeDefined();
  });

  it('each own their groups of the failure registry, kept in their folder; the rest belong to the layers below', () => {
    const owned = owners((p) => (p.failures ?? []).map((specs) => registeredGroup(specs)?.name));
    for (const [group, claimants] of owned) expect(claimants, group).toHaveLength(1);
    expect(owned.has(undefined), 'a descriptor lists a table that is not a group of the registry').toBe(false);
    // Loading every descriptor added every group there is: none is registered that no process owns.
    const layers = failureGroups().filter((g) => !owned.has(g.name)).map((g) => g.name);
    expect(layers).toEqual(Object.keys(FAILURES));
    expect(Object.keys(FAILURES)).toEqual(['http', 'activity', 'outage', 'quietPoll', 'credential', 'path', 'archive', 'objectStore']);
  });

  it("that read another process's failure types name them as its group does", () => {
    expect(ExportFailure).toEqual({ ExportFailed: MIGRATION_FAILURES.ExportFailed.type, StartFailed: MIGRATION_FAILURES.StartFailed.type });
  });

  it('each own their process names (the LonghaulProcess values), named in their folder (names.ts), each once', async () => {
    const owned = owners((p) => p.processNames);
    for (const [name, claimants] of owned) expect(claimants, name).toHaveLength(1);
    expect(PROCESS_NAMES).toEqual([...owned.keys()]);
    for (const p of processes) {
      if (p.processNames.length === 0) continue;
      const { Process } = (await import(`../../src/processes/${p.name}/names`)) as { Process: Record<string, string> };
      expect(Object.values(Process), `${p.name}/names.ts`).toEqual(p.processNames);
    }
    // What dashboards and running work select on: none lost, none renamed (the replay test checks the recorded ones).
    expect(PROCESS_NAMES).toEqual(['org-migration', 'source-import', 'apikey-delete', 'log-bucket-create', 'log-bucket-update', 'dns-change', 'feed-poll', 'feed-cursor', 'hook-repair', 'hook-ping', 'rate-governor', 'backup']);
  });

  it('name, together, every search attribute the namespace registers', () => {
    const used = new Set(processes.flatMap((p) => p.searchAttributes ?? []));
    expect([...used].map((key) => key.name).sort()).toEqual(ALL_SEARCH_ATTRIBUTES.map((key) => key.name).sort());
  });

  it("describe only their own workflow types, and schedule only their own workflows", () => {
    for (const p of processes) {
      const types = p.workflows.map((wf) => wf.name);
      for (const type of Object.keys(p.kinds ?? {})) expect(types, `${p.name} describes ${type}`).toContain(type);
      for (const s of p.schedules ?? []) expect(types, `${p.name} schedules ${s.workflowType}`).toContain(s.workflowType);
    }
    expect(Object.keys(PROCESS_KINDS).sort()).toEqual(['apiKeyDelete', 'dnsChange', 'feedPollRun', 'hookPing', 'logBucketCreate', 'logBucketUpdate', 'orgBackup', 'orgMigration', 'sourceImport']);
  });

  it("are the rows of the layout's table of processes (docs/architecture.md)", () => {
    const doc = readFileSync(join(__dirname, '../../docs/architecture.md'), 'utf8');
    const table = doc.slice(doc.indexOf('| Process | Emulator routes |'));
    const rows = [...table.slice(0, table.indexOf('\n\n')).matchAll(/^\| ([a-z]+(?:-[a-z]+)+) \|/gm)].map((m) => m[1]);
    expect(rows).toEqual(processes.map((p) => p.name));
  });
});
