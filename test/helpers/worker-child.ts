/**
 * A longhaul worker in a process of its own, for tests that kill it with SIGKILL (a crash: no shutdown, no
 * failed attempt reported, the lock and the .part left as they are). Input: one JSON argument; prints
 * `ready` once polling.
 */
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { createLonghaulWorker } from '../../src/worker';
import { createGithubClient } from '../../src/http/github';
import { createGoogleClients } from '../../src/http/google';
import type { GithubApiVersion } from '../../src/config';

export interface WorkerChildInput {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  workflowBundlePath: string;
  apiUrl: string;
  token: string;
  dataDir: string;
  /** The test file's GitHub REST API version (`api-version.ts`). */
  apiVersion: GithubApiVersion;
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]) as WorkerChildInput;
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: input.temporalAddress });
  const token = () => input.token;
  const worker = await createLonghaulWorker({
    connection,
    namespace: input.namespace,
    taskQueue: input.taskQueue,
    deps: {
      github: createGithubClient({ baseUrl: input.apiUrl, token, apiVersion: input.apiVersion }),
      google: createGoogleClients({ apikeys: input.apiUrl, logging: input.apiUrl, dns: input.apiUrl }, { token }),
      dataDir: input.dataDir,
      clock: Date.now,
    },
    workflowBundle: { codePath: input.workflowBundlePath },
    // Its sticky queue is handed back quickly once it is gone.
    workerOptions: { stickyQueueScheduleToStartTimeout: '1s' },
  });
  const running = worker.run();
  process.stdout.write('ready\n');
  await running;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
