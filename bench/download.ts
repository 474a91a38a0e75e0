/**
 * `npm run bench:download` — a 1 GiB archive behind the API's 302 on the emulator's storage origin.
 *
 *   npm run bench:download -- --mib 1024 --rounds 3
 *
 * Prints, from one run: longhaul's download time (the `downloadArchive` code path in a process of its own,
 * SHA-256 included) next to `curl -o` of the same pre-signed URL, the ratio, the download process's RSS
 * growth; then, for each `--kill-at` fraction, the bytes storage served again after the download process was
 * killed with SIGKILL once the `.part` file held more than that fraction of the archive (served in all vs the
 * archive's size), and the SHA-256 of the resumed download, three ways: the download code of the release before
 * (`--before`, a git revision: its `src/` is taken with `git archive` and run by the same child), this checkout's
 * in the same boot (the resume keeps the `.part`'s length), and this checkout's after a restart of the machine,
 * simulated by another boot id in `.part.json` (the resume keeps only the synced checkpoint: issue 40).
 *
 * The emulator runs in this process and generates the archive on the fly (never held in memory); temp
 * files are removed at the end.
 *
 * `--proxy` adds, to every round, the same download through a real forward proxy (the tests' `proxy` package in
 * a process of its own, `HTTP_PROXY`/`HTTPS_PROXY` in the download process's environment) and prints it beside
 * the direct one. `--tls` puts the storage origin behind TLS (a certificate of a CA made for the run, trusted
 * through `LONGHAUL_CA_FILE`): through the proxy the download is then a CONNECT tunnel, where Node reads TLS into
 * buffers of its own (no `onread` over an existing socket); without `--tls` an absolute-form http request.
 *
 * Page reporting: on a virtual machine whose kernel reports free memory to the host (virtio-balloon free page
 * reporting, as on the project's development VM), memory freed a few seconds ago may no longer be backed by
 * the host, and the first write to each of its pages traps to the hypervisor. Writing 1 GiB into the page cache
 * then costs 1–2 s more system time (seen as `copy_folio_from_iter_atomic` in `perf`), whoever writes. So every
 * timed download, curl's and longhaul's alike, starts right after the previous 1 GiB file was removed (longhaul's
 * process is loaded beforehand and started by a line on stdin), and the run prints how much memory was reported.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { startEmulator } from '@longhaul/emulator';
import { workerProcessEnv } from '../src/worker-env';
import { benchWorkerNodeFlags } from './worker-process';
import { exportedMigration, expectedSha256, ORG, TOKEN } from './archive-kit';
import type { ChildInput, ChildResult } from './download-child';
import { startForwardProxy, startProxyOnlyGate, type ForwardProxy, type ProxyOnlyGate } from '../test/helpers/forward-proxy';
import type { UploadProgress } from '../src/archive/to-store';


interface Options {
  mib: number;
  rounds: number;
  killAt: number[];
  before: string;
  proxy?: boolean;
  tls?: boolean;
}

/** 0.4.0's release commit (CHANGELOG.md): the download code issue 40 measured. */
const RELEASE_0_4_0 = 'f6f2d01017b8d095462737b3c46406702d7b2425';

const program = new Command()
  .option('--mib <n>', 'archive size in MiB', Number, 1024)
  .option('--rounds <n>', 'timed downloads of each kind (curl, longhaul), alternating', Number, 3)
  .option('--kill-at <fractions>', 'SIGKILL the download once the .part holds more than each of these fractions (comma-separated)', (v: string) => v.split(',').map(Number), [1 / 3, 1 / 2, 0.9])
  .option('--before <revision>', 'git revision whose download code is the baseline of the SIGKILL runs', RELEASE_0_4_0)
  .option('--proxy', 'also download through a forward proxy in every round, beside the direct download')
  .option('--tls', 'the storage origin behind TLS (a CA made for the run, given as LONGHAUL_CA_FILE)');

/** The storage origin behind a TLS front of its own, with a CA made for the run (`scripts/make-certs.sh`). */
async function tlsFront(storageUrl: () => string, dir: string): Promise<{ gate: ProxyOnlyGate; caFile: string }> {
  await promisify(execFile)('sh', [join(__dirname, '..', 'scripts', 'make-certs.sh'), join(dir, 'tls')]);
  const tls = { certFile: join(dir, 'tls', 'frontend.pem'), keyFile: join(dir, 'tls', 'frontend-key.pem') };
  const gate = await startProxyOnlyGate(() => Number(new URL(storageUrl()).port), tls, null);
  return { gate, caFile: join(dir, 'tls', 'ca.pem') };
}

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  const size = o.mib * 1024 * 1024;
  const dir = await mkdtemp(join(tmpdir(), 'longhaul-bench-download-'));
  let storageUrl = '';
  const front = o.tls ? await tlsFront(() => storageUrl, dir) : undefined;
  const emulator = await startEmulator({ token: TOKEN, migrations: { exportMs: 100, archiveBytes: size }, ...(front ? { storagePublicUrl: front.gate.url } : {}) });
  storageUrl = emulator.storage.baseUrl;
  const proxy: ForwardProxy | undefined = o.proxy ? await startForwardProxy() : undefined;
  // The download process's environment: the CA, and the proxy for the runs through it (nothing inherited).
  const direct = { HTTPS_PROXY: '', https_proxy: '', HTTP_PROXY: '', http_proxy: '', NO_PROXY: '', no_proxy: '', ...(front ? { LONGHAUL_CA_FILE: front.caFile } : {}) };
  const proxied = proxy ? { ...direct, HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url } : direct;
  const curlTls = front ? ['--cacert', front.caFile] : [];
  try {
    const migrationId = await exportedMigration(emulator);
    const expected = expectedSha256(emulator, migrationId, size);
    const child = (path: string): ChildInput => ({ apiUrl: emulator.apiUrl, token: TOKEN, org: ORG, migrationId, dataDir: dir, path });
    console.log(`archive: ${size} bytes (migration ${migrationId}), files in ${dir}`);

    const curlRuns: { seconds: number; cpuSeconds: number; systemSeconds: number }[] = [];
    const longhaulRuns: ChildResult[] = [];
    const curlFile = join(dir, 'curl.tar.gz');
    const longhaulFile = join(dir, 'longhaul.tar.gz');
    // Every timed download starts right after the previous 1 GiB file was removed, so that each writes into
    // memory in the same state (see the note on page reporting above); the first after an untimed download.
    await curl(emulator.migrations.archiveUrl(migrationId)!, longhaulFile, curlTls);
    const proxiedRuns: ChildResult[] = [];
    const reportedBefore = await reportedKib();
    for (let round = 1; round <= o.rounds; round++) {
      const url = emulator.migrations.archiveUrl(migrationId)!;
      await rm(longhaulFile, { force: true });
      const curlOrigin = originCpu();
      curlRuns.push(await curl(url, curlFile, curlTls));
      const curlOriginCpu = curlOrigin();
      // longhaul's process is loaded first (its start-up is not timed), then told to start.
      const timed = async (env: Record<string, string>, removeFirst: string) => {
        const gated = runChild({ ...child('longhaul.tar.gz'), startOnGo: true }, env);
        await gated.ready;
        await rm(removeFirst, { force: true });
        const origin = originCpu();
        gated.go();
        const run = await gated.done;
        if (run.sha256 !== expected) throw new Error(`longhaul's SHA-256 ${run.sha256} differs from the archive's`);
        return { run, originCpu: origin() };
      };
      const { run, originCpu: longhaulOriginCpu } = await timed(direct, curlFile);
      longhaulRuns.push(run);
      console.log(
        `round ${round}: curl -o ${curlRuns.at(-1)!.seconds.toFixed(2)} s (CPU ${cpuText(curlRuns.at(-1)!)}; origin ${cpuText(curlOriginCpu)}) · ` +
          `longhaul ${(run.ms / 1000).toFixed(2)} s (SHA-256 included, matches; CPU ${cpuText(run)}; origin ${cpuText(longhaulOriginCpu)}) · ` +
          `RSS ${run.rssBeforeMb.toFixed(1)} → peak ${run.rssPeakMb.toFixed(1)} MiB · ${run.heartbeats} heartbeats`,
      );
      if (proxy) {
        // The proxy's process is not this one: "origin" here is the emulator only.
        const through = await timed(proxied, longhaulFile);
        proxiedRuns.push(through.run);
        console.log(
          `round ${round}: longhaul through the proxy ${(through.run.ms / 1000).toFixed(2)} s (SHA-256 matches; CPU ${cpuText(through.run)}; origin ${cpuText(through.originCpu)}) · ` +
            `RSS ${through.run.rssBeforeMb.toFixed(1)} → peak ${through.run.rssPeakMb.toFixed(1)} MiB`,
        );
      }
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
    if (proxy && proxiedRuns.length > 0) {
      const proxiedTimes = proxiedRuns.map((r) => r.ms / 1000);
      const way = front ? 'a CONNECT tunnel (TLS end to end)' : 'absolute-form http';
      console.log(
        `through the proxy (${way}, ${proxy.events().length} proxy requests): best ${Math.min(...proxiedTimes).toFixed(2)} s vs direct ${bestLonghaul.toFixed(2)} s → ${ratio(bestLonghaul, Math.min(...proxiedTimes))} the direct speed; ` +
          `median ${median(proxiedTimes).toFixed(2)} s vs ${median(longhaulTimes).toFixed(2)} s; CPU (median) ${medianCpu(proxiedRuns)} vs ${medianCpu(longhaulRuns)}; ` +
          `RSS growth ${Math.max(...proxiedRuns.map((r) => r.rssPeakMb - r.rssBeforeMb)).toFixed(1)} MiB`,
      );
    }
    await rm(longhaulFile, { force: true });
    const reportedAfter = await reportedKib();
    if (reportedBefore !== undefined && reportedAfter !== undefined) {
      console.log(`free memory the guest kernel reported to the host during the timed rounds: ${((reportedAfter - reportedBefore) / 1024).toFixed(0)} MiB`);
    }

    // SIGKILL mid-transfer, then resume: the release before, this checkout in the same boot, and after a restart.
    const beforeRoot = await sourceTree(o.before, dir);
    const kinds: KillKind[] = [
      { name: `before (${o.before.slice(0, 7)})`, codeRoot: beforeRoot },
      { name: 'after, same boot' },
      { name: 'after a restart (simulated)', restart: true },
    ];
    const rows: string[] = [];
    let failed = false;
    for (const fraction of o.killAt) {
      for (const kind of kinds) {
        const path = `killed-${rows.length}.tar.gz`;
        const servedBefore = emulator.stats.storage.bytesServed;
        const beats: UploadProgress[] = [];
        const first = runChild({ ...child(path), codeRoot: kind.codeRoot, printBeats: true }, direct, (beat) => beats.push(beat));
        const partSize = await killWhenPartHolds(first, join(dir, `${path}.part`), size * fraction);
        if (kind.restart) await simulateRestart(join(dir, `${path}.part.json`));
        const resumed = await runChild({ ...child(path), codeRoot: kind.codeRoot, previous: beats.at(-1) }, direct).done;
        const served = emulator.stats.storage.bytesServed - servedBefore;
        const reRead = served - size;
        const shaOk = resumed.sha256 === expected;
        // The restart case fetches again what was not synced: the < 5 % target is for the same boot.
        const target = kind.codeRoot !== undefined || kind.restart ? '' : reRead < 0.05 * size ? ' ✓' : ' ✗ (target < 5 %)';
        if (!shaOk || target.includes('✗')) failed = true;
        const report = resumed.lastBeat?.resume;
        const how = report ? `${report.basis}, ${mib(report.readBack)} read back` : '';
        rows.push(
          `| ${pct(fraction * size, size).padStart(8)} | ${kind.name.padEnd(27)} | ${mib(partSize).padStart(10)} | ${mib(resumed.resumedFrom).padStart(10)} ${how.padEnd(30)} | ` +
            `${mib(reRead).padStart(10)} = ${pct(reRead, size).padStart(7)}${target.padEnd(17)} | ${(resumed.ms / 1000).toFixed(2).padStart(6)} s | ${shaOk ? 'identical' : `DIFFERS ${resumed.sha256}`} |`,
        );
        await rm(join(dir, path), { force: true });
      }
    }
    console.log(`\nSIGKILL mid-download, then a new process resumes (${mib(size)} archive; re-read = storage served in all − the archive):`);
    console.log(`| kill past | download code               | .part held | resumed at (basis)                       | re-read from storage                 | resume   | SHA-256   |`);
    console.log(`|----------|-----------------------------|------------|------------------------------------------|--------------------------------------|----------|-----------|`);
    for (const row of rows) console.log(row);
    if (failed) process.exitCode = 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
    await emulator.close();
    await proxy?.close();
    await front?.gate.close();
  }
}

interface KillKind {
  name: string;
  /** Another release's source tree (see `download-child.ts`); absent: this checkout's. */
  codeRoot?: string;
  /** Rewrite the boot id in `.part.json` after the kill: the resume behaves as after a restart of the machine. */
  restart?: boolean;
}

/**
 * `revision`'s `src/` (and the package.json that makes its files CommonJS) under `dir`, with this checkout's
 * node_modules linked beside it: the child imports that tree's download code.
 */
async function sourceTree(revision: string, dir: string): Promise<string> {
  const root = join(dir, `src-${revision.slice(0, 12)}`);
  const repo = join(__dirname, '..');
  await promisify(execFile)('sh', ['-c', `mkdir -p "$2" && git -C "$3" archive "$1" src package.json tsconfig.json | tar -x -C "$2"`, 'sh', revision, root, repo]);
  await symlink(join(repo, 'node_modules'), join(root, 'node_modules'));
  return root;
}

/** Another boot id in `.part.json`: what a resume finds after the machine restarted (power loss, kernel crash). */
async function simulateRestart(metaPath: string): Promise<void> {
  const meta = JSON.parse(await readFile(metaPath, 'utf8')) as Record<string, unknown>;
  await writeFile(metaPath, JSON.stringify({ ...meta, bootId: randomUUID() }));
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/**
 * The CPU this process (the emulator: API and storage origin) uses from now until the returned function is
 * called. On a 2-core machine the origin competes with the download for the cores, which a remote storage
 * service does not: each round prints its share beside the download's.
 */
function originCpu(): () => { cpuSeconds: number; systemSeconds: number } {
  const start = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(start);
    return { cpuSeconds: (used.user + used.system) / 1e6, systemSeconds: used.system / 1e6 };
  };
}

/**
 * KiB of free memory this (virtual) machine's kernel has handed back to the host so far (virtio-balloon free
 * page reporting), or undefined where the kernel does not report free pages.
 */
async function reportedKib(): Promise<number | undefined> {
  const text = await readFile('/sys/module/page_reporting/parameters/reported_kib', 'utf8').catch(() => undefined);
  return text === undefined ? undefined : Number(text.trim());
}

/** `1.23 s, 0.80 system`: CPU time and the kernel's share of it. */
function cpuText(r: { cpuSeconds: number; systemSeconds: number }): string {
  return `${r.cpuSeconds.toFixed(2)} s, ${r.systemSeconds.toFixed(2)} system`;
}

/** `curl -o` of `url`: its time (curl's own `time_total`) and the CPU it used (bash's `times` for its children). */
async function curl(url: string, file: string, extra: string[] = []): Promise<{ seconds: number; cpuSeconds: number; systemSeconds: number }> {
  const script = `curl -sS --fail -o "$1" -w '%{time_total}\\n' "$2" "\${@:3}" && times`;
  const { stdout } = await promisify(execFile)('bash', ['-c', script, 'curl', file, url, ...extra]);
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

interface ChildRun {
  pid: number;
  /** Settles once the process is loaded (with `startOnGo`: waiting for `go`). */
  ready: Promise<void>;
  go(): void;
  done: Promise<ChildResult>;
  kill(): void;
}

function runChild(input: ChildInput, env: Record<string, string>, onBeat?: (details: UploadProgress) => void): ChildRun {
  // Started as `longhaul worker` starts a worker process: its node flags and malloc settings.
  const child = spawn(process.execPath, [...benchWorkerNodeFlags(), '--import', 'tsx', join(__dirname, 'download-child.ts'), JSON.stringify(input)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: workerProcessEnv({ ...process.env, ...env }),
  });
  let out = '';
  let pending = '';
  let loaded = () => {};
  const ready = input.startOnGo ? new Promise<void>((resolve) => (loaded = resolve)) : Promise.resolve();
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('ready\n')) loaded();
    // Heartbeat lines (`beat {…}`), as whole lines arrive.
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) if (line.startsWith('beat ')) onBeat?.(JSON.parse(line.slice(5)) as UploadProgress);
  });
  const done = new Promise<ChildResult>((resolve, reject) => {
    child.once('exit', (code, signal) => {
      // The result is the last line (after `ready`, when there is one).
      if (code === 0) resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ChildResult);
      else reject(new Error(`download process ended with ${signal ?? code}`));
    });
  });
  if (!input.startOnGo) child.stdin.end();
  return { pid: child.pid!, ready, go: () => child.stdin.end('go\n'), done, kill: () => child.kill('SIGKILL') };
}

async function killWhenPartHolds(run: ChildRun, part: string, bytes: number): Promise<number> {
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
