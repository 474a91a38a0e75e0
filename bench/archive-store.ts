/**
 * `npm run bench:archive-store` — a 1 GiB archive from the emulator's storage origin into the S3 server
 * (versitygw, on loopback), three ways in one run, each in a process of its own:
 *
 *   npm run bench:archive-store -- --mib 1024 --rounds 2
 *
 * - longhaul streaming (`uploadArchive`: one pass, SHA-256 on the way, 8 MiB parts, 4 in flight);
 * - the two-pass shape GitHub's importer uses: download to a file, then upload the file with the same SDK and
 *   the same multipart code;
 * - `curl -o` of the same URL alone, the floor.
 *
 * Prints wall time, the ratio to two-pass (target ≤ 0.6×) and the upload process's peak RSS growth (target
 * < 150 MB); then an upload SIGKILLed once its checkpoint passed a third, continued by another process from the
 * checkpoint alone: bytes the origin served again and bytes sent to the store again (targets < 5 % each), the
 * latter counted by a relay in front of versitygw.
 *
 * Every process, the emulator (this one) and versitygw share the machine's two cores: the figures are for this
 * machine, loopback only.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { CreateBucketCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { Command } from 'commander';
import { startEmulator } from '@longhaul/emulator';
import { DEFAULT_PART_BYTES, DEFAULT_PARTS_IN_FLIGHT, type UploadCheckpoint } from '../src/archive/object-store';
import { startCountingProxy } from '../test/servers/counting-proxy';
import { startVersitygw } from '../test/servers/object-stores';
import { s3Client } from '../src/archive/object-store/stores/s3';
import { workerProcessEnv } from '../src/worker-env';
import { benchWorkerNodeFlags } from './worker-process';
import { exportedMigration, expectedSha256, TOKEN } from './archive-kit';
import type { StoreChildInput, StoreChildResult } from './archive-store-child';

const BUCKET = 'archives';

interface Options {
  mib: number;
  rounds: number;
  killAt: number;
  partMib: number;
  inFlight: number;
}

const program = new Command()
  .option('--mib <n>', 'archive size in MiB', Number, 1024)
  .option('--rounds <n>', 'timed runs of each way, alternating', Number, 2)
  .option('--kill-at <fraction>', 'SIGKILL the upload once its checkpoint passed this fraction', Number, 1 / 3)
  .option('--part-mib <n>', 'part size in MiB', Number, DEFAULT_PART_BYTES / 1024 / 1024)
  .option('--in-flight <n>', 'parts in flight', Number, DEFAULT_PARTS_IN_FLIGHT);

async function main(): Promise<void> {
  const o = program.parse().opts<Options>();
  const size = o.mib * 1024 * 1024;
  const emulator = await startEmulator({ token: TOKEN, migrations: { exportMs: 100, archiveBytes: size } });
  const s3 = await startVersitygw();
  // The relay counts what the resume run sends; the timed runs go straight to versitygw (the relay costs CPU).
  const relay = await startCountingProxy(s3.port);
  const relayed = { ...s3.env, AWS_ENDPOINT_URL_S3: relay.endpoint };
  const env = s3.env;
  const dir = await mkdtemp(join(tmpdir(), 'longhaul-bench-archive-store-'));
  try {
    await s3Client(env).send(new CreateBucketCommand({ Bucket: BUCKET }));
    const migrationId = await exportedMigration(emulator);
    const expected = expectedSha256(emulator, migrationId, size);
    const url = () => emulator.migrations.archiveUrl(migrationId)!;
    const input = (mode: StoreChildInput['mode'], name: string): StoreChildInput => ({
      mode,
      url: url(),
      size,
      destination: `s3://${BUCKET}/bench/`,
      name,
      env,
      file: join(dir, `${name}.download`),
      partBytes: o.partMib * 1024 * 1024,
      partsInFlight: o.inFlight,
    });
    console.log(`archive: ${size} bytes (migration ${migrationId}); S3: versitygw at ${s3.endpoint} over ${s3.dataDir}; parts of ${o.partMib} MiB, ${o.inFlight} in flight`);

    const runs: Record<'stream' | 'two-pass' | 'curl', number[]> = { stream: [], 'two-pass': [], curl: [] };
    const rssGrowth = { stream: 0, 'two-pass': 0 };
    for (let round = 1; round <= o.rounds; round++) {
      const line: string[] = [];
      for (const mode of ['stream', 'two-pass'] as const) {
        const gated = runChild({ ...input(mode, `${mode}-${round}.tar.gz`), startOnGo: true });
        await gated.ready;
        gated.go();
        const run = await gated.done;
        if (run.object.sha256 !== expected) throw new Error(`${mode}: SHA-256 ${run.object.sha256} differs from the archive's`);
        runs[mode].push(run.ms / 1000);
        rssGrowth[mode] = Math.max(rssGrowth[mode], run.rssPeakMb - run.rssBeforeMb);
        line.push(`${mode} ${(run.ms / 1000).toFixed(2)} s (CPU ${run.cpuSeconds.toFixed(2)} s, RSS +${(run.rssPeakMb - run.rssBeforeMb).toFixed(1)} MiB)`);
      }
      const file = join(dir, 'curl.tar.gz');
      runs.curl.push(await curl(url(), file));
      await rm(file, { force: true });
      line.push(`curl -o ${runs.curl.at(-1)!.toFixed(2)} s`);
      console.log(`round ${round}: ${line.join(' · ')}`);
    }
    const best = (xs: number[]) => Math.min(...xs);
    console.log(`\nbest of ${o.rounds}:`);
    console.log(`  longhaul streaming  ${best(runs.stream).toFixed(2)} s   ${(best(runs.stream) / best(runs['two-pass'])).toFixed(2)}× two-pass (target ≤ 0.60×)`);
    console.log(`  two-pass            ${best(runs['two-pass']).toFixed(2)} s   1.00×`);
    console.log(`  curl -o (floor)     ${best(runs.curl).toFixed(2)} s   ${(best(runs.curl) / best(runs['two-pass'])).toFixed(2)}× two-pass`);
    console.log(`peak RSS growth: streaming ${rssGrowth.stream.toFixed(1)} MiB (target < 150 MB), two-pass ${rssGrowth['two-pass'].toFixed(1)} MiB`);

    // SIGKILL at a third, then another process continues from the checkpoint alone.
    const servedBefore = emulator.stats.storage.bytesServed;
    const sentBefore = relay.sentBytes();
    const killed = { ...input('stream', 'killed.tar.gz'), env: relayed };
    const { validator, ...checkpoint } = await killWhenPast(killed, size * o.killAt);
    const resumed = await runChild({ ...killed, url: url(), checkpoint, validator }).done;
    if (resumed.object.sha256 !== expected) throw new Error(`the resumed upload's SHA-256 ${resumed.object.sha256} differs from the archive's`);
    const reRead = emulator.stats.storage.bytesServed - servedBefore - size;
    const reSent = relay.sentBytes() - sentBefore - size;
    const open = (await s3Client(env).send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads?.length ?? 0;
    console.log(`\nSIGKILL once the checkpoint passed ${pct(checkpoint.offset, size)} (${checkpoint.offset} bytes); the next process resumed from it in ${(resumed.ms / 1000).toFixed(2)} s (SHA-256 matches, ${open} multipart uploads left open)`);
    console.log(`  re-read from the origin: ${reRead} bytes = ${pct(reRead, size)} (target < 5 %)`);
    console.log(`  re-sent to the store:    ${reSent} bytes = ${pct(reSent, size)} (target < 5 %; request headers included)`);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await relay.close();
    await s3.destroy();
    await emulator.close();
  }
}

/** `curl -o`: its own `time_total`. */
async function curl(url: string, file: string): Promise<number> {
  const { stdout } = await promisify(execFile)('curl', ['-sS', '--fail', '-o', file, '-w', '%{time_total}', url]);
  return Number(stdout.trim());
}

interface ChildRun {
  ready: Promise<void>;
  go(): void;
  done: Promise<StoreChildResult>;
  checkpoints: AsyncIterable<string>;
  kill(): void;
}

function runChild(input: StoreChildInput): ChildRun {
  // Started as `longhaul worker` starts a worker process: its node flags and malloc settings.
  const child = spawn(process.execPath, [...benchWorkerNodeFlags(), '--import', 'tsx', join(__dirname, 'archive-store-child.ts'), JSON.stringify(input)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: workerProcessEnv(),
  });
  let loaded = () => {};
  const ready = input.startOnGo ? new Promise<void>((resolve) => (loaded = resolve)) : Promise.resolve();
  let result: StoreChildResult | undefined;
  const lines = createInterface({ input: child.stdout });
  const checkpoints: string[] = [];
  let wake = () => {};
  lines.on('line', (line) => {
    if (line === 'ready') loaded();
    else if (line.startsWith('result ')) result = JSON.parse(line.slice('result '.length)) as StoreChildResult;
    else if (line.startsWith('checkpoint ')) {
      checkpoints.push(line.slice('checkpoint '.length));
      wake();
    }
  });
  let ended = false;
  const done = new Promise<StoreChildResult>((resolve, reject) => {
    child.once('exit', (code, signal) => {
      ended = true;
      wake();
      if (code === 0 && result) resolve(result);
      else reject(new Error(`upload process ended with ${signal ?? code}`));
    });
  });
  if (!input.startOnGo) child.stdin.end();
  return {
    ready,
    go: () => child.stdin.end('go\n'),
    done,
    kill: () => child.kill('SIGKILL'),
    checkpoints: (async function* () {
      for (;;) {
        while (checkpoints.length) yield checkpoints.shift()!;
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    })(),
  };
}

/** Runs the upload and SIGKILLs it once a checkpoint passed `bytes`; that checkpoint (the last heartbeat, with its validator). */
async function killWhenPast(input: StoreChildInput, bytes: number): Promise<UploadCheckpoint & { validator?: string }> {
  const run = runChild(input);
  run.done.catch(() => undefined);
  for await (const line of run.checkpoints) {
    const checkpoint = JSON.parse(line) as UploadCheckpoint & { validator?: string };
    if (checkpoint.offset > bytes) {
      run.kill();
      await run.done.catch(() => undefined);
      return checkpoint;
    }
  }
  throw new Error('the upload ended before it passed the kill point');
}

const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(2)} %`;

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
