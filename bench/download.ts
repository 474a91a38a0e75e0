/**
 * `npm run bench:download` — a 1 GiB archive behind the API's 302 on the emulator's storage origin.
 *
 *   npm run bench:download -- --mib 1024 --rounds 3
 *
 * Prints, from one run: longhaul's download time (the `downloadArchive` code path in a process of its own,
 * SHA-256 included) next to `curl -o` of the same pre-signed URL, the ratio, the download process's RSS
 * growth, and the bytes storage served again after the download process was killed with SIGKILL once the
 * `.part` file held more than a third of the archive (served in all vs the archive's size).
 *
 * The emulator runs in this process and generates the archive on the fly (never held in memory); temp
 * files are removed at the end.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { startEmulator, type Emulator } from '../src/emulator/emulator';
import { generatedArchive } from '../src/emulator/storage/archive-content';
import type { ChildInput, ChildResult } from './download-child';

const TOKEN = 'bench-token';
const ORG = 'octo-org';

interface Options {
  mib: number;
  rounds: number;
  killAt: number;
}

const program = new Command()
  .option('--mib <n>', 'archive size in MiB', Number, 1024)
  .option('--rounds <n>', 'timed downloads of each kind (curl, longhaul), alternating', Number, 3)
  .option('--kill-at <fraction>', 'SIGKILL the download once the .part holds more than this fraction', Number, 1 / 3);

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  const size = o.mib * 1024 * 1024;
  const emulator = await startEmulator({ token: TOKEN, migrations: { exportMs: 100, archiveBytes: size } });
  const dir = await mkdtemp(join(tmpdir(), 'longhaul-bench-download-'));
  try {
    const migrationId = await exportedMigration(emulator);
    const expected = expectedSha256(emulator, migrationId, size);
    const child = (path: string): ChildInput => ({ apiUrl: emulator.apiUrl, token: TOKEN, org: ORG, migrationId, dataDir: dir, path });
    console.log(`archive: ${size} bytes (migration ${migrationId}), files in ${dir}`);

    const curlRuns: { seconds: number; cpuSeconds: number; systemSeconds: number }[] = [];
    const longhaulRuns: ChildResult[] = [];
    for (let round = 1; round <= o.rounds; round++) {
      const url = emulator.migrations.archiveUrl(migrationId)!;
      const curlFile = join(dir, 'curl.tar.gz');
      curlRuns.push(await curl(url, curlFile));
      await rm(curlFile, { force: true });
      const run = await runChild(child('longhaul.tar.gz')).done;
      if (run.sha256 !== expected) throw new Error(`longhaul's SHA-256 ${run.sha256} differs from the archive's`);
      longhaulRuns.push(run);
      await rm(join(dir, 'longhaul.tar.gz'), { force: true });
      console.log(
        `round ${round}: curl -o ${curlRuns.at(-1)!.seconds.toFixed(2)} s (CPU ${cpuText(curlRuns.at(-1)!)}) · longhaul ${(run.ms / 1000).toFixed(2)} s (SHA-256 included, matches; CPU ${cpuText(run)}) · ` +
          `RSS ${run.rssBeforeMb.toFixed(1)} → peak ${run.rssPeakMb.toFixed(1)} MiB · ${run.heartbeats} heartbeats`,
      );
    }
    const curlTimes = curlRuns.map((r) => r.seconds);
    const longhaulTimes = longhaulRuns.map((r) => r.ms / 1000);
    const bestCurl = Math.min(...curlTimes);
    const bestLonghaul = Math.min(...longhaulTimes);
    const ratio = (c: number, l: number) => `${(c / l).toFixed(2)}×`;
    console.log(`\nbest of ${o.rounds}: curl -o ${bestCurl.toFixed(2)} s, longhaul ${bestLonghaul.toFixed(2)} s → longhaul at ${ratio(bestCurl, bestLonghaul)} curl's speed (target ≥ 0.90×)`);
    console.log(`median of ${o.rounds}: curl -o ${median(curlTimes).toFixed(2)} s, longhaul ${median(longhaulTimes).toFixed(2)} s → ${ratio(median(curlTimes), median(longhaulTimes))}`);
    const rssGrowth = Math.max(...longhaulRuns.map((r) => r.rssPeakMb - r.rssBeforeMb));
    const medianCpu = (runs: { cpuSeconds: number; systemSeconds: number }[]) =>
      cpuText({ cpuSeconds: median(runs.map((r) => r.cpuSeconds)), systemSeconds: median(runs.map((r) => r.systemSeconds)) });
    console.log(`CPU per download (median): curl ${medianCpu(curlRuns)}, longhaul ${medianCpu(longhaulRuns)} (SHA-256 included)`);
    console.log(`RSS growth during the download: ${rssGrowth.toFixed(1)} MiB (target < 50 MB)`);

    // SIGKILL mid-transfer, then resume from what is on disk.
    const path = 'killed.tar.gz';
    const servedBefore = emulator.stats.storage.bytesServed;
    const first = runChild(child(path));
    const partSize = await killWhenPartHolds(first, join(dir, `${path}.part`), size * o.killAt);
    const resumed = await runChild(child(path)).done;
    if (resumed.sha256 !== expected) throw new Error(`the resumed download's SHA-256 ${resumed.sha256} differs from the archive's`);
    const served = emulator.stats.storage.bytesServed - servedBefore;
    const reRead = served - size;
    console.log(
      `\nSIGKILL when the .part held ${partSize} bytes (${pct(partSize, size)}); the next download resumed from ${resumed.resumedFrom} and fetched ${resumed.fetchedBytes} bytes in ${(resumed.ms / 1000).toFixed(2)} s (SHA-256 matches)`,
    );
    console.log(`storage served ${served} bytes in all for a ${size}-byte archive: ${reRead} bytes re-read = ${pct(reRead, size)} (target < 5 %)`);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await emulator.close();
  }
}

async function exportedMigration(emulator: Emulator): Promise<number> {
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const res = await fetch(`${emulator.apiUrl}/orgs/${ORG}/migrations`, { method: 'POST', headers, body: JSON.stringify({ repositories: ['alpha'] }) });
  const { id } = (await res.json()) as { id: number };
  while (emulator.migrations.stateOf(id) !== 'exported') await new Promise((r) => setTimeout(r, 50));
  return id;
}

/** The archive's SHA-256, computed from the generator before any timed download (it takes this process's CPU). */
function expectedSha256(emulator: Emulator, migrationId: number, size: number): string {
  const hash = createHash('sha256');
  for (const chunk of generatedArchive(emulator.migrations.get(migrationId)!.guid, size).chunks(0, size)) hash.update(chunk);
  return hash.digest('hex');
}

/** `curl -o` of `url`: its time (curl's own `time_total`) and the CPU it used (bash's `times` for its children). */
/** `1.23 s, 0.80 system`: CPU time and the kernel's share of it. */
function cpuText(r: { cpuSeconds: number; systemSeconds: number }): string {
  return `${r.cpuSeconds.toFixed(2)} s, ${r.systemSeconds.toFixed(2)} system`;
}

async function curl(url: string, file: string): Promise<{ seconds: number; cpuSeconds: number; systemSeconds: number }> {
  const script = `curl -sS --fail -o "$1" -w '%{time_total}\\n' "$2" && times`;
  const { stdout } = await promisify(execFile)('bash', ['-c', script, 'curl', file, url]);
  const [time, , children] = stdout.trim().split('\n');
  const cpu = (children ?? '').trim().split(/\s+/).map(minutesSeconds);
  const bytes = (await stat(file)).size;
  if (bytes === 0) throw new Error('curl downloaded nothing');
  return { seconds: Number(time), cpuSeconds: (cpu[0] ?? 0) + (cpu[1] ?? 0), systemSeconds: cpu[1] ?? 0 };
}

/** `0m1.234s` → 1.234 */
function minutesSeconds(text: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : 0;
}

function runChild(input: ChildInput): { pid: number; done: Promise<ChildResult>; kill(): void } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'download-child.ts'), JSON.stringify(input)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<ChildResult>((resolve, reject) => {
    child.once('exit', (code, signal) => (code === 0 ? resolve(JSON.parse(out) as ChildResult) : reject(new Error(`download process ended with ${signal ?? code}`))));
  });
  return { pid: child.pid!, done, kill: () => child.kill('SIGKILL') };
}

async function killWhenPartHolds(run: ReturnType<typeof runChild>, part: string, bytes: number): Promise<number> {
  run.done.catch(() => undefined);
  for (;;) {
    const size = await stat(part).then((s) => s.size, () => 0);
    if (size > bytes) {
      run.kill();
      await run.done.catch(() => undefined);
      return (await stat(part)).size;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(2)} %`;

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
