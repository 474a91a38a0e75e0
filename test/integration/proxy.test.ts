/**
 * Behind a corporate proxy (issue 41): worker PROCESSES configured with the standard variables only reach their
 * origins through a real forward proxy (`forward-proxy.ts`: the `proxy` package in a process of its own, its
 * outgoing connections leaving from 127.0.0.2). Every origin sits behind a gate that accepts connections from
 * 127.0.0.2 only and closes any other unanswered, counting it: a connection that bypassed the proxy is refused
 * and counted, one that used it is in the proxy's log.
 *
 * - A migration into S3 (versitygw) with TLS-inspected origins: the GitHub API, the storage origin and the S3
 *   endpoint answer https with certificates of the test's own CA, which the workers trust only through
 *   `LONGHAUL_CA_FILE`; the proxy wants credentials, given in a file (`HTTPS_PROXY_FILE`). The host uploading is
 *   SIGKILLed once the server holds a checkpoint past the first part; the other host continues from it. The
 *   object is byte-identical, and the credentials are in no log line.
 * - An API-key deletion (Google) and a feed poll into an HTTP sink, over http, the credentials in `HTTP_PROXY`;
 *   `longhaul doctor --reach` with the same settings.
 * - Uploads into GCS (fake-gcs-server) and Azure (Azurite) from a process given only the standard variables: their
 *   SDKs read the proxy from the environment the worker's start-up normalised.
 * - The archive transport in-process: http through the proxy as an absolute-form request, `NO_PROXY` sending a
 *   host direct (so the gate refuses it), and the outbound policy refusing a metadata address before the proxy is
 *   asked anything.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSinkReceiver } from '../../src/emulator/sink/receiver';
import { TokenlessClient } from '../../src/http/tokenless';
import { readHead } from '../../src/http/download';
import { FailureType } from '../../src/http/retry-policy';
import { startFakeGcs, startVersitygw } from '../../src/object-store/servers/run';
import type { ArchiveDownload } from '../../src/processes/org-migration/activities/archive-download';
import type { UploadProgress } from '../../src/processes/org-migration/activities/archive-upload';
import { orgMigration } from '../../src/processes/org-migration/workflow';
import { feedPollRun } from '../../src/processes/feed-poll/workflow';
import { feedCursorWorkflowId } from '../../src/processes/feed-poll/model';
import { apiKeyDelete } from '../../src/processes/google-operation/apikey-delete';
import { TEST_TOKEN } from '../helpers/emulator';
import { useFleetTeardown } from '../helpers/fleet';
import { startForwardProxy, startProxyOnlyGate, type ProxyOnlyGate } from '../helpers/forward-proxy';
import { activityResults, githubHostEnv, hostOf, runningActivities, startHosts } from '../helpers/multi-host';
import { archiveSha256, createBucket, envThrough, openUploads, readBack, startArchiveServer, STARTERS } from '../helpers/object-stores';
import { FAST_POLL, FAST_POLL_5_MIN } from '../helpers/presets';
import { waitFor } from '../helpers/wait';
import { startWorkerProcess } from '../helpers/worker-process';
import { runLonghaul } from '../helpers/starter';
import type { DoctorReport } from '../../src/cli/doctor';

const fleet = useFleetTeardown();

const MiB = 1024 * 1024;
const PART_MIB = 5;
const PART = PART_MIB * MiB;
const ARCHIVE_BYTES = 3 * PART + MiB;
const BUCKET = 'proxied-archives';
const PROXY_USER = 'egress';
/** Built at run time: a password-shaped literal in the source is not what the test is about. */
const PROXY_PASSWORD = `pw-${randomUUID()}`;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The standard variables cleared, so the test's own environment cannot change the way out. */
const NO_INHERITED_PROXY = { HTTPS_PROXY: '', https_proxy: '', HTTP_PROXY: '', http_proxy: '', NO_PROXY: '', no_proxy: '', NODE_EXTRA_CA_CERTS: '' };

/** A port known once its server listens, for a gate that starts before it. */
function laterPort(): { get: () => number; set: (url: string) => void } {
  let port = 0;
  return { get: () => port, set: (url) => void (port = Number(new URL(url).port)) };
}

async function gate(port: () => number, tls?: { certFile: string; keyFile: string }): Promise<ProxyOnlyGate> {
  const g = await startProxyOnlyGate(port, tls);
  fleet.closeLater(() => g.close());
  return g;
}

/** Every gate was reached, and only through the proxy. */
function expectOnlyThroughProxy(gates: Record<string, ProxyOnlyGate>, targets: Set<string>): void {
  for (const [name, g] of Object.entries(gates)) {
    expect(g.refused(), `connections to ${name} that bypassed the proxy`).toBe(0);
    expect(g.accepted(), `connections to ${name} through the proxy`).toBeGreaterThan(0);
    expect(targets.has(g.host), `${name} (${g.host}) in the proxy's log`).toBe(true);
  }
}

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
    await writeFile(proxyFile, proxy.url.replace('//', `//${PROXY_USER}:${PROXY_PASSWORD}@`), { mode: 0o600 });

    const s3 = await startVersitygw();
    fleet.closeLater(() => s3.stop());
    await createBucket('s3', s3.env, BUCKET);
    const api = laterPort();
    const storage = laterPort();
    const gates = { api: await gate(api.get, tls), storage: await gate(storage.get, tls), s3: await gate(() => s3.port, tls) };
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

  it('runs an API-key deletion and a feed poll into an HTTP sink through the proxy', async () => {
    const proxy = await startForwardProxy({ credentials: `${PROXY_USER}:${PROXY_PASSWORD}` });
    fleet.closeLater(() => proxy.close());
    const secret = `sink-${randomUUID()}`;
    const receiver = await startSinkReceiver({ secret });
    fleet.closeLater(() => receiver.close());
    const api = laterPort();
    const apikeys = laterPort();
    const gates = { api: await gate(api.get), apikeys: await gate(apikeys.get), sink: await gate(() => Number(new URL(receiver.url).port)) };
    const e = await fleet.emulator({ feeds: { eventsPerMinute: 0, initialEvents: 0, pollIntervalSeconds: 1 }, google: { apikeys: { deleteOperationMs: 500 } }, apiPublicUrl: gates.api.url });
    api.set(e.apiUrl);
    apikeys.set(e.serviceUrl('google-apikeys'));

    const taskQueue = `proxy-google-feed-${randomUUID()}`;
    const worker = await startWorkerProcess({
      ...NO_INHERITED_PROXY,
      ...githubHostEnv(gates.api.url, 'proxy-feed'),
      HTTP_PROXY: proxy.url.replace('//', `//${PROXY_USER}:${PROXY_PASSWORD}@`),
      GOOGLE_APIKEYS_URL: gates.apikeys.url,
      GOOGLE_ACCESS_TOKEN: TEST_TOKEN,
      LONGHAUL_GOOGLE_CREDENTIAL: `google-${randomUUID().slice(0, 8)}`,
      LONGHAUL_SINK_SECRETS: 'proxied',
      LONGHAUL_SINK_PROXIED_SECRET: secret,
      LONGHAUL_TASK_QUEUE: taskQueue,
      LONGHAUL_DATA_DIR: join(tmpdir(), `longhaul-proxy-${randomUUID().slice(0, 8)}`),
    });
    expect(worker.output()).toContain(`outbound: https via http://***@${new URL(proxy.url).host}, http via http://***@${new URL(proxy.url).host}`);
    const client = await fleet.client();

    const name = 'projects/demo-project/locations/global/keys/demo-key-1';
    const deletion = fleet.track(await client.workflow.start(apiKeyDelete, { taskQueue, workflowId: `proxy-apikey-${randomUUID()}`, args: [{ name, poll: FAST_POLL_5_MIN }] }));
    const feed = '/repos/octo-org/alpha/events';
    e.feeds.ensure(feed);
    e.feeds.burst(feed, 150);
    fleet.track(client.workflow.getHandle(feedCursorWorkflowId(feed)));
    const poll = fleet.track(
      await client.workflow.start(feedPollRun, {
        taskQueue,
        workflowId: `proxy-feed-${randomUUID()}`,
        args: [{ feed, sink: { kind: 'http', url: `${gates.sink.url}/events`, secret: 'proxied' }, origin: 'manual' }],
      }),
    );
    await deletion.result();
    const outcome = await poll.result();
    expect(outcome).toMatchObject({ kind: 'delivered', delivered: 150, pages: 2 });
    expect(receiver.eventIds(feed)).toEqual(e.feeds.produced(feed).map((ev) => String(ev.id)));

    // `longhaul doctor --reach` with the worker's settings: each destination, the proxy in effect, its answer.
    const proxied = proxy.url.replace('//', `//${PROXY_USER}:${PROXY_PASSWORD}@`);
    const googleUrls = { GOOGLE_APIKEYS_URL: gates.apikeys.url, GOOGLE_LOGGING_URL: gates.apikeys.url, GOOGLE_DNS_URL: gates.apikeys.url };
    const doctor = await runLonghaul(['doctor', '--json', '--reach'], taskQueue, { ...NO_INHERITED_PROXY, HTTP_PROXY: proxied, GITHUB_API_URL: gates.api.url, GITHUB_TOKEN: TEST_TOKEN, ...googleUrls });
    const shown = `http://***@${new URL(proxy.url).host}`;
    expect((JSON.parse(doctor.stdout) as DoctorReport).outbound?.destinations).toEqual([
      { name: 'github github', url: gates.api.url, via: shown, reachable: true, answer: expect.stringMatching(/^HTTP \d{3}$/) as unknown },
      ...['apikeys', 'logging', 'dns'].map((api) => ({ name: `google-${api}`, url: gates.apikeys.url, via: shown, reachable: true, answer: expect.stringMatching(/^HTTP \d{3}$/) as unknown })),
    ]);
    expect(doctor.stdout + doctor.stderr).not.toContain(PROXY_PASSWORD);

    expectOnlyThroughProxy(gates, proxy.targets());
    expect(proxy.events().filter((ev) => ev.kind === 'refused')).toEqual([]);
    expect(worker.output()).not.toContain(PROXY_PASSWORD);
    console.info(`[proxy google+feed] ${proxy.events().length} proxy connections (api ${gates.api.accepted()}, apikeys ${gates.apikeys.accepted()}, sink ${gates.sink.accepted()}); direct connections refused: 0`);
  }, 180_000);

  it.each(['gs', 'azblob'] as const)('uploads an archive into %s through the proxy its SDK reads from the environment', async (kind) => {
    const proxy = await startForwardProxy({ credentials: `${PROXY_USER}:${PROXY_PASSWORD}` });
    fleet.closeLater(() => proxy.close());
    const port = laterPort();
    const front = await gate(port.get);
    // fake-gcs-server's resumable session URIs name the gate, so the chunks go through the proxy too.
    const server = kind === 'gs' ? await startFakeGcs({ publicPort: Number(new URL(front.url).port) }) : await STARTERS[kind]();
    fleet.closeLater(() => server.stop());
    port.set(server.endpoint);
    const direct = envThrough(kind, server, server.endpoint);
    await createBucket(kind, direct, BUCKET);
    const size = 2 * PART + 4321;
    const source = await startArchiveServer(size);
    fleet.closeLater(source.close);
    const proxied = proxy.url.replace('//', `//${PROXY_USER}:${PROXY_PASSWORD}@`);
    const input = { destination: `${kind}://${BUCKET}/proxied/`, name: 'through.tar.gz', size, sourceUrl: source.url, partBytes: PART, partsInFlight: 2, env: envThrough(kind, server, front.url) };
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'helpers', 'upload-child.ts'), JSON.stringify(input)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...NO_INHERITED_PROXY, HTTPS_PROXY: proxied, HTTP_PROXY: proxied },
    });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code, output).toBe(0);
    const expected = archiveSha256(size);
    expect(await readBack(kind, direct, BUCKET, 'proxied/through.tar.gz')).toEqual({ bytes: size, sha256: expected, metadataSha256: expected });
    expectOnlyThroughProxy({ [kind]: front }, proxy.targets());
    expect(proxy.events().filter((ev) => ev.kind === 'refused')).toEqual([]);
    expect(output).not.toContain(PROXY_PASSWORD);
  }, 120_000);

  it('sends the archive transport through the proxy (absolute-form http), direct for NO_PROXY, and refuses a metadata address before asking the proxy', async () => {
    const proxy = await startForwardProxy();
    fleet.closeLater(() => proxy.close());
    const e = await fleet.emulator();
    const origin = await gate(() => Number(new URL(e.storage.baseUrl).port));
    const settings = { httpProxy: new URL(proxy.url), httpsProxy: new URL(proxy.url), noProxy: '' };
    const outbound = () => ({ api: { protocol: 'http:', addresses: ['127.0.0.1'] }, allowedHosts: [] });
    const storage = (noProxy = '') => new TokenlessClient({ api: 'storage', route: '/archive', outbound, network: { ...settings, noProxy } });

    // An unsigned link: the storage origin's refusal (403) is an answer that came through the proxy.
    const res = await storage().get(new URL(`${origin.url}/no-such-archive`));
    expect(res.statusCode).toBe(403);
    await readHead(res.body);
    expect(proxy.events()).toEqual([{ kind: 'request', target: `${origin.url}/no-such-archive` }]);
    expect(origin.refused()).toBe(0);

    // NO_PROXY names the origin: the transport goes direct, and the gate closes the connection.
    await expect(storage(origin.host).get(new URL(`${origin.url}/direct`))).rejects.toThrow();
    expect(origin.refused()).toBe(1);

    // The policy is applied before the proxy is asked: a link-local address is refused, and the proxy sees nothing.
    await expect(storage().get(new URL('http://169.254.169.254/latest/meta-data/'))).rejects.toMatchObject({ type: FailureType.OutboundRefused });
    expect(proxy.events()).toHaveLength(1);
  }, 60_000);
});
