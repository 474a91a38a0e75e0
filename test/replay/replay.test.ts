/**
 * Replays every recorded history under `test/replay/histories/` against the current workflow code (the suite's
 * bundle): a change to a workflow that would break runs already in flight (a command added, removed or reordered
 * without `patched()`) fails here, in CI, before it reaches a worker. Record with `npm run record:replay`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker, type ReplayResult } from '@temporalio/worker';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import { bundleEntry } from '../helpers/workflows-entry';
import { PROCESS_NAMES } from '../../src/processes';
import { LonghaulProcess } from '../../src/common/search-attributes';
import { quietRuntime } from '../helpers/temporal';


const HISTORIES_DIR = join(__dirname, 'histories');
/**
 * `histories/*.json` is what `npm run record:replay` writes (and never replaces); `histories/kept/*.json` are histories
 * of older workflow versions kept by hand while runs of that version may still be open (see README, Development).
 */
const jsonIn = (dir: string) => (existsSync(join(HISTORIES_DIR, dir)) ? readdirSync(join(HISTORIES_DIR, dir)).filter((f) => f.endsWith('.json')) : []);
const files = [...jsonIn('.'), ...jsonIn('kept').map((f) => `kept/${f}`)].sort();
const readHistory = (file: string) => historyFromJSON(JSON.parse(readFileSync(join(HISTORIES_DIR, file), 'utf8')));
const load = (file: string): HistoryAndWorkflowId => ({ workflowId: file.replace(/\.json$/, ''), history: readHistory(file) });

async function replay(histories: HistoryAndWorkflowId[]): Promise<ReplayResult[]> {
  quietRuntime();
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: inject('workflowBundlePath') } }, histories)) results.push(result);
  return results;
}

/** The names the workflow code defines, read from the bundle's entry (written from the list of processes). */
interface Defined {
  /** The workflow types the worker registers: every function the entry exports (the type is its name). */
  registeredTypes: string[];
  /** Each of which must have a recorded history, except the rate governor's (its runs never end: none recorded yet). */
  workflowTypes: string[];
  /** The Update, Signal and Query definitions the workflows export, as `update pollFeed`, `signal stopFeedCursor`… */
  messages: Set<string>;
}
const isMessage = (v: unknown): v is { type: string; name: string } => typeof v === 'object' && v !== null && 'type' in v && 'name' in v && ['update', 'signal', 'query'].includes(String(v.type));
async function defined(): Promise<Defined> {
  const entry = await bundleEntry();
  const registeredTypes = Object.values(entry).flatMap((v) => (typeof v === 'function' ? [v.name] : []));
  return {
    registeredTypes,
    workflowTypes: registeredTypes.filter((type) => type !== (entry.rateGovernor as { name: string }).name),
    messages: new Set(Object.values(entry).flatMap((v) => (isMessage(v) ? [`${v.type} ${v.name}`] : []))),
  };
}

describe('replay of recorded histories', () => {
  it('has a recorded history of every workflow type, including a cancelled run and a continued-as-new one', async () => {
    const { workflowTypes } = await defined();
    const typeOf = (file: string) => readHistory(file).events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
    const types = new Set(files.map(typeOf));
    for (const type of workflowTypes) expect(types, `no recorded history of ${type}`).toContain(type);
    expect(files.some((f) => f.includes('--cancelled'))).toBe(true);
    expect(files.some((f) => /--run\d+\.json$/.test(f))).toBe(true);
  });

  it('still defines every name a recorded run used: its workflow type, the Updates and Signals it took, its LonghaulProcess', async () => {
    const { registeredTypes, messages } = await defined();
    const used = new Set<string>();
    for (const file of files) {
      for (const event of readHistory(file).events ?? []) {
        const started = event.workflowExecutionStartedEventAttributes;
        if (started?.workflowType?.name) used.add(`workflow ${started.workflowType.name}`);
        const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
        if (signal) used.add(`signal ${signal}`);
        const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
        if (update) used.add(`update ${update}`);
        const process = (started ?? event.upsertWorkflowSearchAttributesEventAttributes)?.searchAttributes?.indexedFields?.[LonghaulProcess.name]?.data;
        if (process) used.add(`process ${JSON.parse(Buffer.from(process).toString('utf8')) as string}`);
      }
    }
    const names = new Set([...registeredTypes.map((t) => `workflow ${t}`), ...messages, ...PROCESS_NAMES.map((p) => `process ${p}`)]);
    // The recorded runs exercise each kind of name: the check below has something to compare.
    for (const kind of ['workflow', 'signal', 'update', 'process']) expect([...used].some((u) => u.startsWith(`${kind} `)), `no recorded ${kind} name`).toBe(true);
    expect([...used].filter((u) => !names.has(u))).toEqual([]);
  });

  it('replays every recorded history against the current workflow code without a non-determinism error', async () => {
    const results = await replay(files.map(load));
    expect(results.map((r) => r.workflowId)).toEqual(files.map((f) => f.replace(/\.json$/, '')));
    const failures = results.filter((r) => r.error).map((r) => `${r.workflowId}: ${r.error!.name}: ${r.error!.message}`);
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('detects a history whose commands the code no longer issues (the check can fail)', async () => {
    // The recorded migration with its activity calls renamed: as if the code had since changed which activity it runs.
    const original = load('orgMigration--happy.json');
    const tampered = JSON.parse(readFileSync(join(HISTORIES_DIR, 'orgMigration--happy.json'), 'utf8')) as { events: Array<Record<string, { activityType?: { name: string } }>> };
    let renamed = 0;
    for (const event of tampered.events) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType) {
        scheduled.activityType.name = `${scheduled.activityType.name}Renamed`;
        renamed++;
      }
    }
    expect(renamed).toBeGreaterThan(0);
    const [result] = await replay([{ workflowId: original.workflowId, history: historyFromJSON(tampered) }]);
    expect(result.error?.name).toBe('DeterminismViolationError');
  });
});
