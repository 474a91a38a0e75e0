/**
 * `npm run record:replay [-- <name-filter>]` — runs every scenario of `scenarios.ts` on a fresh in-memory dev server
 * with the emulator and a real worker built from the current workflow code, and saves each run's history under
 * `test/replay/histories/` as `<WorkflowType>--<scenario>[--run<N>].json` (the SDK's `historyToJSON`, the same
 * format `temporal workflow show --output json` writes). It only ADDS histories: a scenario whose file exists
 * is skipped, never re-recorded, since a committed history stands for runs users have in flight (a replay
 * failure means those runs would break: guard the change with `patched()` and add a scenario for the new
 * path — see docs/development.md, "Replay").
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { startDevServer } from '../../src/temporal/dev-server';
import { createLonghaulWorker, workflowBundleOptions } from '../../src/worker';
import { emulatorDeps, startTestEmulator } from '../helpers/emulator';
import { fetchHistory, followContinueAsNew } from '../helpers/history';
import { scenarios, type Scenario } from './scenarios';

export const HISTORIES_DIR = join(__dirname, 'histories');
const SCENARIO_TIMEOUT_MS = 180_000;

const log = (m: string) => console.log(`[record] ${m}`);

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The part of a scenario's name after its workflow type: `orgMigration--happy` → `happy`, the file's suffix. */
function scenarioLabel(scenario: Scenario): string {
  return scenario.name.split('--').slice(1).join('--');
}

async function recordScenario(scenario: Scenario, address: string, code: string): Promise<string[]> {
  const emulator = await startTestEmulator(scenario.emulator);
  const connection = await NativeConnection.connect({ address });
  const clientConnection = await Connection.connect({ address });
  const client = new Client({ connection: clientConnection });
  const taskQueue = `record-${scenario.name}`;
  const worker = await createLonghaulWorker({ connection, namespace: 'default', taskQueue, deps: await emulatorDeps(emulator), workflowBundle: { code } });
  const running = worker.run();
  const stamp = Date.now().toString(36);
  try {
    const ids = await withTimeout(scenario.run({ client, taskQueue, emulator, id: (suffix) => `replay-${suffix}-${stamp}` }), SCENARIO_TIMEOUT_MS, scenario.name);
    const label = scenarioLabel(scenario);
    const written: string[] = [];
    for (const workflowId of ids) {
      const runs = await followContinueAsNew(client, workflowId);
      for (const [i, run] of runs.entries()) {
        const history = await fetchHistory(client, workflowId, run.runId);
        const type = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
        const file = `${type}--${label}${runs.length > 1 ? `--run${i + 1}` : ''}.json`;
        // 'wx': a committed history is never overwritten, whatever the file name turns out to be.
        await writeFile(join(HISTORIES_DIR, file), `${historyToJSON(history)}\n`, { flag: 'wx' });
        written.push(`${file} (${run.events} events, ${run.closedBy ?? 'running'})`);
      }
    }
    return written;
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await clientConnection.close();
    await emulator.close();
  }
}

async function main(): Promise<void> {
  const filter = process.argv[2];
  const chosen = scenarios.filter((s) => !filter || s.name.includes(filter));
  if (chosen.length === 0) throw new Error(`no scenario matches ${JSON.stringify(filter)}; names: ${scenarios.map((s) => s.name).join(', ')}`);
  Runtime.install({ logger: new DefaultLogger('WARN') });

  await mkdir(HISTORIES_DIR, { recursive: true });
  const recorded = (await readdir(HISTORIES_DIR)).filter((file) => file.endsWith('.json'));
  const isRecorded = (s: Scenario) => recorded.some((file) => file.endsWith(`--${scenarioLabel(s)}.json`) || file.includes(`--${scenarioLabel(s)}--run`));
  for (const s of chosen.filter(isRecorded)) log(`${s.name}: already recorded, kept as it is (committed histories are never re-recorded)`);
  const toRecord = chosen.filter((s) => !isRecorded(s));
  if (toRecord.length === 0) return log('nothing new to record');

  const server = await startDevServer({ port: 0, uiPort: false, log });
  try {
    log('bundling the workflows from the current sources…');
    const { code } = await bundleWorkflowCode({ ...workflowBundleOptions(), logger: new DefaultLogger('WARN') });
    for (const scenario of toRecord) {
      const started = Date.now();
      const written = await recordScenario(scenario, server.address, code);
      log(`${scenario.name} (${((Date.now() - started) / 1000).toFixed(1)} s): ${written.join(', ')}`);
    }
  } finally {
    await server.stop();
  }
  log(`saved under ${HISTORIES_DIR}; run \`npx vitest run test/replay\` to replay them`);
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(`record:replay: ${err.stack ?? err.message}`);
    process.exit(1);
  });
}
