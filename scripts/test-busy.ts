/**
 * `npm run test:busy [-- <vitest filters and flags>]` — `vitest run` beside a CPU load of its own: one busy
 * child process per core (`LONGHAUL_BUSY_PROCESSES` sets another number), started before vitest and stopped
 * when it ends, however it ends: vitest's exit, a signal to this script (passed on to vitest's whole process
 * group: its forks and the worker processes its tests started, which a signal to vitest alone leaves running), or
 * this script's death (each busy process checks its parent and leaves when it is gone). Whatever of vitest's group
 * is left when vitest ends is killed. The exit code is vitest's (1 when it was killed by a signal). A test that fails here but not on a quiet machine depends on the machine's speed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..');
const busyCount = Number(process.env.LONGHAUL_BUSY_PROCESSES ?? availableParallelism());
if (!Number.isInteger(busyCount) || busyCount < 0) {
  console.error(`LONGHAUL_BUSY_PROCESSES must be a whole number ≥ 0, got ${JSON.stringify(process.env.LONGHAUL_BUSY_PROCESSES)}`);
  process.exit(2);
}

// Spins, and looks up now and then whether its parent is still this script (a SIGKILL leaves no time to stop it).
const SPIN = 'const parent = process.ppid; for (;;) { for (let i = 0; i < 5e7; i++); if (process.ppid !== parent) process.exit(0); }';

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const started = Date.now();
const busy: ChildProcess[] = Array.from({ length: busyCount }, () => spawn(process.execPath, ['-e', SPIN], { stdio: 'ignore' }));
console.log(`test:busy: ${busyCount} busy process(es) (${busy.map((b) => b.pid).join(', ')}) beside vitest; load average ${load()}`);

// A process group of its own (`detached`), so that a signal reaches every process of the run; vitest reads no input.
const vitest = spawn(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...process.argv.slice(2)], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
  detached: true,
});

/** Signals vitest's process group; nothing left in it is not an error. */
function signalRun(signal: NodeJS.Signals): void {
  try {
    process.kill(-vitest.pid!, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

async function stopBusy(): Promise<void> {
  await Promise.all(
    busy.map((b) => {
      if (b.exitCode !== null || b.signalCode !== null) return undefined;
      const exited = new Promise((resolve) => b.once('exit', resolve));
      b.kill('SIGKILL');
      return exited;
    }),
  );
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    signalRun(signal);
    void stopBusy();
  });
}

vitest.once('exit', (code, signal) => {
  signalRun('SIGKILL');
  void stopBusy().then(() => {
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    console.log(`test:busy: vitest ${signal ? `killed by ${signal}` : `exited with ${code}`} after ${seconds} s beside ${busyCount} busy process(es); load average ${load()}`);
    process.exit(code ?? 1);
  });
});
