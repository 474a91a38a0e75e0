/**
 * The standalone emulator as a user starts it (`npm run emulator`; here its CLI compiled, `compiled-js.ts`), as a
 * child process: started with arguments and environment, resolved once its start banner is complete.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { compiled } from './compiled-entry';

const root = join(__dirname, '..', '..');

export interface EmulatorProcess {
  child: ChildProcess;
  output: () => string;
}

/** The last line of the start banner: every URL has been printed before it. */
const BANNER_END = 'effective configuration';

/** `npm run emulator -- <args>` as a process; resolves once it printed its URLs, rejects if it exits first. */
export async function startEmulatorProcess(args: string[], env: Record<string, string> = {}, running: EmulatorProcess[] = []): Promise<EmulatorProcess> {
  const child = spawn(process.execPath, [compiled(join(root, 'packages', 'emulator', 'src', 'cli.ts')), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const proc = { child, output: () => output };
  running.push(proc);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the emulator did not start within 90 s:\n${output}`)), 90_000);
    child.stdout!.on('data', () => {
      if (output.includes(BANNER_END)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the emulator exited early with code ${code}:\n${output}`));
    });
  });
  return proc;
}

/** Stops the process with `signal` and waits for it to exit. */
export async function stopEmulatorProcess(proc: EmulatorProcess, signal: NodeJS.Signals): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  const exited = new Promise((r) => proc.child.once('exit', r));
  proc.child.kill(signal);
  await exited;
}

/** The base URLs the start banner printed, by label (`GitHub API`, `google-dns`, `storage origin`…): each line's first URL. */
export function printedUrls(output: string): Map<string, string> {
  return new Map([...output.matchAll(/^ {2}([\w -]+):\s+(https?:\/\/\S+)/gm)].map((m) => [m[1].trim(), m[2]]));
}
