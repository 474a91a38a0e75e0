/**
 * Org migrations into Google Cloud Storage (fake-gcs-server, `STORAGE_EMULATOR_HOST`) and Azure Blob Storage
 * (Azurite, `AZURE_STORAGE_CONNECTION_STRING`) through the real workflow and the real worker, run as two worker
 * PROCESSES ("hosts") with separate data directories, the store reached through a byte-counting relay. The
 * workers cut archives as `LONGHAUL_ARCHIVE_PART_MIB=5` and `LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT=2` tell them.
 *
 * - Two migrations stream their archives into the store: each object read back, its SHA-256 checked (and the
 *   one recorded in its metadata), nothing left open (no GCS session file, no uncommitted Azure block).
 * - A third is slowed down at the storage origin, and the host uploading it is SIGKILLed once the origin has
 *   served a third of the archive and the server holds a checkpoint past the first part. The other host's
 *   attempt continues from that checkpoint: the object is complete and byte-identical, the store received the
 *   archive once plus at most the parts in flight at the kill (not from byte 0 again), and nothing is left open.
 */
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { StoreKind } from '../../src/archive/object-store';
import { startCountingProxy, type CountingProxy } from '../servers/counting-proxy';
import { startFakeGcs, type StoreServer } from '../servers/object-stores';
import type { ArchiveDownload } from '../../src/archive/download';
import type { UploadProgress } from '../../src/archive/to-store';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { freePort } from '../../src/temporal/dev-server';
import { useFleetTeardown } from '../helpers/fleet';
import { activityResults, hostOf, runningActivities, startHosts, githubHostEnv } from '../helpers/multi-host';
import { createBucket, envThrough, openUploads, readBack, STARTERS } from '../helpers/object-stores';
import { FAST_POLL } from '../helpers/presets';
import { waitFor } from '../helpers/wait';

// One fleet for both cases (below): started once, torn down after the file.
const fleet = useFleetTeardown({ scope: 'file' });

const MiB = 1024 * 1024;
/** The workers' settings: the smallest part every store takes, two in flight. */
const PART_MIB = 5;
const PART = PART_MIB * MiB;
const PARTS_IN_FLIGHT = 2;
/** Five parts, the last one 1 MiB. */
const ARCHIVE_BYTES = 4 * PART + MiB;
/** The slowed origin: the archive takes 7 s, so the kill lands mid-transfer. */
const SLOW_BYTES_PER_SECOND = 3 * MiB;
const BUCKET = 'fleet-archives';
/**
 * The download's heartbeat timeout (the input's `downloadHeartbeatTimeoutMs`; 30 s by default): how long after the
 * kill the other host takes over. Its length is not what this test is about.
 */
const HEARTBEAT_TIMEOUT_MS = 10_000;
const KINDS: StoreKind[] = ['gs', 'azblob'];

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

interface Store {
  server: StoreServer;
  relay: CountingProxy;
}

/**
 * Both stores (each behind its relay), the emulator and the two hosts, started once for the file: every host has
 * both stores' settings, and each case's `archiveTo` picks one. Worker processes and Azurite are the slow starts
 * of this file; the cases need nothing of their own from them (a case counts its bytes from what they were before
 * it, and a host the first case killed is started again, on its own data directory, for the second).
 */
async function startFleet() {
  // GCS session URIs name the relay, so that the chunks (not only the API calls) pass through it.
  const gsRelayPort = await freePort();
  const [gs, azblob, e] = await Promise.all([startFakeGcs({ publicPort: gsRelayPort }), STARTERS.azblob(), fleet.emulator({ migrations: { exportMs: 300, archiveBytes: ARCHIVE_BYTES } })]);
  for (const server of [gs, azblob]) fleet.closeLater(() => server.destroy());
  const [gsRelay, azblobRelay] = await Promise.all([startCountingProxy(gs.port, gsRelayPort), startCountingProxy(azblob.port)]);
  for (const relay of [gsRelay, azblobRelay]) fleet.closeLater(() => relay.close());
  const stores: Record<string, Store> = { gs: { server: gs, relay: gsRelay }, azblob: { server: azblob, relay: azblobRelay } };
  const storeEnv = (kind: StoreKind) => envThrough(kind, stores[kind].server, stores[kind].relay.endpoint);
  await Promise.all(KINDS.map((kind) => createBucket(kind, storeEnv(kind), BUCKET)));
  const client = await fleet.client();
  const taskQueue = `archive-stores-${randomUUID()}`;
  const hosts = await startHosts(fleet, 2, {
    taskQueue,
    env: {
      ...githubHostEnv(e.apiUrl, 'archives'),
      LONGHAUL_ARCHIVE_PART_MIB: String(PART_MIB),
      LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT: String(PARTS_IN_FLIGHT),
      ...storeEnv('gs'),
      ...storeEnv('azblob'),
    },
  });
  return { e, client, taskQueue, hosts, stores };
}
let started: ReturnType<typeof startFleet> | undefined;

describe.each(KINDS)('org migrations into %s on two worker processes', (kind) => {
  it('streams each archive into the store, and continues from its checkpoint on the other host an upload whose worker was SIGKILLed', async () => {
    const began = Date.now();
    const phases: string[] = [];
    const phase = (what: string) => phases.push(`${what} ${((Date.now() - began) / 1000).toFixed(1)} s`);
    const { e, client, taskQueue, hosts, stores } = await (started ??= startFleet());
    const { server, relay } = stores[kind];
    phase('fleet up');
    // A host the case before killed starts again meanwhile; the two archives at full speed need only one.
    const restarted = Promise.all(hosts.filter((h) => !h.alive()).map((h) => h.restart()));
    restarted.catch(() => undefined);
    const migrate = (repo: string) =>
      client.workflow.start(orgMigration, {
        taskQueue,
        workflowId: `archive-${kind}-${repo}-${randomUUID()}`,
        args: [{ org: 'octo-org', repositories: [repo], poll: FAST_POLL, archiveTo: `${kind}://${BUCKET}/exports/`, downloadHeartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS }],
      });
    const checkObject = async (migrationId: number, archive: { url?: string; sha256: string; bytes: number }) => {
      const key = `exports/octo-org-migration-${migrationId}.tar.gz`;
      const expected = sha256(e.migrations.archiveBytes(migrationId)!);
      expect(archive).toMatchObject({ url: `${kind}://${BUCKET}/${key}`, bytes: ARCHIVE_BYTES, sha256: expected });
      expect(await readBack(kind, server.env, BUCKET, key)).toEqual({ bytes: ARCHIVE_BYTES, sha256: expected, metadataSha256: expected });
      expect(await openUploads(kind, server.env, BUCKET, key)).toBe(0);
    };

    // Two archives at full speed.
    const sentBeforeHappy = relay.sentBytes();
    const happy = await Promise.all(['alpha', 'beta'].map(async (repo) => (await migrate(repo)).result()));
    await restarted;
    phase('two archives stored');
    for (const result of happy) await checkObject(result.migrationId, result.archive);
    phase('checked');
    const sentHappy = relay.sentBytes() - sentBeforeHappy;
    expect(sentHappy).toBeGreaterThanOrEqual(2 * ARCHIVE_BYTES);
    expect(sentHappy).toBeLessThan(2 * ARCHIVE_BYTES + MiB);

    // The third, slowed, and its uploading host killed mid-transfer.
    e.storage.bytesPerSecond = SLOW_BYTES_PER_SECOND;
    const servedBefore = e.stats.storage.bytesServed;
    const sentBefore = relay.sentBytes();
    const handle = fleet.track(await migrate('gamma'));
    await waitFor('the origin to serve a third of the archive', () => e.stats.storage.bytesServed - servedBefore, (n) => n >= ARCHIVE_BYTES / 3, 120_000, 20);
    // What another host would continue from: the checkpoint the server holds (the last heartbeat it received).
    const running = await waitFor(
      'the server to hold a checkpoint past the first part',
      async () => (await runningActivities(handle)).find((a) => a.activity === 'downloadArchive'),
      (a) => ((a?.heartbeat as UploadProgress | undefined)?.upload?.offset ?? 0) >= PART,
      30_000,
      20,
    );
    const victim = hostOf(hosts, running!.identity);
    expect(victim, `the host running the upload (${running!.identity})`).toBeDefined();
    const servedAtKill = e.stats.storage.bytesServed - servedBefore;
    const sentAtKill = relay.sentBytes() - sentBefore;
    const checkpoint = (running!.heartbeat as UploadProgress).upload!;
    await victim!.kill();
    const killedAt = Date.now();
    phase('killed');
    const servedToVictim = e.stats.storage.bytesServed - servedBefore;
    expect(servedToVictim).toBeLessThan(ARCHIVE_BYTES);
    expect(checkpoint.offset).toBeLessThan(ARCHIVE_BYTES);
    if (kind === 'gs') {
      // GCS's resume trusts the checkpoint (`stores/gcs.ts`): the chunk after it cannot have been stored yet, as the
      // origin had not served all its bytes when the host died.
      expect(servedToVictim, 'served when the host died').toBeLessThan(checkpoint.offset + PART);
    }
    // The rest at full speed: the point is what is read and sent again, not how long it takes.
    e.storage.bytesPerSecond = 0;

    const result = await handle.result();
    const tookOverMs = Date.now() - killedAt;
    await checkObject(result.migrationId, result.archive);
    // The other host finished it, in the second attempt (the first timed out on its heartbeat), from the checkpoint.
    const [finished] = await activityResults(handle, 'downloadArchive');
    const download = finished.result as ArchiveDownload;
    const survivor = hosts.find((h) => h !== victim)!;
    expect(survivor.owns(finished.identity), `finished by ${finished.identity}`).toBe(true);
    expect(finished.attempt).toBe(2);
    expect(download.resumedFrom).toBe(checkpoint.offset);
    expect(download.fetchedBytes).toBe(ARCHIVE_BYTES - checkpoint.offset);
    // Sent to the store: the archive once, plus what was in flight past the checkpoint when the host died (at most
    // the parts in flight; GCS one) and the requests' framing. From byte 0 again it would be twice the archive.
    const sent = relay.sentBytes() - sentBefore;
    const inFlight = kind === 'gs' ? 1 : PARTS_IN_FLIGHT;
    expect(sent).toBeGreaterThanOrEqual(ARCHIVE_BYTES);
    expect(sent - ARCHIVE_BYTES).toBeLessThanOrEqual(inFlight * PART + MiB);
    // Read twice from the origin: only what the killed host had read past the checkpoint. The next attempt asked
    // storage for the rest from the checkpoint's offset at once (Range, If-Range with the checkpoint's validator).
    const served = e.stats.storage.bytesServed - servedBefore;
    expect(served - ARCHIVE_BYTES).toBeGreaterThanOrEqual(0);
    expect(served - ARCHIVE_BYTES).toBeLessThanOrEqual(servedToVictim - checkpoint.offset + MiB);
    console.info(
      `[archive ${kind}] ${ARCHIVE_BYTES} B in ${PART_MIB} MiB parts, ${inFlight} in flight; ${victim!.name} killed at ${servedAtKill} B served (${servedToVictim} B when it was gone) ` +
        `(${sentAtKill} B sent to the store), the server's checkpoint at ${checkpoint.offset} B; ${survivor.name} took over and finished ` +
        `${(tookOverMs / 1000).toFixed(1)} s after the kill; the origin served ${served} B (${((100 * (served - ARCHIVE_BYTES)) / ARCHIVE_BYTES).toFixed(1)} % again), ` +
        `the store received ${sent} B (${(sent / ARCHIVE_BYTES).toFixed(2)} × the archive); ${phases.join(', ')}, checked ${((Date.now() - began) / 1000).toFixed(1)} s`,
    );
  });
});
