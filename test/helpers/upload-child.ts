/**
 * One archive upload in a process of its own, so a test can SIGKILL it part-way as a host dies: the input is
 * JSON in argv[2]; each checkpoint (the heartbeat details) is printed as `checkpoint <json>`, the result as
 * `result <json>`.
 */
import { uploadArchive, type UploadCheckpoint } from '../../src/archive/object-store';
import { applyNetworkSettings } from '../../src/http/proxy';
import { httpSource } from './object-stores';

interface ChildInput {
  destination: string;
  name: string;
  size: number;
  sourceUrl: string;
  partBytes: number;
  partsInFlight: number;
  env: Record<string, string>;
  checkpoint?: UploadCheckpoint;
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]) as ChildInput;
  // As a worker does: the proxy and CA of the process's environment, for every SDK.
  applyNetworkSettings();
  const result = await uploadArchive({
    destination: input.destination,
    name: input.name,
    size: input.size,
    openSource: httpSource(input.sourceUrl),
    checkpoint: input.checkpoint,
    heartbeat: (c) => process.stdout.write(`checkpoint ${JSON.stringify(c)}\n`),
    partBytes: input.partBytes,
    partsInFlight: input.partsInFlight,
    env: { ...process.env, ...input.env },
  });
  process.stdout.write(`result ${JSON.stringify(result)}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
