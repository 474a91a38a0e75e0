/**
 * `npm run build:bundle [-- OUT]` — bundles the workflows once (default `dist/workflow-bundle.js`), for
 * workers started with `LONGHAUL_WORKFLOW_BUNDLE=<path>` (the Docker image, benchmarks).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundleOptions } from '../worker';

export async function writeWorkflowBundle(out: string): Promise<string> {
  const { code } = await bundleWorkflowCode(workflowBundleOptions());
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, code);
  return out;
}

if (require.main === module) {
  const out = resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  writeWorkflowBundle(out)
    .then((path) => console.log(`workflow bundle written to ${path}`))
    .catch((err: Error) => {
      console.error(`build:bundle: ${err.message}`);
      process.exit(1);
    });
}
