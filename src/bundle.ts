/**
 * `npm run build:bundle [-- OUT]` — bundles the workflows once (default `dist/workflow-bundle.js`), for
 * workers started with `LONGHAUL_WORKFLOW_BUNDLE=<path>` (the Docker image, benchmarks), and beside it
 * `….encoded-failures.js`, the same with the failure converter that encrypts failures' messages, which such a
 * worker runs instead when a codec key is configured.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { encodedFailuresBundlePath } from './temporal/workflow-bundle';
import { workflowBundleOptions } from './worker';

export async function writeWorkflowBundle(out: string): Promise<string> {
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, (await bundleWorkflowCode(workflowBundleOptions())).code);
  await writeFile(encodedFailuresBundlePath(out), (await bundleWorkflowCode(workflowBundleOptions({ encodedFailures: true }))).code);
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
