/**
 * The worker as a separate process for benchmarks, so its CPU and RSS are its own and measured from
 * `/proc` (Linux), not mixed with the emulator's or the bench driver's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Resident set size of a process, in KiB (0 when it cannot be read). */
export async function rssKb(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** User + system CPU time a process has used, in seconds (0 when it cannot be read). */
export async function cpuSeconds(pid: number): Promise<number> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Starts `src/worker.ts` with `env` added to this process's environment; resolves once it polls. */
export async function startWorkerProcess(env: Record<string, string>): Promise<{ child: ChildProcess; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'src', 'worker.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('polling task queue')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with code ${code}`)));
  });
  return {
    child,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
    },
  };
}
