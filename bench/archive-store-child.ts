/**
 * One archive into the S3 server in a process of its own (for bench:archive-store), so its time, CPU and RSS are
 * the upload's and it can be SIGKILLed part-way. Input: a JSON argument. Output: `checkpoint <json>` lines (the
 * heartbeat details) and one `result <json>` line.
 *
 * - `stream`: what the archive activity runs with a destination (`streamArchiveTo`: the storage URL read by the
 *   token-less storage client, `Range` and `If-Range` on a re-open, into `uploadArchive`), in one pass.
 * - `two-pass`: the importer's shape: download the whole archive to a file, then upload the file with the same
 *   SDK and the same multipart code (`uploadArchive` reading the file).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import { uploadArchive, type ArchiveObject, type OpenSource, type UploadCheckpoint } from '../src/archive/object-store';
import { StorageClient } from '../src/archive/storage/client';
import { streamArchiveTo } from '../src/archive/to-store';
import { startMeasuring } from './archive-kit';

export interface StoreChildInput {
  mode: 'stream' | 'two-pass';
  url: string;
  size: number;
  destination: string;
  name: string;
  env: Record<string, string>;
  /** For `two-pass`: where the archive is downloaded first. */
  file?: string;
  checkpoint?: UploadCheckpoint;
  /** For `stream`: the storage validator the checkpoint's bytes came from (heartbeated with it). */
  validator?: string;
  partBytes?: number;
  partsInFlight?: number;
  startOnGo?: boolean;
}

export interface StoreChildResult {
  ms: number;
  object: ArchiveObject;
  rssBeforeMb: number;
  rssPeakMb: number;
  cpuSeconds: number;
}

/**
 * The activity's path (`downloadArchive` with a destination): `streamArchiveTo` over the storage client the
 * activity uses, the pre-signed URL standing for the API's 302. Checkpoints are printed with their validator, as
 * the activity heartbeats them.
 */
async function streamLikeTheActivity(input: StoreChildInput): Promise<ArchiveObject> {
  // The store's SDK reads its standard variables from the process, as on a worker.
  Object.assign(process.env, input.env);
  const storage = new StorageClient({ api: 'storage', route: '/object' });
  return streamArchiveTo(
    input.destination,
    input.name,
    { storage, askApi: () => Promise.resolve(new URL(input.url)), follow: async (url, opts) => ({ res: await storage.get(url, opts), finalUrl: url }) },
    {
      heartbeat: (p) => p.upload && process.stdout.write(`checkpoint ${JSON.stringify({ ...p.upload, validator: p.validator })}\n`),
      checkpoint: input.checkpoint,
      validator: input.validator,
      partBytes: input.partBytes,
      partsInFlight: input.partsInFlight,
    },
  );
}

function fileSource(path: string): OpenSource {
  return (offset) => Promise.resolve(createReadStream(path, { start: offset, highWaterMark: 1024 * 1024 }));
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]) as StoreChildInput;
  const meter = await startMeasuring(input.startOnGo);
  const object = input.mode === 'stream' ? await streamLikeTheActivity(input) : await twoPass(input);
  const measured = meter.stop();
  if (input.file) await rm(input.file, { force: true });
  const out: StoreChildResult = { ...measured, object };
  process.stdout.write(`result ${JSON.stringify(out)}\n`);
}

/** The importer's shape: the whole archive to a file first, then the file into the store. */
async function twoPass(input: StoreChildInput): Promise<ArchiveObject> {
  const res = await request(input.url);
  if (res.statusCode !== 200) throw new Error(`GET storage: ${res.statusCode}`);
  await pipeline(res.body, createWriteStream(input.file!));
  const openSource: OpenSource = fileSource(input.file!);
  return uploadArchive({
    destination: input.destination,
    name: input.name,
    size: input.size,
    openSource,
    checkpoint: input.checkpoint,
    heartbeat: (c) => process.stdout.write(`checkpoint ${JSON.stringify(c)}\n`),
    partBytes: input.partBytes,
    partsInFlight: input.partsInFlight,
    env: { ...process.env, ...input.env },
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
