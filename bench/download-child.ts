/**
 * One archive download in a process of its own (for bench:download and the SIGKILL test): the same code
 * the `downloadArchive` activity runs, without a Temporal worker around it, so its time, CPU and RSS are
 * the download's. Input: a JSON argument; output: one JSON line on stdout.
 */
import { join } from 'node:path';
import type { archiveDownloader as Downloader, ArchiveDownloadInput } from '../src/processes/org-migration/activities/archive';
import type { UploadProgress } from '../src/archive/to-store';
import type { createGithubClient as GithubClient } from '../src/http/github';
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
  /** The killed attempt's last heartbeat details (what Temporal would hand the next attempt). */
  previous?: UploadProgress;
  /** Print each heartbeat's details as a line `beat {…}` (the parent keeps the last one of a killed attempt). */
  printBeats?: boolean;
  /**
   * Another release's source tree (its `src/`), whose download code runs instead of this checkout's: bench:download
   * runs the release before a change beside it (`--before`).
   */
  codeRoot?: string;
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
  /** The last heartbeat's details (with the `resume` report of an attempt that resumed). */
  lastBeat?: UploadProgress;
  /** CPU time (user + system) the download took, in seconds. */
  cpuSeconds: number;
  /** Of which system time (the kernel's share: socket reads, file writes), in seconds. */
  systemSeconds: number;
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]) as ChildInput;
  // As the worker does: the proxy and the CA of the environment (`bench:download --proxy`, `--tls`).
  applyNetworkSettings();
  const root = input.codeRoot ?? join(__dirname, '..');
  // The activity's file since the archive module (0.5.0); a baseline checkout of an earlier release has the old one.
  const activity = await import(join(root, 'src/processes/org-migration/activities/archive')).catch(() => import(join(root, 'src/processes/org-migration/activities/archive-download')));
  const { archiveDownloader } = activity as { archiveDownloader: typeof Downloader };
  const { createGithubClient } = (await import(join(root, 'src/http/github'))) as { createGithubClient: typeof GithubClient };
  const download = archiveDownloader({ github: createGithubClient({ baseUrl: input.apiUrl, token: () => input.token }), dataDir: input.dataDir });
  const meter = await startMeasuring(input.startOnGo);
  let heartbeats = 0;
  let lastBeat: UploadProgress | undefined;
  const heartbeat = (details: UploadProgress) => {
    heartbeats++;
    lastBeat = details;
    if (input.printBeats) process.stdout.write(`beat ${JSON.stringify(details)}\n`);
  };
  const result = await download({ org: input.org, migrationId: input.migrationId, path: input.path }, { heartbeat, previous: input.previous });
  const out: ChildResult = { ...meter.stop(), bytes: result.bytes, sha256: result.sha256, resumedFrom: result.resumedFrom, fetchedBytes: result.fetchedBytes, heartbeats, lastBeat };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
