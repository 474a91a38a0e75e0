/**
 * One archive into the S3 server in a process of its own (for bench:archive-store), so its time, CPU and RSS are
 * the upload's and it can be SIGKILLed part-way. Input: a JSON argument. Output: `checkpoint <json>` lines (the
 * heartbeat details) and one `result <json>` line.
 *
 * - `stream`: `uploadArchive` from the storage URL (Range and If-Range on a re-open), in one pass.
 * - `two-pass`: the importer's shape: download the whole archive to a file, then upload the file with the same
 *   SDK and the same multipart code (`uploadArchive` reading the file).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import { uploadArchive, type ArchiveObject, type OpenSource, type UploadCheckpoint } from '../src/object-store';
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
 * The storage URL as a source (undici's `request`, a Node stream, as the worker's HTTP clients use): `Range`
 * from the offset, `If-Range` with the ETag the first answer gave.
 */
function storageSource(url: string): OpenSource {
  let etag: string | undefined;
  return async (offset, signal) => {
    if (offset > 0 && !etag) {
      const probe = await request(url, { headers: { range: 'bytes=0-0' }, signal });
      await probe.body.dump();
      etag = probe.headers.etag as string | undefined;
    }
    const headers: Record<string, string> = offset > 0 ? { range: `bytes=${offset}-`, ...(etag ? { 'if-range': etag } : {}) } : {};
    const res = await request(url, { headers, signal });
    if (res.statusCode !== (offset > 0 ? 206 : 200)) throw new Error(`GET storage from ${offset}: ${res.statusCode}`);
    etag ??= res.headers.etag as string | undefined;
    return res.body;
  };
}

function fileSource(path: string): OpenSource {
  return (offset) => Promise.resolve(createReadStream(path, { start: offset, highWaterMark: 1024 * 1024 }));
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]) as StoreChildInput;
  const meter = await startMeasuring(input.startOnGo);
  let openSource = storageSource(input.url);
  if (input.mode === 'two-pass') {
    const res = await request(input.url);
    if (res.statusCode !== 200) throw new Error(`GET storage: ${res.statusCode}`);
    await pipeline(res.body, createWriteStream(input.file!));
    openSource = fileSource(input.file!);
  }
  const object = await uploadArchive({
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
  const measured = meter.stop();
  if (input.file) await rm(input.file, { force: true });
  const out: StoreChildResult = { ...measured, object };
  process.stdout.write(`result ${JSON.stringify(out)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
