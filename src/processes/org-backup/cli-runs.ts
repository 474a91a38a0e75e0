/**
 * What `backup status` and `backup verify` read from the store, on the operator's machine with the same SDK
 * settings as the workers (AWS_*, Application Default Credentials, AZURE_STORAGE_*): the run folders of an
 * organization, each complete (a manifest) or not, and a run's archives read back and checked.
 */
import { createHash } from 'node:crypto';
import { parseDestination } from '../../archive/object-store/destination';
import type { objectsFor as ObjectsFor } from '../../archive/object-store/objects';
import { MANIFEST, orgFolderUrl, stampTime, type Manifest } from './model';

export interface RunFolder {
  /** The folder's name, the run's start (`20261128T102917Z`). */
  stamp: string;
  url: string;
  startedAt: number;
  /** The manifest, for a complete run; absent: incomplete (in progress, or killed). */
  manifest?: Manifest;
}

/** The stores' clients, loaded when a command reads a store: not by every `longhaul` command (cli-startup.test.ts). */
const objectsFor = async (...args: Parameters<typeof ObjectsFor>) => (await import('../../archive/object-store/objects')).objectsFor(...args);

/** Every run folder of `org` under `archiveTo`, newest first, each with its manifest when it has one. */
export async function readRuns(archiveTo: string, org: string, env: NodeJS.ProcessEnv = process.env): Promise<RunFolder[]> {
  const destination = parseDestination(orgFolderUrl(archiveTo, org), '--archive-to');
  const objects = await objectsFor(destination, env);
  const runs: RunFolder[] = [];
  for (const prefix of (await objects.list(destination.prefix, '/')).prefixes) {
    const stamp = prefix.slice(destination.prefix.length).replace(/\/$/, '');
    const startedAt = stampTime(stamp);
    if (startedAt === undefined) continue;
    const body = await objects.get(`${prefix}${MANIFEST}`);
    runs.push({ stamp, url: objects.url(prefix), startedAt, ...(body ? { manifest: JSON.parse(body.toString('utf8')) as Manifest } : {}) });
  }
  return runs.sort((a, b) => b.startedAt - a.startedAt);
}

export interface VerifiedArchive {
  archive: string;
  expected: { sha256: string; bytes: number };
  found?: { sha256: string; bytes: number };
  ok: boolean;
  repositories: number;
}

/** Reads each archive of the manifest back from the store and checks its size and SHA-256. */
export async function verifyRun(run: RunFolder, env: NodeJS.ProcessEnv = process.env): Promise<VerifiedArchive[]> {
  if (!run.manifest) return [];
  const out: VerifiedArchive[] = [];
  for (const e of run.manifest.exports) {
    const destination = parseDestination(e.archive, 'archive');
    const objects = await objectsFor(destination, env);
    const body = await objects.read(destination.prefix.replace(/\/$/, ''));
    let found: { sha256: string; bytes: number } | undefined;
    if (body) {
      const hash = createHash('sha256');
      let bytes = 0;
      for await (const chunk of body) {
        hash.update(chunk);
        bytes += chunk.length;
      }
      found = { sha256: hash.digest('hex'), bytes };
    }
    out.push({ archive: e.archive, expected: { sha256: e.sha256, bytes: e.bytes }, ...(found ? { found } : {}), ok: found?.sha256 === e.sha256 && found.bytes === e.bytes, repositories: e.repositories });
  }
  return out;
}
