/**
 * Behind a corporate proxy (issue 41), the migration: two worker PROCESSES configured with the standard variables
 * only reach their origins through a real forward proxy (`forward-proxy.ts`: the `proxy` package in a process of
 * its own, its outgoing connections leaving from 127.0.0.2). Every origin sits behind a gate that accepts
 * connections from 127.0.0.2 only and closes any other unanswered, counting it: a connection that bypassed the
 * proxy is refused and counted, one that used it is in the proxy's log.
 *
 * A migration into S3 (versitygw) with TLS-inspected origins: the GitHub API, the storage origin and the S3 endpoint
 * answer https with certificates of the test's own CA, which the workers trust only through `LONGHAUL_CA_FILE`; the
 * proxy wants credentials, given in a file (`HTTPS_PROXY_FILE`). The host uploading is SIGKILLed once the server
 * holds a checkpoint past the first part; the other host continues from it. The object is byte-identical, and the
 * credentials are in no log line. The rest: `proxy.test.ts`.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startVersitygw } from '../servers/object-stores';
import type { ArchiveDownload } from '../../src/archive/download';
import type { UploadProgress } from '../../src/archive/to-store';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { useFleetTeardown } from '../helpers/fleet';
import { laterPort, NO_INHERITED_PROXY, PROXY_PASSWORD, PROXY_USER, startForwardProxy, withCredentials } from '../helpers/forward-proxy';
import { expectOnlyThroughProxy, gateClosedLater } from '../helpers/forward-proxy-checks';
import { activityResults, githubHostEnv, hostOf, runningActivities, startHosts } from '../helpers/multi-host';
import { createBucket, openUploads, readBack } from '../helpers/object-stores';
import { FAST_POLL } from '../helpers/presets';
import { waitFor } from '../helpers/wait';

const fleet = useFleetTeardown();

const MiB = 1024 * 1024;
const PART_MIB = 5;
const PART = PART_MIB * MiB;
const ARCHIVE_BYTES = 3 * PART + MiB;
const BUCKET = 'proxied-archives';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('behind a forward proxy, direct connections refused', () => {
  it('migrates into S3 over TLS-inspected origins through the proxy, and continues from the checkpoint after a SIGKILL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'longhaul-proxy-'));
    fleet.closeLater(() => rm(dir, { recursive: true, force: true }));
    // The company's CA and the origins' certificate (for 127.0.0.1), as `scripts/make-certs.sh` makes them.
    execFileSync('sh', [join(__dirname, '..', '..', 'scripts', 'make-certs.sh'), join(dir, 'tls')], { stdio: 'ignore' });
    const tls = { certFile: join(dir, 'tls', 'frontend.pem'), keyFile: join(dir, 'tls', 'frontend-key.pem') };
    const proxyFile = join(dir, 'proxy-url');
    const proxy = await startForwardProxy({ credentials: `${PROXY_USER}:${PROXY_PASSWORD}` });
    fleet.closeLater(() => proxy.close());
    await writeFile(proxyFile, withCredentials(proxy), { mode: 0o600 });

    const s3 = await startVersitygw();
    fleet.closeLater(() => s3.stop());
    await createBucket('s3', s3.env, BUCKET);
    const api = laterPort();
    const storage = laterPort();
    const gates = { api: await gateClosedLater(fleet, api.get, tls), storage: await gateClosedLater(fleet, storage.get, tls), s3: await gateClosedLater(fleet, () => s3.port, tls) };
    const e = await fleet.emulator({ migrations: { exportMs: 300, archiveBytes: ARCHIVE_BYTES }, apiPublicUrl: gates.api.url, storagePublicUrl: gates.storage.url });
    api.set(e.apiUrl);
    storage.set(e.storage.baseUrl);

    const client = await fleet.client();
    const taskQueue = `proxy-s3-${randomUUID()}`;
    const hosts = await startHosts(fleet, 2, {
      taskQueue,
      env: {
        ...NO_INHERITED_PROXY,
        ...githubHostEnv(gates.api.url, 'proxy'),
        ...s3.env,
        AWS_ENDPOINT_URL_S3: gates.s3.url,
        HTTPS_PROXY_FILE: proxyFile,
        LONGHAUL_CA_FILE: join(dir, 'tls', 'ca.pem'),
        LONGHAUL_ARCHIVE_PART_MIB: String(PART_MIB),
        LONGHAUL_ARCHIVE_PARTS_IN_FLIGHT: '2',
      },
    });
    for (const h of hosts) expect(h.worker.output()).toContain(`outbound: https via http://***@${new URL(proxy.url).host}`);

    // Slowed, so the kill lands mid-transfer.
    e.storage.bytesPerSecond = 3 * MiB;
    const handle = fleet.track(
      await client.workflow.start(orgMigration, {
        taskQueue,
        workflowId: `proxy-s3-${randomUUID()}`,
        args: [{ org: 'octo-org', repositories: ['alpha'], poll: FAST_POLL, archiveTo: `s3://${BUCKET}/exports/` }],
      }),
    );
    const running = await waitFor(
      'the server to hold a checkpoint past the first part',
      async () => (await runningActivities(handle)).find((a) => a.activity === 'downloadArchive'),
      (a) => ((a?.heartbeat as UploadProgress | undefined)?.upload?.offset ?? 0) >= PART,
      120_000,
      20,
    );
    const victim = hostOf(hosts, running!.identity);
    expect(victim, `the host running the upload (${running!.identity})`).toBeDefined();
    const checkpoint = (running!.heartbeat as UploadProgress).upload!;
    await victim!.kill();
    e.storage.bytesPerSecond = 0;

    const result = await handle.result();
    const key = `exports/octo-org-migration-${result.migrationId}.tar.gz`;
    const expected = sha256(e.migrations.archiveBytes(result.migrationId)!);
    expect(result.archive).toMatchObject({ url: `s3://${BUCKET}/${key}`, bytes: ARCHIVE_BYTES, sha256: expected });
    // Read back directly (the test is no worker): byte-identical, nothing left open.
    expect(await readBack('s3', s3.env, BUCKET, key)).toEqual({ bytes: ARCHIVE_BYTES, sha256: expected, metadataSha256: expected });
    expect(await openUploads('s3', s3.env, BUCKET, key)).toBe(0);
    const [finished] = await activityResults(handle, 'downloadArchive');
    expect(hostOf(hosts, finished.identity)).not.toBe(victim);
    expect((finished.result as ArchiveDownload).resumedFrom).toBe(checkpoint.offset);

    // Every connection went through the proxy: tunnels (CONNECT) to the three origins, none refused, none direct.
    expectOnlyThroughProxy(gates, proxy.targets());
    expect(proxy.events().filter((ev) => ev.kind === 'refused')).toEqual([]);
    expect(proxy.events().every((ev) => ev.kind === 'connect')).toBe(true);
    for (const h of hosts) expect(h.worker.output()).not.toContain(PROXY_PASSWORD);
    console.info(
      `[proxy s3] ${ARCHIVE_BYTES} B through ${proxy.events().length} tunnels (api ${gates.api.accepted()}, storage ${gates.storage.accepted()}, s3 ${gates.s3.accepted()}); ` +
        `${victim!.name} killed at the checkpoint ${checkpoint.offset} B, resumed from it; direct connections refused: 0`,
    );
  }, 300_000);
});
