/**
 * Starts one real Temporal dev server (in memory, on a free port) for the whole test run, builds the workflow
 * bundle once and compiles the repository for the processes tests start (`helpers/compiled-js.ts`); test files
 * reach all three through `inject()`. Never a mock of Temporal.
 */
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer, type RunningDevServer } from '../src/temporal/dev-server';
import { workflowBundleOptions } from '../src/worker';
import { compileForChildProcesses, removeCompiled } from './helpers/compiled-js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    workflowBundlePath: string;
    /** The repository compiled to JavaScript (`helpers/compiled-js.ts`; `compiled()` finds a file in it). */
    compiledJsDir: string;
  }
}

let server: RunningDevServer | undefined;
let bundleDir: string | undefined;
let compiledJsDir: string | undefined;

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
  compiledJsDir = await compileForChildProcesses();
  project.provide('compiledJsDir', compiledJsDir);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
  if (compiledJsDir) await removeCompiled(compiledJsDir);
}
