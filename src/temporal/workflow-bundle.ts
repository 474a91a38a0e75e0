/**
 * What the worker's workflow bundle is built from. The entry is `src/workflows/index.ts` (every workflow type,
 * gathered from the processes), found by its path: this layer names no process, and webpack, not Node, reads it.
 */
import { setting } from '../settings';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { encodedFailuresConverterPath } from './codec';

/** A module under src/workflows, from sources (tsx, vitest) or compiled output (dist). */
function workflowsModule(name: string): string {
  const candidates = [`${name}.ts`, `${name}.js`].map((file) => join(__dirname, '..', 'workflows', file));
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`workflows module not found (looked for ${candidates.join(', ')})`);
  return found;
}

/** The workflows entry point. */
export function workflowsPath(): string {
  return workflowsModule('index');
}

/**
 * What every workflow bundle is built from: the workflows and their interceptor (named credentials), and for
 * workers with a codec key the failure converter that encrypts failures' messages (`encodedFailures`).
 */
export function workflowBundleOptions(opts: { encodedFailures?: boolean } = {}): { workflowsPath: string; workflowInterceptorModules: string[]; failureConverterPath?: string } {
  return {
    workflowsPath: workflowsPath(),
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
