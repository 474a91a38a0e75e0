/**
 * What the worker's workflow bundle is built from. The entry is written from the list of processes by whoever
 * builds the bundle (`workflowsEntry`, src/processes/index.ts: each process's `failures.ts` and `workflow.ts`) and
 * handed in as source: this layer names no process, and webpack, not Node, reads the entry.
 */
import { setting } from '../settings';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { BundleOptions } from '@temporalio/worker';
import { encodedFailuresConverterPath } from './codec';

/** A module under src/workflows, from sources (tsx, vitest) or compiled output (dist). */
function workflowsModule(name: string): string {
  const candidates = [`${name}.ts`, `${name}.js`].map((file) => join(__dirname, '..', 'workflows', file));
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`workflows module not found (looked for ${candidates.join(', ')})`);
  return found;
}

/**
 * The entry's file: `source` in the system's temporary directory, named after its content (so workers of
 * different checkouts or releases never share one, and a second bundle of the same entry writes nothing). Webpack
 * needs a file; its imports are absolute paths, so where it lies does not matter.
 */
export function workflowsEntryFile(source: string): string {
  const path = join(tmpdir(), `longhaul-workflows-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.ts`);
  if (existsSync(path) && readFileSync(path, 'utf8') === source) return path;
  // Written whole, then renamed: a worker starting beside another never reads half an entry.
  const partial = `${path}.${process.pid}.part`;
  writeFileSync(partial, source);
  renameSync(partial, path);
  return path;
}

/** Changes webpack's configuration before it bundles. */
export type WebpackConfigHook = NonNullable<BundleOptions['webpackConfigHook']>;

/**
 * Lets webpack find the packages from the entry's directory, which is outside the project: the SDK's own entry
 * beside it requires `@temporalio/workflow`, found in the directory that holds this module's copy of it (the same
 * copy the workflows' imports find from their folders, so the bundle holds one).
 */
export const findPackagesFromEntry: WebpackConfigHook = (config) => {
  const packages = dirname(dirname(dirname(require.resolve('@temporalio/workflow/package.json'))));
  return { ...config, resolve: { ...config.resolve, modules: [...(config.resolve?.modules ?? ['node_modules']), packages] } };
};

/**
 * What every workflow bundle is built from: the entry (`entrySource`, see the module's comment), the workflows'
 * interceptor (named credentials), and for workers with a codec key the failure converter that encrypts failures'
 * messages (`encodedFailures`).
 */
export function workflowBundleOptions(
  entrySource: string,
  opts: { encodedFailures?: boolean } = {},
): { workflowsPath: string; webpackConfigHook: WebpackConfigHook; workflowInterceptorModules: string[]; failureConverterPath?: string } {
  return {
    workflowsPath: workflowsEntryFile(entrySource),
    webpackConfigHook: findPackagesFromEntry,
    workflowInterceptorModules: [workflowsModule('kit/credential-interceptor')],
    ...(opts.encodedFailures ? { failureConverterPath: encodedFailuresConverterPath() } : {}),
  };
}

/** The prebuilt bundle with encoded failures that `npm run build:bundle` writes beside `bundlePath`. */
export function encodedFailuresBundlePath(bundlePath: string): string {
  return bundlePath.replace(/(\.js)?$/, '.encoded-failures.js');
}


/** A pre-built bundle (`npm run build:bundle`, `LONGHAUL_WORKFLOW_BUNDLE`), which spares a worker start the webpack build. */
export function workflowBundleOption(env: NodeJS.ProcessEnv = process.env): { codePath: string } | undefined {
  const codePath = setting('LONGHAUL_WORKFLOW_BUNDLE', env);
  return codePath ? { codePath } : undefined;
}
