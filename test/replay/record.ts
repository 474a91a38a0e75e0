/**
 * `npm run record:replay [-- <name-filter>]` — runs every scenario of `scenarios.ts` on a fresh in-memory dev server
 * with the emulator and a real worker built from the current workflow code, and saves each run's history under
 * `test/replay/histories/` as `<WorkflowType>--<scenario>[--run<N>].json` (the SDK's `historyToJSON`, the same
 * format `temporal workflow show --output json` writes). Files of the recorded scenarios are replaced.
 *
 * Re-record after a deliberate change of a workflow's commands (and only then: a replay failure you did not
 * intend means running workflows would break — see README, Development).
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
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
    const label = scenario.name.split('--').slice(1).join('--');
    const written: string[] = [];
    for (const workflowId of ids) {
      const runs = await followContinueAsNew(client, workflowId);
      for (const [i, run] of runs.entries()) {
        const history = await fetchHistory(client, workflowId, run.runId);
        const type = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
        const file = `${type}--${label}${runs.length > 1 ? `--run${i + 1}` : ''}.json`;
        await writeFile(join(HISTORIES_DIR, file), `${historyToJSON(history)}\n`);
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
  // Replace the recorded scenarios' files (a chain may now have fewer runs): all of them on a full recording.
  for (const file of await readdir(HISTORIES_DIR)) {
    if (file.endsWith('.json') && (!filter || chosen.some((s) => file.startsWith(`${s.name}.`) || file.startsWith(`${s.name}--`)))) await rm(join(HISTORIES_DIR, file));
  }

  const server = await startDevServer({ port: 0, uiPort: false, log });
  try {
    log('bundling the workflows from the current sources…');
    const { code } = await bundleWorkflowCode({ ...workflowBundleOptions(), logger: new DefaultLogger('WARN') });
    for (const scenario of chosen) {
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
