/** Runs the CLI as a user does: a real process against the shared dev server. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';
import { compiled } from './compiled-entry';

const root = join(__dirname, '..', '..');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `onOutput`: each piece of standard output and error as it comes, for a test that acts while the command runs. */
function run(entry: string[], args: string[], taskQueue: string, onOutput?: (text: string) => void, env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...entry, ...args],
      {
        cwd: root,
        env: { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace'), LONGHAUL_TASK_QUEUE: taskQueue, ...env },
        timeout: 120_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (onOutput) for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer | string) => onOutput(String(chunk)));
  });
}

/** `src/starter.ts` (compiled), the design card's entry point for the workflow commands. */
export function runStarter(args: string[], taskQueue: string, onOutput?: (text: string) => void): Promise<CliRun> {
  return run([compiled(join(root, 'src', 'starter.ts'))], args, taskQueue, onOutput);
}

/**
 * The `longhaul` command as an installed package runs it: the compiled program (`bin/longhaul.js` runs dist/
 * after `npm run build`; which of the two it picks is `test/unit/bin-longhaul.test.ts`'s subject). `env` on top
 * of the shared server's.
 */
export function runLonghaul(args: string[], taskQueue: string, env: Record<string, string> = {}): Promise<CliRun> {
  return run([compiled(join(root, 'src', 'main.ts'))], args, taskQueue, undefined, env);
}
