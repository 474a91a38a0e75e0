/**
 * Starts one real Temporal dev server (in memory, on a free port) for the whole test run and builds the
 * workflow bundle once; test files reach both through `inject()`. Never a mock of Temporal.
 */
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer, type RunningDevServer } from '../src/temporal/dev-server';
import { workflowBundleOptions } from '../src/worker';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    workflowBundlePath: string;
  }
}

let server: RunningDevServer | undefined;
let bundleDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  const log = (m: string) => console.log(`[test setup] ${m}`);
  const started = Date.now();
  server = await startDevServer({ port: 0, uiPort: false, log });
  log(`Temporal dev server at ${server.address} (${Date.now() - started} ms)`);
  const { code } = await bundleWorkflowCode({ ...workflowBundleOptions(), logger: undefined });
  bundleDir = await mkdtemp(join(tmpdir(), 'longhaul-bundle-'));
  const bundlePath = join(bundleDir, 'workflow-bundle.js');
  await writeFile(bundlePath, code);
  project.provide('temporalAddress', server.address);
  project.provide('temporalNamespace', server.namespace);
  project.provide('workflowBundlePath', bundlePath);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
}
