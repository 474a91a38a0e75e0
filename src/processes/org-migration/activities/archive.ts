/**
 * `downloadArchive`, the migration's activity: asks the API where the archive is (`GET …/archive`, a 302 to a
 * pre-signed storage URL) and hands the transfer to the archive module (`src/archive/`), which keeps the bytes:
 * to disk, resumable, or into an object store. The module asks this again for a fresh URL when storage refuses
 * one or sends something that is not the archive.
 */
import { Context } from '@temporalio/activity';
import { githubFor, type ActivityDeps } from '../../../activities/context';
import { outboundContext } from '../../../http/outbound-policy';
import { storageDownloader, type ArchiveDownload, type DownloadHooks, type UploadProgress } from '../../../archive';
import { checkLocation } from '../../../archive/storage/checks';
import { storageFailure } from '../../../archive/storage/failures';

export type { ArchiveDownload } from '../../../archive';

export interface ArchiveDownloadInput {
  org: string;
  migrationId: number;
  /** Destination file; relative paths resolve under the worker's data directory. */
  path: string;
  /**
   * An object-store destination (`s3://…`, `gs://…`, `azblob://…`): the archive streams there, named as `path`'s
   * file name, instead of to `path`. Absent: the worker's `LONGHAUL_ARCHIVE_TO`, else the local file.
   */
  archiveTo?: string;
}

const enc = encodeURIComponent;

export function createArchiveDownload(deps: ActivityDeps) {
  const download = archiveDownloader(deps);
  return async function downloadArchive(input: ArchiveDownloadInput): Promise<ArchiveDownload> {
    const ctx = Context.current();
    return download(input, { heartbeat: (p) => ctx.heartbeat(p), signal: ctx.cancellationSignal, previous: ctx.info.heartbeatDetails as UploadProgress | undefined });
  };
}

/** The download without the activity context (benchmarks run it in a plain process). */
export function archiveDownloader(deps: Pick<ActivityDeps, 'github' | 'githubClients' | 'dataDir' | 'archiveUpload'> & Partial<Pick<ActivityDeps, 'clock' | 'sleep' | 'outbound'>>) {
  // Where the API's answer points passes the outbound policy, judged against that API's own origin.
  const resolve = deps.outbound?.resolve;
  const outbound = () => outboundContext(githubFor(deps).baseUrl, deps.outbound?.allowedHosts ?? [], resolve);
  const transfer = storageDownloader({ dataDir: deps.dataDir, archiveUpload: deps.archiveUpload, clock: deps.clock, sleep: deps.sleep, outbound, resolve });
  const archiveUrl = async (input: ArchiveDownloadInput): Promise<URL> => {
    const api = `/orgs/${enc(input.org)}/migrations/${input.migrationId}/archive`;
    const res = await githubFor(deps).request({ method: 'GET', path: api, redirect: 'manual' }).catch((err: unknown) => {
      // The API client resolves the Location itself; an unparsable one surfaces as Node's ERR_INVALID_URL.
      if ((err as NodeJS.ErrnoException).code === 'ERR_INVALID_URL') {
        throw storageFailure('archive', 'LocationUnusable', `GET ${api} redirected to a Location that is not a URL (${(err as { input?: string }).input ?? 'unreadable'})`);
      }
      throw err;
    });
    if (res.status < 300 || res.status >= 400) {
      throw storageFailure('http', 'UnexpectedResponse', `GET ${api} answered ${res.status} instead of redirecting to the archive`);
    }
    return checkLocation(res.location, undefined, `GET ${api}`);
  };
  return (input: ArchiveDownloadInput, hooks: DownloadHooks): Promise<ArchiveDownload> =>
    transfer({ source: `${input.org}/${input.migrationId}`, path: input.path, archiveTo: input.archiveTo, askApi: () => archiveUrl(input) }, hooks);
}
