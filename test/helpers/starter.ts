/** Runs the starter CLI as a user does: a real process against the shared dev server. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';

const root = join(__dirname, '..', '..');

export function runStarter(args: string[], taskQueue: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(root, 'src', 'starter.ts'), ...args],
      {
        cwd: root,
        env: { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace'), LONGHAUL_TASK_QUEUE: taskQueue },
        timeout: 60_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
