/**
 * One archive download in a process of its own (for bench:download and the SIGKILL test): the same code
 * the `downloadArchive` activity runs, without a Temporal worker around it, so its time, CPU and RSS are
 * the download's. Input: a JSON argument; output: one JSON line on stdout.
 */
import { archiveDownloader, type ArchiveDownloadInput } from '../src/processes/org-migration/activities/archive-download';
import { createGithubClient } from '../src/http/github';
import { applyNetworkSettings } from '../src/http/proxy';
import { startMeasuring } from './archive-kit';

export interface ChildInput extends ArchiveDownloadInput {
  apiUrl: string;
  token: string;
  dataDir: string;
  /**
   * Print `ready` once loaded and start the download only when a line arrives on stdin: the parent then
   * starts the timed download at a moment of its choosing, not after this process's start-up.
   */
  startOnGo?: boolean;
}

export interface ChildResult {
  ms: number;
  bytes: number;
  sha256: string;
  resumedFrom: number;
  fetchedBytes: number;
  /** RSS before the download and the highest sampled during it, in MiB. */
  rssBeforeMb: number;
  rssPeakMb: number;
  heartbeats: number;
  /** CPU time (user + system) the download took, in seconds. */
  cpuSeconds: number;
  /** Of which system time (the kernel's share: socket reads, file writes), in seconds. */
  systemSeconds: number;
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]) as ChildInput;
  // As the worker does: the proxy and the CA of the environment (`bench:download --proxy`, `--tls`).
  applyNetworkSettings();
  const download = archiveDownloader({ github: createGithubClient({ baseUrl: input.apiUrl, token: () => input.token }), dataDir: input.dataDir });
  const meter = await startMeasuring(input.startOnGo);
  let heartbeats = 0;
  const result = await download({ org: input.org, migrationId: input.migrationId, path: input.path }, { heartbeat: () => heartbeats++ });
  const out: ChildResult = { ...meter.stop(), bytes: result.bytes, sha256: result.sha256, resumedFrom: result.resumedFrom, fetchedBytes: result.fetchedBytes, heartbeats };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
