/**
 * What the archive benchmarks (bench:download, bench:archive-store) share: an exported migration on the
 * emulator, its archive's SHA-256, and, in their child processes, the start gate and the RSS and CPU meter.
 */
import { createHash } from 'node:crypto';
import type { Emulator } from '@longhaul/emulator';
import { generatedArchive } from '../packages/emulator/src/storage/archive-content';

export const TOKEN = 'bench-token';
export const ORG = 'octo-org';

/** Starts a migration on the emulator and waits until its archive is exported; its id. */
export async function exportedMigration(emulator: Emulator): Promise<number> {
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const res = await fetch(`${emulator.apiUrl}/orgs/${ORG}/migrations`, { method: 'POST', headers, body: JSON.stringify({ repositories: ['alpha'] }) });
  const { id } = (await res.json()) as { id: number };
  while (emulator.migrations.stateOf(id) !== 'exported') await new Promise((r) => setTimeout(r, 50));
  return id;
}

/** The archive's SHA-256, computed from the generator before any timed run (it takes this process's CPU). */
export function expectedSha256(emulator: Emulator, migrationId: number, size: number): string {
  const hash = createHash('sha256');
  for (const chunk of generatedArchive(emulator.migrations.get(migrationId)!.guid, size).chunks(0, size)) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * In a child: with `startOnGo`, prints `ready` once loaded and returns when a line arrives on stdin (the parent
 * starts the timed run at a moment of its choosing, not after this process's start-up); then starts measuring.
 * `stop()` gives the RSS before and the highest sampled since (MiB), and the CPU time used (user + system, s).
 */
export async function startMeasuring(startOnGo: boolean | undefined): Promise<{ stop(): { rssBeforeMb: number; rssPeakMb: number; cpuSeconds: number; systemSeconds: number; ms: number } }> {
  if (startOnGo) {
    process.stdout.write('ready\n');
    await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
    process.stdin.destroy();
  }
  const mb = () => process.memoryUsage.rss() / 1024 / 1024;
  const rssBeforeMb = mb();
  let rssPeakMb = rssBeforeMb;
  const sampler = setInterval(() => (rssPeakMb = Math.max(rssPeakMb, mb())), 50);
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  return {
    stop() {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const cpu = process.cpuUsage(cpuBefore);
      clearInterval(sampler);
      rssPeakMb = Math.max(rssPeakMb, mb());
      return { rssBeforeMb, rssPeakMb, cpuSeconds: (cpu.user + cpu.system) / 1e6, systemSeconds: cpu.system / 1e6, ms };
    },
  };
}
