/**
 * The emulator as a separate process for benchmarks (the compiled `emulator` CLI with a `--config` file), so
 * what it measures is not delayed by the bench driver's own work: its request stamps (the gap between two
 * mutations, "sent while limited") are taken on an event loop that serves nothing but the API, as GitHub's
 * edge would be. The bench reads its figures from `GET /_emulator/stats`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EmulatorOptions } from '@longhaul/emulator';
import type { EmulatorStats } from '../packages/emulator/src/stats';
import type { CallerFleetStats } from '../packages/emulator/src/rate-limiter';

const root = join(__dirname, '..');

export interface EmulatorProcess {
  pid: number;
  apiUrl: string;
  stats(): Promise<EmulatorStats & { fleet: Record<string, CallerFleetStats> }>;
  stop(): Promise<void>;
}

/**
 * Starts `packages/emulator/dist/cli.js` (call `buildWorker()` first) with `options` written to `configPath`; every port
 * is a free one. Resolves once it printed its API URL.
 */
export async function startEmulatorProcess(options: EmulatorOptions, configPath: string): Promise<EmulatorProcess> {
  const entry = join(root, 'packages', 'emulator', 'dist', 'cli.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: call buildWorker() first`);
  await writeFile(configPath, JSON.stringify({ googlePorts: { apikeys: 0, logging: 0, dns: 0 }, ...options }));
  const child: ChildProcess = spawn(process.execPath, [entry, '--config', configPath, '--port', '0', '--storage-port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  const apiUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const url = /GitHub API:\s+(\S+)/.exec(output)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`emulator exited early with code ${code}:\n${output}`)));
  });
  return {
    pid: child.pid!,
    apiUrl,
    async stats() {
      const res = await fetch(`${apiUrl}/_emulator/stats`);
      if (!res.ok) throw new Error(`GET ${apiUrl}/_emulator/stats → ${res.status}`);
      return (await res.json()) as Awaited<ReturnType<EmulatorProcess['stats']>>;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
